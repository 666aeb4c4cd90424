"""One block-opening rule for `sanitize_context` and `StreamingContextScrubber`.

An open tag followed by a line break opens a block wherever it stands on its line; followed
by anything else it is a mention. Both consumers call the same function (`_opens_block`).
"""

from __future__ import annotations

import itertools
import random

import pytest

from hermes_memory_guard import _fencing
from hermes_memory_guard._fencing import (
    StreamingContextScrubber,
    find_memory_tags,
    sanitize_context,
)

BREAKS = ["\n", "\r\n", "\r", "\u2028", "\u2029", "\u0085", "  \n", "\u200b\t\n"]
LEADS = ["", "Recall: ", "  ", "答案：", "x\u2028", "x\u0085", "line\n", "\u200b"]
OPENS = [
    "<memory-context>",
    "< Memory_Context >",
    "&lt;memory-context&gt;",
    "＜ｍｅｍｏｒｙ-context＞",
]


def run(chunks: list[str]) -> str:
    scrubber = StreamingContextScrubber()
    return "".join(scrubber.feed(c) for c in chunks) + scrubber.flush()


def random_chunks(rng: random.Random, text: str) -> list[str]:
    count = rng.randint(0, min(len(text), 12))
    cuts = sorted(rng.sample(range(len(text) + 1), count))
    return [text[a:b] for a, b in itertools.pairwise([0, *cuts, len(text)])]


@pytest.mark.parametrize("open_tag", OPENS)
@pytest.mark.parametrize("lead", LEADS)
@pytest.mark.parametrize("brk", BREAKS)
def test_open_tag_then_line_break_opens_a_block_anywhere(
    lead: str, brk: str, open_tag: str
) -> None:
    reply = f"{lead}{open_tag}{brk}secret 秘密\n</memory-context> after"
    expected = f"{lead} after"
    assert run([reply]) == expected
    assert run(list(reply)) == expected
    rng = random.Random(len(reply))
    for _ in range(20):
        assert run(random_chunks(rng, reply)) == expected
    assert sanitize_context(reply) == expected


@pytest.mark.parametrize(
    "text",
    [
        "The <memory-context> tag wraps recall.",
        "Recall: <memory-context> is the fence",
        "<memory-context>x",
        "x\u2028<memory-context> y\u2028z",
        "ends with <memory-context>",
        "ends with blanks <memory-context>   ",
        "<memory-context>" + " " * 65 + "\nmore than 64 blanks: a mention",
    ],
)
def test_open_tag_followed_by_anything_else_is_a_mention(text: str) -> None:
    assert run([text]) == text
    assert run(list(text)) == text
    # sanitize_context keeps the sentence and drops only the stray tag.
    assert sanitize_context(text) == text.replace("<memory-context>", "")


def test_both_consumers_use_the_one_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    reply = "a\n<memory-context>\nsecret\n</memory-context>\nb"
    assert run([reply]) == "a\n\nb"
    assert sanitize_context(reply) == "a\n\nb"
    monkeypatch.setattr(_fencing, "_opens_block", lambda text, end: False)
    assert "secret" in run([reply])
    assert "secret" in sanitize_context(reply)


PIECES = [
    "<memory-context>\n",
    "</memory-context>",
    "Recall: <memory-context>\n",
    "x\u2028<memory-context>\u2028",
    "<memory-context> tag",
    "a\u0085",
    "<memory-context>  \r\n",
    "\n",
    "ok ",
    "答案",
    "<memo",
    "&lt;memory-context&gt;\u2029",
    "</memory-context >\n",
    "<memory-context>",
    " ",
]


def _opens_somewhere(text: str) -> bool:
    return any(
        t.complete and not t.closing and _fencing._opens_block(text, t.end)
        for t in find_memory_tags(text)
    )


def test_stream_and_sanitize_agree_on_random_replies() -> None:
    rng = random.Random(21)
    compared = hidden = 0
    for _ in range(1500):
        reply = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 10)))
        shown = run([reply])
        assert run(list(reply)) == shown, reply
        assert run(random_chunks(rng, reply)) == shown, reply
        scrubber = StreamingContextScrubber()
        scrubber.feed(reply)
        if scrubber._in_span or _opens_somewhere(shown):
            continue  # an unterminated block, or removals glued a new opener together
        compared += 1
        hidden += shown != reply
        # The stream hid exactly the blocks sanitize_context removes.
        assert sanitize_context(shown) == sanitize_context(reply), reply
    assert compared > 300
    assert hidden > 100
