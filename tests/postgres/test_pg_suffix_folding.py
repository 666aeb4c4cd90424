"""Suffix folding on PostgreSQL: hybrid discovery's lexical side (``hybrid_lexical``) with
the natural-language fallback searched by word forms (``swimming`` → ``swim | swims |
...``) finds the other word form as SQLite's does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from postgres_helpers import close_both

import hermes_memory_sessions.search._hybrid as hybrid_mod
from hermes_memory_postgres import PostgresSessionArchive
from hermes_memory_sessions import SessionStore
from hermes_memory_sessions.search._query import folded, parse_query

ARCHIVE = [
    ("lake", "Ada: we swim in the lake every Sunday, even in October."),
    ("shop", "Ada: we went to the hardware shop for paint."),
    ("garden", "Ada: the tomatoes went in last week."),
]
FILTERS: dict[str, Any] = {
    "role_filter": None,
    "source_filter": None,
    "exclude_sources": None,
    "include_inactive": False,
}


@pytest.fixture
def both(tmp_path: Path, pg_dsn: str, owner: str) -> Iterator[tuple[Any, Any]]:
    lite = SessionStore(tmp_path / "a.db")
    pg = PostgresSessionArchive(pg_dsn, owner=owner)
    for store in (lite, pg):
        for i, (sid, text) in enumerate(ARCHIVE):
            store.create_session(sid, source="cli", started_at=1_700_000_000 + i * 3600)
            store.append_messages(sid, [{"role": "user", "content": text}])
    try:
        yield lite, pg
    finally:
        close_both(lite, pg)


def _sessions(store: Any, question: str, *, fold: bool) -> list[str]:
    parsed = parse_query(question)
    and_rows, fallback, _, _ = hybrid_mod._lexical(
        store, folded(parsed) if fold else parsed, 50, FILTERS
    )
    return [str(r["session_id"]) for r in (*and_rows, *fallback)]


def test_word_forms_find_the_other_form_on_both_backends(both: tuple[Any, Any]) -> None:
    lite, pg = both
    for store in (lite, pg):
        assert _sessions(store, "who went swimming", fold=True)[:1] == ["lake"]
        assert "shop" in _sessions(store, "when was the fence painted", fold=True)
        # as written, only the "went" turns match
        assert "lake" not in _sessions(store, "who went swimming", fold=False)
        assert "shop" not in _sessions(store, "when was the fence painted", fold=False)
