"""The fast paths of the PostgreSQL archive's tokeniser and row builder give exactly what the
plain definitions give (no database needed).

`word_tokens` tokenises non-ASCII text chunk by chunk with a per-chunk cache, and
`tsvector_literal` fills a remembered template; both are compared here with the
straightforward definitions (fold the whole text, format each occurrence) on hand-picked
traps and on seeded random text drawn from characters that decompose, compose, case-fold
to several letters or count as whitespace.
"""

from __future__ import annotations

import json
import random
import re
import unicodedata

import pytest

from hermes_memory_postgres._text import (
    MAX_INDEXED_CHARS,
    cjk_tsvector,
    tsvector_literal,
    word_tokens,
    words_document,
)
from hermes_memory_postgres.archive._rows import COPY_COLUMNS, copy_row, normal_message
from hermes_memory_sessions.storage import cjk_document
from hermes_memory_sessions.storage._schema import TOOL_INDEX_PREFIX

_WORD = re.compile(r"[^\W_]+")


def reference_tokens(text: str | None) -> list[str]:
    """The definition: fold the whole (truncated) text, then take letter/digit runs."""
    if not text:
        return []
    text = text[:MAX_INDEXED_CHARS]
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    folded = unicodedata.normalize("NFC", stripped).casefold()
    return [w for w in _WORD.findall(folded) if len(w) <= 2000]


def reference_literal(tokens: list[str]) -> str:
    def quote(t: str) -> str:
        return "'" + t.replace("\\", "\\\\").replace("'", "''") + "'"

    return " ".join(f"{quote(t)}:{i}" for i, t in enumerate(tokens, 1) if len(t.encode()) <= 2000)


TRAPS = [
    "Café crème brûlée",
    "e\u0301 \u0301e",  # a combining mark after a space
    "a\u00a0b\u2003c\u3000d",  # no-break, em and ideographic spaces
    "\u00a8x \u00a8",  # spacing diaeresis: NFKD gives a space and a combining mark
    "\u1100 \u1161 \u1100\u1161",  # Hangul jamo split by a space, and together
    "\ufdfa and \ufdfa\ufdfa",  # one character whose NFKD holds spaces
    "STRASSE straße ß\u1e9e",  # case folding to two letters
    "\uab70\u13a0 \u13f8",  # Cherokee: casefold goes to upper case
    "ｶﾀｶﾅ ﾊﾟﾝ ｱｲｳ",  # half-width katakana (NFKD to full width, voiced marks)
    "ﬁle ﬃ ①② ⑴ x²",  # compatibility forms
    "数据库服务器 部署 東京タワー 한국어 텍스트",
    "x\x1cy\x1fz \x85w \u2028v\u2029u",  # separators str.split treats as whitespace
    "word_with_underscores and-dashes 3.14",
    "\u0301\u0301\u0301",  # marks alone
    "ǅungla Ǳ ǆ",  # title-case digraphs
    "İstanbul ı I",  # dotted capital I
    "a" * 70 + "é",  # a chunk longer than the cached length
    "é" * 2100,  # one word too long to index
    "ß" * 1001,  # folds past the lexeme limit
]

ALPHABET = (
    "aeEzZ09 _-'\\\t\n\u00a0\u3000\u2003\x1c"
    "\u0301\u0308\u0327\u3099\u309a"
    "éÅñßẞﬁﬃ\ufdfa\u00a8\u1100\u1161\u11a8가각"
    "ｶﾞﾟｱ数据库東京タワー한국\uab70\u13a0İı①²"
)


@pytest.mark.parametrize("text", TRAPS)
def test_word_tokens_match_the_definition_on_traps(text: str) -> None:
    assert word_tokens(text) == reference_tokens(text)
    assert word_tokens(text) == reference_tokens(text)  # again, from the chunk cache


