"""Translated pages keep step with their English page.

A page ``x.md`` may have a Simplified Chinese twin ``x.zh-CN.md`` beside it. The English page
is the source; the twin must have

* the same headings: as many, at the same levels, in the same order (a section added to the
  English page fails here until the translation has it too);
* the same code blocks: every block of the twin is, byte for byte, a block of the English
  page, except blocks marked ``<!-- translated -->`` on the line before their fence, which
  must hold Chinese text and stand in for English blocks with the same info string (as a
  multiset: each English block is either copied or replaced by exactly one marked block);
* links both ways: the English page links its twin in its first lines (``[简体中文](…)``)
  and the twin links back (``[English](…)``); ``docs/index.md`` lists every twin in docs/.

The rules are written down in CONTRIBUTING.md ("Translations").
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TWIN_SUFFIX = ".zh-CN.md"
TRANSLATED_MARK = "<!-- translated -->"
_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_HEADING = re.compile(r"^ {0,3}(?P<level>#{1,6})(?:[ \t]+(?P<text>.*?))?[ \t#]*$")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]")
_HEAD_LINES = 5  # the language link sits in the first lines of a page


@dataclass(frozen=True)
class Block:
    """One fenced code block: its info string, its text, and whether it is marked translated."""

    info: str
    body: str
    translated: bool
    line: int


@dataclass
class Page:
    headings: list[tuple[int, str]]
    blocks: list[Block]


def parse(text: str) -> Page:
    """Headings (level, text) outside code blocks, and the fenced code blocks, of Markdown."""
    headings: list[tuple[int, str]] = []
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            mark, info = fence.group("fence"), fence.group("info").strip()
            previous = next((p.strip() for p in reversed(lines[:i]) if p.strip()), "")
            body: list[str] = []
            start = i + 1
            i += 1
            while i < len(lines):
                close = re.match(r"^ {0,3}(`{3,}|~{3,})[ \t]*$", lines[i])
                if close and close.group(1)[0] == mark[0] and len(close.group(1)) >= len(mark):
                    break
                body.append(lines[i])
                i += 1
            blocks.append(Block(info, "\n".join(body), previous == TRANSLATED_MARK, start))
            i += 1
            continue
        heading = _HEADING.match(line)
        if heading:
            headings.append((len(heading.group("level")), heading.group("text") or ""))
        i += 1
    return Page(headings, blocks)


def heading_problems(english: Page, twin: Page) -> list[str]:
    """Why the twin's sections do not follow the English page's (empty when they do)."""
    want = [level for level, _text in english.headings]
    have = [level for level, _text in twin.headings]
    if want == have:
        return []
    problems = [f"{len(want)} headings in English, {len(have)} in the translation"]
    for n, (en, zh) in enumerate(zip(english.headings, twin.headings, strict=False), 1):
        if en[0] != zh[0]:
            problems.append(
                f"heading {n}: English {'#' * en[0]} {en[1]!r} vs translation "
                f"{'#' * zh[0]} {zh[1]!r}"
            )
            break
    else:
        extra = english.headings[len(twin.headings) :]
        problems += [f"missing: {'#' * level} {text}" for level, text in extra]
    return problems


def block_problems(english: Page, twin: Page) -> list[str]:
    """Why the twin's code blocks are not the English page's (empty when they are)."""
    problems: list[str] = []
    left = Counter((b.info, b.body) for b in english.blocks)
    for block in twin.blocks:
        if block.translated:
            if not _CJK.search(block.body):
                problems.append(
                    f"block at line {block.line} is marked {TRANSLATED_MARK} but holds no "
                    "Chinese: copy the English block instead"
                )
            continue
        key = (block.info, block.body)
        if left[key] > 0:
            left[key] -= 1
        else:
            first = block.body.splitlines()[0] if block.body else ""
            problems.append(
                f"block at line {block.line} ({block.info or 'no info'}: {first[:60]!r}) is "
                f"not a block of the English page (copy it, or mark it {TRANSLATED_MARK})"
            )
    unmatched = Counter({key: n for key, n in left.items() if n > 0})
    marked = Counter(b.info for b in twin.blocks if b.translated)
    unmatched_infos: Counter[str] = Counter()
    for (info, _body), n in unmatched.items():
        unmatched_infos[info] += n
    if unmatched_infos != marked:
        for (info, body), n in unmatched.items():
            first = body.splitlines()[0] if body else ""
            problems.append(
                f"English block ({info or 'no info'}: {first[:60]!r}) x{n} has no copy "
                "or translated counterpart in the translation"
            )
        if not unmatched:
            problems.append("more blocks are marked translated than English blocks are left")
    return problems


def twins() -> list[Path]:
    found = sorted(ROOT.glob(f"*{TWIN_SUFFIX}")) + sorted((ROOT / "docs").rglob(f"*{TWIN_SUFFIX}"))
    return found


def _english(twin: Path) -> Path:
    return twin.with_name(twin.name.removesuffix(TWIN_SUFFIX) + ".md")


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_there_are_translations() -> None:
    names = {_id(p) for p in twins()}
    assert "README.zh-CN.md" in names
    assert "docs/reference/cli.zh-CN.md" in names
    assert "docs/tutorial/getting-started.zh-CN.md" in names


@pytest.mark.parametrize("twin", twins(), ids=_id)
def test_translation_has_every_section_and_code_block(twin: Path) -> None:
    english_path = _english(twin)
    assert english_path.is_file(), f"{_id(twin)} has no English page {english_path.name}"
    english = parse(english_path.read_text(encoding="utf-8"))
    translated = parse(twin.read_text(encoding="utf-8"))
    problems = heading_problems(english, translated) + block_problems(english, translated)
    assert not problems, f"{_id(twin)} is behind {english_path.name}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("twin", twins(), ids=_id)
def test_pages_link_each_other(twin: Path) -> None:
    english_path = _english(twin)
    head = english_path.read_text(encoding="utf-8").splitlines()[:_HEAD_LINES]
    assert any(f"[简体中文]({twin.name})" in line for line in head), (
        f"{_id(english_path)} must link its translation in its first lines: [简体中文]({twin.name})"
    )
    twin_head = twin.read_text(encoding="utf-8").splitlines()[:_HEAD_LINES]
    assert any(f"[English]({english_path.name})" in line for line in twin_head), (
        f"{_id(twin)} must link back in its first lines: [English]({english_path.name})"
    )


def test_docs_index_lists_every_translation() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    for twin in (ROOT / "docs").rglob(f"*{TWIN_SUFFIX}"):
        link = str(twin.relative_to(ROOT / "docs"))
        assert f"]({link})" in index, f"docs/index.md does not list {link}"


# ---------------------------------------------------------------- the checker can fail
ENGLISH = """# Title

