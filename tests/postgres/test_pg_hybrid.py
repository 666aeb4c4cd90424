"""Hybrid recall on PostgreSQL: vectors stored in the database, searched like SQLite's.

The same conversations go into a SQLite `SessionStore` and a `PostgresSessionArchive`, both
with the packaged default embedder; the fused ranking (`discover_messages`) and the
``session_search`` answers must be the same on both, including on the binary (Hamming)
pass over more vectors than are rescored, and the vectors must follow deletes and edits.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from postgres_helpers import CONVERSATIONS, QUESTIONS, close_both
from postgres_helpers import fill_both as _fill
from postgres_helpers import ranked as _ranked

import hermes_memory_sessions.vectors._index as vectors_mod
from hermes_memory_postgres import PostgresSessionArchive
from hermes_memory_sessions import SessionStore
from hermes_memory_sessions.tool import session_search

pytest.importorskip("hermes_memory_vectors")


@pytest.fixture
def both(tmp_path: Path, pg_dsn: str, owner: str, embedder: Any) -> Iterator[tuple[Any, Any]]:
    lite = SessionStore(tmp_path / "a.db", embedder=embedder, embed_in_background=False)
    pg = PostgresSessionArchive(pg_dsn, owner=owner)
    pg.attach_embedder(embedder, background=False)
    _fill(lite)
    _fill(pg)
    assert lite.embed_pending() == pg.embed_pending() == 2 * len(CONVERSATIONS)
    try:
        yield lite, pg
    finally:
        close_both(lite, pg)


def _answer(store: Any, query: str) -> list[tuple[str, str | None, str]]:
    out = json.loads(session_search({"query": query, "limit": 5}, store=store))
    assert out["success"] is True
    return [(r["session_id"], r.get("match"), r["snippet"]) for r in out["results"]]


@pytest.mark.parametrize("rescore", [1000, 6])
def test_same_fused_ranking_and_tool_answers_on_both_backends(
    both: tuple[Any, Any], rescore: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """6 < 20 vectors: the binary pass picks the candidates on both backends."""
    monkeypatch.setattr(vectors_mod, "RESCORE", rescore)
    lite, pg = both
    assert pg.vector_coverage()["embedded"] == lite.vector_coverage()["embedded"] == 20
    for query in QUESTIONS:
        assert _ranked(pg, query) == _ranked(lite, query), query
        assert _answer(pg, query) == _answer(lite, query), query
    # A paraphrase sharing no word with its answer is found by meaning on PostgreSQL.
    top = pg.discover_messages("which musical instrument does the user play?", limit=1)
    assert top[0]["session_id"] == "music" and top[0]["match"] == "semantic"


def test_vectors_follow_deletes_and_edits(both: tuple[Any, Any]) -> None:
    _, pg = both
    assert pg.vector_coverage()["embedded"] == 20
    pg.delete_session("pet")
    cov = pg.vector_coverage()
    assert (cov["embedded"], cov["total"]) == (18, 18)
    assert all(r["session_id"] != "pet" for r in pg.discover_messages("kitten", limit=10))
    assert pg.embed_pending() == 0
    # `sessions embed --reset` on PostgreSQL: this owner's vectors go, then come back.
    assert pg.drop_vectors() == 18
    assert pg.vector_coverage()["embedded"] == 0
    assert pg.embed_pending() == 18


def test_without_an_embedder_discovery_is_the_lexical_policy(pg_dsn: str, owner: str) -> None:
    pg = PostgresSessionArchive(pg_dsn, owner=owner)
    try:
        _fill(pg)
        assert pg.vector_index is None
        rows = pg.discover_messages("database migration", limit=5)
        assert rows[0]["match"] == "and" and rows[0]["session_id"] == "work"
        assert {r["match"] for r in rows} <= {"and", "any_terms"}
        assert pg.discover_messages("which musical instrument does the user play?") == []
        assert pg.vector_coverage()["embedded"] == 0
    finally:
        for table in ("hm_messages", "hm_sessions", "hm_term_df"):
            pg.db.run(lambda c, t=table: c.execute(f"DELETE FROM {t} WHERE owner = %s", (owner,)))
        pg.close()
