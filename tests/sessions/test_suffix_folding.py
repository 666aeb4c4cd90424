"""Suffix folding in hybrid discovery's natural-language fallback: a question's English
words are searched as any of their word forms ("swimming" finds "swim"); the AND pass,
user syntax and the lexical-only path are unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sessions_folding_helpers import QUESTIONS, fill
from sessions_helpers import WordsEmbedder

import hermes_memory_sessions.search._hybrid as hybrid_mod
from hermes_memory_sessions.search._hybrid import discover
from hermes_memory_sessions.search._query import Term, folded, parse_query, word_forms, word_stem
from hermes_memory_sessions.storage import SessionStore


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("painting", "paint"),
        ("painted", "paint"),
        ("paints", "paint"),
        ("paint", "paint"),  # a bare word is its own stem: "paint*" finds "painting"
        ("swimming", "swim"),  # doubled consonant undoubled
        ("loved", "love"),  # -ed leaves "lov": only the "d" goes
        ("games", "game"),
        ("classes", "class"),
        ("hobbies", "hobb"),
        ("Researched", "research"),
        ("falling", "fall"),  # "ll" is not undoubled
        ("kids", "kids"),  # "kid" is shorter than MIN_STEM: "kids" is its own stem
        ("news", "news"),
        ("run", None),  # too short
        ("café", None),  # not plain ASCII letters
        ("v2", None),
    ],
)
def test_word_stem(word: str, stem: str | None) -> None:
    assert word_stem(word) == stem


@pytest.mark.parametrize(
    ("word", "wanted"),
    [
        ("painting", {"paint", "paints", "painted", "painting", "painter"}),
        ("paint", {"paint", "paints", "painted", "painting", "painter"}),
        ("swimming", {"swim", "swims", "swimming", "swimmer"}),
        ("loved", {"love", "loves", "loved", "loving", "lover"}),
        ("hobbies", {"hobby", "hobbies"}),
        ("story", {"story", "stories"}),
        ("decide", {"decide", "decides", "decided", "deciding"}),
    ],
)
def test_word_forms(word: str, wanted: set[str]) -> None:
    forms = word_forms(word)
    assert forms is not None and wanted <= set(forms)
    assert forms[0] == word  # the word as written first, its stem second
    assert word_forms("run") is None


@pytest.mark.parametrize(
    ("word", "unwanted"),
    [
        ("plan", {"plane"}),  # a bare word never gains an "e": plan, mat, car are words
        ("planning", {"plane"}),  # nor a stem whose doubled consonant was undoubled
        ("docker", {"dockere", "dockeres", "dockerring"}),  # two syllables: no doubling
        ("paint", {"painte", "paintes"}),  # "-es" only after a sibilant or "o"
    ],
)
def test_word_forms_leave_out_other_words_and_non_words(word: str, unwanted: set[str]) -> None:
    forms = word_forms(word)
    assert forms is not None and not unwanted & set(forms)


def test_word_forms_keep_the_restored_e_and_sibilant_es() -> None:
    assert "dance" in (word_forms("dancing") or ())
    assert "certificate" in (word_forms("certificates") or ())  # "-es" took the stem's e
    assert "classes" in (word_forms("class") or ())


def test_content_terms_get_their_forms_once_when_folded() -> None:
    question = "When did Caroline go painting, and what did she paint?"
    plain = parse_query(question).content_terms
    assert Term("painting") in plain  # not folded by default
    assert all(not t.forms for t in plain)
    terms = folded(parse_query(question)).content_terms
    paint = [t for t in terms if "painted" in t.forms]
    assert len(paint) == 1  # "painting" and "paint": one term
    assert paint[0].fts().startswith('("painting" OR "paint" OR ')
    assert not any(t.prefix for t in terms)  # exact forms, never prefix queries


def test_syntax_and_the_and_pass_are_untouched() -> None:
    parsed = folded(parse_query("painting sunsets"))
    assert parsed.items == (Term("painting"), Term("sunsets"))  # the AND pass: as written
    assert parsed.fts() == '"painting" "sunsets"'
    # user syntax: no fallback, no folding
    assert not folded(parse_query('"painting" OR sunsets')).natural
    quoted = folded(parse_query('"oil painting" sunsets')).content_terms
    assert Term("oil painting", phrase=True) in quoted


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    # A word embedder: "swimming" and "swim" are unrelated directions, so only the
    # lexical side can connect them.
    pytest.importorskip("numpy")
    s = SessionStore(tmp_path / "fold.db", embedder=WordsEmbedder(64), embed_in_background=False)
    fill(s)
    s.embed_pending()
    yield s
    s.close()


def _matches(store: SessionStore, question: str) -> dict[str, str]:
    """``{content: how it matched}`` of hybrid discovery's rows."""
    found = discover(store, question, limit=10)
    if found is None:
        return {}
    assert found.hybrid
    with store.read() as conn:
        text = dict(conn.execute("SELECT id, content FROM messages").fetchall())
    return {text[int(r["id"])]: str(r["match"]) for r in found.rows}


def _match_of(store: SessionStore, question: str) -> str | None:
    answer = QUESTIONS[question]
    return next((m for c, m in _matches(store, question).items() if c.startswith(answer)), None)


@pytest.mark.parametrize("question", list(QUESTIONS))
def test_hybrid_finds_the_other_word_form_by_its_words(store: SessionStore, question: str) -> None:
    assert _match_of(store, question) == "any_terms"


def test_without_folding_the_word_form_is_missed(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hybrid_mod, "SUFFIX_FOLDING", False)
    for question in QUESTIONS:
        assert _match_of(store, question) != "any_terms", question


def test_the_lexical_only_path_keeps_the_words_as_written(store: SessionStore) -> None:
    # session_search without the dense side: unchanged (no prefix terms, no extra cost)
    rows = store.search_messages("who went swimming", any_terms=True, with_context=False)
    with store.read() as conn:
        text = dict(conn.execute("SELECT id, content FROM messages").fetchall())
    assert rows and not any(text[r["id"]].startswith("Caroline: I swim") for r in rows)