## Install

```console
$ pip install x
```

## Use

```python
print("hi")
```
"""


def test_a_new_english_section_is_reported() -> None:
    twin = ENGLISH.replace("## Use", "## 使用").replace("## Install", "## 安装")
    grown = ENGLISH + "\n### Troubleshooting\n\nText.\n"
    problems = heading_problems(parse(grown), parse(twin))
    assert problems and "missing: ### Troubleshooting" in problems[-1]
    assert heading_problems(parse(ENGLISH), parse(twin)) == []


def test_a_heading_at_another_level_is_reported() -> None:
    twin = ENGLISH.replace("## Use", "### 使用")
    assert heading_problems(parse(ENGLISH), parse(twin))


def test_a_heading_inside_a_code_block_is_not_a_section() -> None:
    page = parse("# A\n\n```console\n# a comment\n```\n")
    assert page.headings == [(1, "A")]


def test_a_changed_or_missing_code_block_is_reported() -> None:
    changed = ENGLISH.replace('print("hi")', 'print("hello")')
    assert block_problems(parse(ENGLISH), parse(changed))
    dropped = ENGLISH.replace('```python\nprint("hi")\n```\n', "")
    assert block_problems(parse(ENGLISH), parse(dropped))
    assert block_problems(parse(ENGLISH), parse(ENGLISH)) == []


def test_a_marked_block_stands_for_one_english_block() -> None:
    marked = ENGLISH.replace(
        '```python\nprint("hi")\n```', f'{TRANSLATED_MARK}\n```python\nprint("你好")\n```'
    )
    assert block_problems(parse(ENGLISH), parse(marked)) == []
    no_chinese = ENGLISH.replace(
        '```python\nprint("hi")\n```', f'{TRANSLATED_MARK}\n```python\nprint("hello")\n```'
    )
    assert block_problems(parse(ENGLISH), parse(no_chinese))
    wrong_info = ENGLISH.replace(
        '```python\nprint("hi")\n```', f"{TRANSLATED_MARK}\n```console\n$ 你好\n```"
    )
    assert block_problems(parse(ENGLISH), parse(wrong_info))
