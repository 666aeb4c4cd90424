"""One ``session_search`` call, one pooled connection: its reads share it (no checkout,
liveness round trip and transaction per read), its answers are those of per-read
checkouts, and a pinned connection that breaks or errs never breaks the reads after it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from postgres_helpers import CONVERSATIONS, QUESTIONS, fill_both

from hermes_memory_postgres import PostgresSessionArchive
from hermes_memory_sessions.tool import session_search

pytest.importorskip("numpy")


class _Words:
    """A deterministic embedder: hashed words (and CJK characters) into 64 dimensions."""

    name = "test:hashed-words"
    dim = 64

    def _one(self, text: str) -> list[float]:
        vec = [0.0] * self.dim
        for token in [*text.lower().split(), *(c for c in text if ord(c) > 0x2E80)]:
            vec[hashlib.sha1(token.encode()).digest()[0] % self.dim] += 1.0
        return vec

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


class _Unpinned:
    """The archive without ``pinned_reads``: every read checks out its own connection."""

    def __init__(self, archive: PostgresSessionArchive) -> None:
        self._archive = archive

    def __getattr__(self, name: str) -> Any:
        if name == "pinned_reads":
            raise AttributeError(name)
        return getattr(self._archive, name)


def _delete_owner(pg: PostgresSessionArchive) -> None:
    for table in ("hm_vectors", "hm_messages", "hm_sessions", "hm_term_df"):
        pg.db.run(lambda c, t=table: c.execute(f"DELETE FROM {t} WHERE owner = %s", (pg.owner,)))


@pytest.fixture(params=["lexical", "hybrid"])
def archive(request: pytest.FixtureRequest, pg_dsn: str, owner: str) -> Iterator[Any]:
    pg = PostgresSessionArchive(pg_dsn, owner=owner)
    fill_both(pg)
    # Two continuations, so lineage walks and bookends have something to read.
    pg.create_session("trip-2", source="cli", parent_session_id="trip", started_at=1_800_000_000)
    pg.append_messages(
        "trip-2",
        [{"role": "user", "content": f"Lisbon day {i}: trams and pastries"} for i in range(14)],
    )
    if request.param == "hybrid":
        pg.attach_embedder(_Words(), background=False)
        assert pg.embed_pending() > 0
    try:
        yield pg
    finally:
        _delete_owner(pg)
        pg.close()


def _search(store: Any, query: str) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(session_search({"query": query, "limit": 5}, store=store))
    assert out["success"] is True, out
    return out


def test_a_discovery_checks_out_one_connection_and_answers_as_before(archive: Any) -> None:
    db = archive.db
    for query in [*QUESTIONS, "Lisbon trams", "trip"]:
        before = db.checkouts
        pinned = _search(archive, query)
        assert db.checkouts - before == 1, query
        before = db.checkouts
        unpinned = _search(_Unpinned(archive), query)
        if pinned["results"]:
            assert db.checkouts - before > 1, query  # what the pinned block saves
        assert pinned == unpinned, query


def test_discover_messages_checks_out_one_connection(archive: Any) -> None:
    before = archive.db.checkouts
    rows = archive.discover_messages("Lisbon trams", limit=5)
    assert rows and archive.db.checkouts - before == 1


def test_scrolling_and_reading_a_session_check_out_one_connection(archive: Any) -> None:
    for args in (
        {"session_id": "trip-2", "around_message_id": _first_id(archive, "trip-2"), "window": 3},
        {"session_id": "trip-2"},
        {},
    ):
        before = archive.db.checkouts
        out = json.loads(session_search(args, store=archive))
        assert out["success"] is True, out
        assert archive.db.checkouts - before == 1, args


def _first_id(archive: Any, sid: str) -> int:
    return int(archive.get_messages(sid)[0]["id"])


def test_a_pinned_connection_that_dies_or_errs_does_not_break_later_reads(
    pg_dsn: str, owner: str
) -> None:
    pg = PostgresSessionArchive(pg_dsn, owner=owner)
    try:
        fill_both(pg)
        pid = "SELECT pg_backend_pid() AS pid"
        with pg.pinned_reads():
            first = pg.db.run(lambda c: c.execute(pid).fetchone()["pid"], pinned_ok=True)
            with pytest.raises(psycopg.errors.DivisionByZero):
                pg.db.run(lambda c: c.execute("SELECT 1 / 0").fetchone(), pinned_ok=True)
            # Still the same connection, usable after the error (autocommit: no aborted
            # transaction), and a nested block reuses it.
            with pg.pinned_reads():
                again = pg.db.run(lambda c: c.execute(pid).fetchone()["pid"], pinned_ok=True)
            assert again == first
            with psycopg.connect(pg_dsn, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (first,))
            session = pg.get_session(CONVERSATIONS[0][0])  # falls back to its own checkout
            assert session is not None and session["id"] == CONVERSATIONS[0][0]
        # Outside the block reads run in their own transaction again.
        assert pg.get_session(CONVERSATIONS[1][0]) is not None
    finally:
        _delete_owner(pg)
        pg.close()


def test_rows_read_in_a_block_are_answered_again_until_a_write(
    pg_dsn: str, owner: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pg = PostgresSessionArchive(pg_dsn, owner=owner)
    statements: list[str] = []
    real = psycopg.Cursor.execute

    def counted(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        statements.append(str(query))
        return real(self, query, *args, **kwargs)

    try:
        fill_both(pg)
        sid = CONVERSATIONS[0][0]
        mid = int(pg.get_messages(sid)[0]["id"])
        hits = pg.find_hits("violin")
        assert hits is not None
        monkeypatch.setattr(psycopg.Cursor, "execute", counted)
        with pg.pinned_reads():
            assert pg.lineage_root(sid) == sid
            statements.clear()
            session = pg.get_session(sid)  # read with the lineage walk
            assert session is not None and session["id"] == sid
            view = pg.get_anchored_view(sid, mid)
            assert view["window"][0]["id"] == mid
            snippet = pg.hit_snippet(hits, mid)  # its text came with the view
            assert ">>>violin<<<" in snippet
            assert [s for s in statements if "hm_sessions" in s and "WITH" not in s] == []
            assert len(statements) == 1  # the anchored view only
            pg.set_title(sid, "Violin practice")  # a write: what was read is forgotten
            again = pg.get_session(sid)
            assert again is not None and again["title"] == "Violin practice"
        statements.clear()
        assert pg.get_session(sid) == again  # outside a block every read asks the server
        assert [s for s in statements if s] == [
            "SELECT * FROM hm_sessions WHERE owner = %s AND id = %s"
        ]
    finally:
        monkeypatch.undo()
        _delete_owner(pg)
        pg.close()


def test_the_cli_search_checks_out_one_connection(archive: Any) -> None:
    from hermes_memory_cli._commands.sessions import _hybrid_hits

    if archive.vector_index is None:  # the lexical archive: the CLI's hybrid path skips it
        return
    before = archive.db.checkouts
    hits, took_part = _hybrid_hits(archive, "Lisbon trams", 5, ["user", "assistant"])
    assert took_part and hits and archive.db.checkouts - before == 1
