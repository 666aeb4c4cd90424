"""Streaming scrubber properties: chunking never changes the output; big inputs stay linear."""

from __future__ import annotations

import itertools
import random

import pytest

from hermes_memory_guard._fencing import (
    MAX_TAG_CHARS,
    MEMORY_CONTEXT_NOTE,
    StreamingContextScrubber,
    build_memory_context_block,
    find_memory_tags,
    sanitize_context,
)

PIECES = [
    "<memory-context>\n",
    "</memory-context>",
    "< memory-context >\n",
    "<memory-context>  \n",
    "</memory-context >",
    "&lt;/memory-context&gt;",
    "＜/ｍｅｍｏｒｙ-context＞",
    '</mem\u00adory_context id="1">',
    "<memory-context id=x>\r\n",
    "<m\u0435mory context>\n",
    "\n",
    "  ",
    "The answer is 42. ",
    "答案是四十二。",
    "<memo",
    "&lt;",
    "&#x3c;",
    "&#60",
    "<",
    ">",
    "&amp;lt;memory context&amp;gt;\n",
    "</memory-context",
    "\u200b",
    "<memory-context>",
    "\\u003c/memory-context\\u003e",
    MEMORY_CONTEXT_NOTE,
    "ok.\n",
]


def run(chunks: list[str]) -> str:
    scrubber = StreamingContextScrubber()
    return "".join(scrubber.feed(c) for c in chunks) + scrubber.flush()


def random_chunks(rng: random.Random, text: str) -> list[str]:
    count = rng.randint(0, min(len(text), 12))
    cuts = sorted(rng.sample(range(len(text) + 1), count))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def test_random_chunking_gives_the_same_output_as_one_feed() -> None:
    rng = random.Random(2024)
    hidden_somewhere = 0
    for _ in range(800):
        reply = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 16)))
        whole = run([reply])
        assert run(random_chunks(rng, reply)) == whole, reply
        assert run(list(reply)) == whole, reply
        hidden_somewhere += whole != reply
    # The corpus exercises both outcomes: blocks hidden and replies shown as they are.
    assert 50 < hidden_somewhere < 750


def test_echoed_block_is_hidden_however_it_is_split() -> None:
    block = build_memory_context_block("- user lives in 東京\n- likes <b>bold</b> text")
    reply = f"Sure.\n{block}\nThe answer is 42. 答案是四十二。"
    rng = random.Random(5)
    for _ in range(300):
        assert run(random_chunks(rng, reply)) == "Sure.\n\nThe answer is 42. 答案是四十二。"


def test_reset_between_turns_forgets_a_half_seen_tag() -> None:
    scrubber = StreamingContextScrubber()
    assert scrubber.feed("turn one\n</memory-con") == "turn one\n"
    scrubber.reset()
    assert scrubber.feed("text>") == "text>"


def test_feed_rejects_non_strings() -> None:
    with pytest.raises(TypeError, match="delta must be a str"):
        StreamingContextScrubber().feed(b"bytes")  # type: ignore[arg-type]


def test_hold_back_is_bounded() -> None:
    # A never-ending tag-like prefix is released once it can no longer become a tag.
    scrubber = StreamingContextScrubber()
    shown = scrubber.feed("<memory-context ")
    for _ in range(2000):
        shown += scrubber.feed("a")
    assert len(shown) >= 2016 - MAX_TAG_CHARS
    assert shown + scrubber.flush() == "<memory-context " + "a" * 2000


ADVERSARIAL = {
    "brackets": "<" * 1_000_000,
    "entities": "&lt;" * 250_000,
    "tag prefixes": "<memory-context " * 62_500,
    "invisible run": "<" + "\u00ad" * 1_000_000,
    "interleaved": "<m\u00ade\u00adm" * 200_000,
    "zeros": "&#x0000000" * 100_000,
    "close tags": "</memory-context>" * 60_000,
    "unclosed opens": "\n<memory-context>\n" * 55_000,
    "almost attributes": ("<memory-context " + "a" * 250 + "\n") * 3_800,
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_adversarial_megabyte_is_handled_in_linear_time(name: str) -> None:
    # No timing assertion: super-linear (ReDoS-like) behaviour on 1 MB would run for hours
    # and trip the generous timeout; linear behaviour takes about a second.
    text = ADVERSARIAL[name]
    list(find_memory_tags(text))
    cleaned = sanitize_context(text)
    assert [t for t in find_memory_tags(cleaned) if t.complete] == []
    block = build_memory_context_block(text)
    assert block == "" or len(list(find_memory_tags(block))) == 2
    scrubber = StreamingContextScrubber()
    for start in range(0, len(text), 4096):
        scrubber.feed(text[start : start + 4096])
    scrubber.flush()