def test_word_tokens_match_the_definition_on_random_text() -> None:
    rng = random.Random(20261201)
    for _ in range(4000):
        text = "".join(rng.choices(ALPHABET, k=rng.randint(1, 40)))
        assert word_tokens(text) == reference_tokens(text), repr(text)


def test_word_tokens_truncate_before_tokenising() -> None:
    text = "é " * (MAX_INDEXED_CHARS // 2) + "tail"
    assert word_tokens(text) == reference_tokens(text)
    assert "tail" not in word_tokens(text)


@pytest.mark.parametrize("n", [1, 2, 17, 255, 256, 257, 1500])
def test_tsvector_literal_matches_the_definition(n: int) -> None:
    rng = random.Random(n)
    tokens = [rng.choice(["deploy", "数据", "%s", "a%d", "{}", "{0}", "x"]) for _ in range(n)]
    assert tsvector_literal(tokens) == reference_literal(tokens)


@pytest.mark.parametrize(
    "tokens",
    [["it's", "ok"], ["back\\slash"], ["a" * 600, "b"], ["é" * 700], ["x" * 2001, "y"]],
)
def test_tsvector_literal_careful_path(tokens: list[str]) -> None:
    assert tsvector_literal(tokens) == reference_literal(tokens)


def test_words_document_with_and_without_tool_fields() -> None:
    assert words_document("user", "Hello World", None, None) == ["hello", "world"]
    assert words_document("assistant", "Hi", "web_search", '{"q": "Café"}') == [
        "hi", "web", "search", "q", "cafe",
    ]  # fmt: skip
    result = "ok " * TOOL_INDEX_PREFIX + "tail"
    assert words_document("tool", result, None, None) == reference_tokens(
        result[:TOOL_INDEX_PREFIX]
    )
    assert "tail" not in words_document("tool", result, None, None)
    assert words_document("user", "x" * 2001 + " y", None, None) == ["y"]


@pytest.mark.parametrize(
    ("content", "calls"),
    [
        ("plain ascii", None),
        ("plain ascii", '[{"name": "查询"}]'),  # CJK only in the tool calls
        ("部署 server", None),
        (["not", "text"], None),
        (None, "数据"),
    ],
)
def test_cjk_tsvector_skips_only_text_without_cjk(content: object, calls: str | None) -> None:
    doc = cjk_document("assistant", content, calls)
    want = None if doc is None else reference_literal(reference_tokens(doc))
    assert cjk_tsvector("assistant", content, calls) == want  # type: ignore[arg-type]


def test_copy_row_keeps_nul_text_in_column_order_and_counts_words_once() -> None:
    from collections import Counter

    m = normal_message(
        {"role": "user", "tool_calls": "a\x00b", "content": "x\x00 deploy deploy", "active": True}
    )
    df: Counter[str] = Counter()
    row = dict(zip(COPY_COLUMNS, copy_row("o", 7, "s1", m, df), strict=True))
    assert row["content"] == "x\ufffd deploy deploy"
    assert row["tool_calls"] == "a\ufffdb"
    assert row["active"] == 1 and row["active"].__class__ is int
    assert list(json.loads(row["nul_fields"])) == ["content", "tool_calls"]
    assert json.loads(row["nul_fields"]) == {
        "content": "x\x00 deploy deploy",
        "tool_calls": "a\x00b",
    }
    assert df["deploy"] == 1
    assert row["words"] == reference_literal(reference_tokens("x\x00 deploy deploy a\x00b"))


def test_normal_message_keeps_only_data_fields() -> None:
    m = normal_message(
        {"role": "user", "content": [{"type": "text"}], "bogus": 1, "compacted": None, "id": 5},
        keep_id=True,
    )
    assert m["content"] == json.dumps([{"type": "text"}], ensure_ascii=False)
    assert "bogus" not in m and "compacted" not in m and m["id"] == 5
    with pytest.raises(ValueError, match="role"):
        normal_message({"role": "  ", "content": "x"})
