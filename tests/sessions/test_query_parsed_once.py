"""`session_search` parses a query once; everything below reads the typed `ParsedQuery`."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sessions_helpers import WordsEmbedder

from hermes_memory_sessions import SessionStore, session_search
from hermes_memory_sessions.search import (
    FusedRanking,
    ParsedQuery,
    RankedHit,
    Term,
    fused_ranking,
    latin_only,
    parse_query,
)
from hermes_memory_sessions.search import _query as query_module


class _CountingPattern:
    """The tokenizer `parse_query` runs once per parse, counting its runs."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.calls = 0

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        self.calls += 1
        return self.pattern.finditer(text)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> _CountingPattern:
    counter = _CountingPattern(query_module._PHRASE_OR_TOKEN)
    monkeypatch.setattr(query_module, "_PHRASE_OR_TOKEN", counter)
    return counter


def _fill(store: SessionStore) -> None:
    store.create_session("s1", source="cli")
    store.append_message("s1", "user", "my sister plays the violin every sunday")
    store.append_message("s1", "assistant", "that sounds lovely")
    store.create_session("s2", source="cli")
    store.append_message("s2", "user", "the deploy failed on thursday")
    store.append_message("s2", "assistant", "rolled back the deploy")


def test_lexical_discovery_with_the_fallback_parses_once(
    tmp_path: Path, parses: _CountingPattern
) -> None:
    with SessionStore(tmp_path / "a.db") as store:
        _fill(store)
        parses.calls = 0
        # No message holds every word: the AND pass, then the any-term fallback, both run.
        answer = json.loads(session_search({"query": "sister violin concert"}, store=store))
    assert answer["fallback"] == "any_terms"
    assert [r["session_id"] for r in answer["results"]] == ["s1"]
    assert parses.calls == 1


def test_hybrid_discovery_parses_once(tmp_path: Path, parses: _CountingPattern) -> None:
    with SessionStore(
        tmp_path / "a.db", embedder=WordsEmbedder(dim=32), embed_in_background=False
    ) as store:
        _fill(store)
        store.embed_pending()
        parses.calls = 0
        answer = json.loads(session_search({"query": "deploy thursday rollback"}, store=store))
    assert answer["recall"] == "hybrid"
    assert answer["results"][0]["session_id"] == "s2"
    assert parses.calls == 1


def test_the_parsed_query_is_frozen_and_passes_through_parse_query() -> None:
    parsed = parse_query("数据库 backup OR restore*")
    assert parse_query(parsed) is parsed
    assert parsed.text == "数据库 backup OR restore*"
    assert parsed.has_syntax and parsed.has_cjk and not parsed.natural
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed.items = ()  # type: ignore[misc]
    assert parsed.terms == (Term("数据库"), Term("backup"), Term("restore", prefix=True))
    assert parsed.needles[0] in {"数据库", "restore", "backup"}
    assert parse_query(None) == ParsedQuery()


def test_latin_only_drops_what_a_message_without_cjk_cannot_match() -> None:
    items = parse_query("数据库 backup OR restore NOT 失败").items
    assert latin_only(items) == [Term("restore")]
    assert latin_only(parse_query("数据库 备份").items) == []


def test_fused_ranking_returns_ranked_rows_and_no_ranking_without_vectors(
    tmp_path: Path,
) -> None:
    with SessionStore(tmp_path / "plain.db") as store:
        _fill(store)
        assert fused_ranking(store, parse_query("deploy thursday")) is None
    with SessionStore(
        tmp_path / "vec.db", embedder=WordsEmbedder(dim=32), embed_in_background=False
    ) as store:
        _fill(store)
        store.embed_pending()
        assert fused_ranking(store, parse_query("deploy OR thursday")) is None  # syntax
        assert fused_ranking(store, "deploy", sort="newest") is None
        ranking = fused_ranking(store, parse_query("deploy thursday"))
        assert isinstance(ranking, FusedRanking)
        assert ranking.rows and all(isinstance(r, RankedHit) for r in ranking.rows)
        assert ranking.rows[0].row["session_id"] == "s2"
        assert not ranking.rows[0].any_terms
