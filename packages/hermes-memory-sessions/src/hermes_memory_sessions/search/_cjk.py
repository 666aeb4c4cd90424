"""CJK text helpers: detection, and the unigram + bigram tokens of the CJK index.

SQLite's built-in ``unicode61`` tokenizer treats a run of Han characters as one long token,
so a Chinese sentence is unsearchable by word. hermes-memory keeps a second, contentless
FTS5 index (``hm_fts_cjk``) fed with text produced here in Python: every Han / Kana / Hangul
run becomes its characters (unigrams) followed by its overlapping character pairs (bigrams),
each separated by a space, and the non-CJK remainder of the message is appended unchanged.

A query run of one character matches the unigram, two characters match the bigram, and
three or more match the *phrase* of consecutive bigrams, which is exactly "this substring
occurs" (bigram runs of different text runs are never adjacent because the unigrams of the
next run sit between them). No compiled extension is needed.

The document is made from the *folded* text (`hermes_memory_sessions.search._cjk_text.fold`:
full-width forms to ASCII, Traditional to Simplified), and queries are folded the same way;
a message whose only foldable characters are full-width letters or digits is indexed here
too (its folded Latin words are then findable by their ASCII spelling).
"""

from __future__ import annotations

import re

from hermes_memory_sessions.search._cjk_text import FOLD_GLOB_CLASS, fold, fold_version

__all__ = [
    "CJK_GLOB",
    "CJK_INDEX_GLOB",
    "cjk_index_text",
    "cjk_match_expr",
    "cjk_runs",
    "fold_version",
    "has_cjk",
    "is_cjk_char",
    "split_cjk",
]

# Characters indexed as unigrams/bigrams: Han (incl. ext. A, compatibility, ext. B-F),
# Hiragana, Katakana (incl. the prolonged sound mark), Hangul syllables.
_CJK_CLASS = (
    "\u3040-\u30ff"  # Hiragana + Katakana
    "\u3400-\u4dbf"  # Han ext. A
    "\u4e00-\u9fff"  # Han
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # Han compatibility
    "\U00020000-\U0002ebef"  # Han ext. B-F
)
_RUN_RE = re.compile(f"[{_CJK_CLASS}]+")
# Detection for query routing also counts CJK punctuation (U+3000-303F) as CJK.
_DETECT_RE = re.compile(f"[{_CJK_CLASS}\u3000-\u303f]")

#: A SQLite GLOB pattern that is true when a text contains an indexable CJK character.
CJK_GLOB = f"*[{_CJK_CLASS}]*"
#: True when a text belongs in the CJK index: a CJK character or a full-width form.
CJK_INDEX_GLOB = f"*[{_CJK_CLASS}{FOLD_GLOB_CLASS}]*"
_INDEX_RE = re.compile(f"[{_CJK_CLASS}{FOLD_GLOB_CLASS}]")


def is_cjk_char(ch: str) -> bool:
    """True for one Han, Kana or Hangul character."""
    return bool(_RUN_RE.fullmatch(ch))


def has_cjk(text: str) -> bool:
    """True when ``text`` contains a CJK character (including CJK punctuation)."""
    return bool(_DETECT_RE.search(text))


def cjk_runs(text: str) -> list[str]:
    """The maximal runs of indexable CJK characters in ``text``, in order."""
    return _RUN_RE.findall(text)


def split_cjk(text: str) -> list[tuple[bool, str]]:
    """Split ``text`` into ``(is_cjk, segment)`` pieces, in order, covering all of it."""
    out: list[tuple[bool, str]] = []
    pos = 0
    for m in _RUN_RE.finditer(text):
        if m.start() > pos:
            out.append((False, text[pos : m.start()]))
        out.append((True, m.group()))
        pos = m.end()
    if pos < len(text):
        out.append((False, text[pos:]))
    return out


def cjk_index_text(text: str) -> str | None:
    """The document fed to the CJK index for ``text``, or None when it has no CJK.

    CJK runs become ``"a b c ab bc"`` (unigrams then bigrams); everything else is kept as is
    (so Latin words glued to Chinese, like ``youer`` in ``修改youer服务端``, become findable).
    The text is folded first (full-width to ASCII, Traditional to Simplified).
    """
    if text.isascii() or not _INDEX_RE.search(text):
        return None
    text = fold(text)
    parts: list[str] = []
    for is_cjk, seg in split_cjk(text):
        if not is_cjk:
            parts.append(seg)
            continue
        parts.append(" ".join(seg))
        if len(seg) > 1:
            parts.append(" ".join(seg[i : i + 2] for i in range(len(seg) - 1)))
    return " ".join(parts)


def cjk_match_expr(run: str) -> str:
    """The FTS5 phrase that matches the CJK run ``run`` as a substring in the CJK index."""
    if len(run) <= 2:
        return f'"{run}"'
    return '"' + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + '"'
