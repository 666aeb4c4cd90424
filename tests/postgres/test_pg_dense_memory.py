"""The PostgreSQL dense side with the candidates' int8 vectors in memory.

As on SQLite (`tests/sessions/test_dense_reads.py`): within the index's memory budget the
vectors are kept beside the binary codes and never read back at search time; with a budget
of 0 they are read from PostgreSQL. Both rank alike, and a vector deleted or replaced since
it was loaded is never used: the hit rows carry the seq of the message's vector now (real
PostgreSQL, the packaged default embedder: ``embedder`` of ``conftest.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from postgres_helpers import CONVERSATIONS, QUESTIONS
from postgres_helpers import fill_both as fill

from hermes_memory_postgres import PostgresSessionArchive
from hermes_memory_sessions.vectors import _binary_codes as codes_mod

pytest.importorskip("hermes_memory_vectors")

#: The index's memory budget: the default (vectors in memory) and 0 (read from PostgreSQL).
BUDGETS = [None, 0]


def _open(dsn: str, owner: str, embedder: Any, budget: int | None) -> Any:
    pg = PostgresSessionArchive(dsn, owner=owner)
    pg.attach_embedder(embedder, background=False)
    index: Any = pg.vector_index
    index._codes.memory_budget = codes_mod.VECTOR_MEMORY_BUDGET if budget is None else budget
    index._codes.clear()  # built with the class default: start again with this budget
    return pg


@pytest.fixture
def archive(pg_dsn: str, owner: str, embedder: Any) -> Iterator[Any]:
    pg = _open(pg_dsn, owner, embedder, None)
    fill(pg)
    assert pg.embed_pending() == 2 * len(CONVERSATIONS)
    try:
        yield pg
    finally:
        pg.drop_vectors()
        for table in ("hm_messages", "hm_sessions", "hm_term_df"):
            pg.db.run(lambda c, t=table: c.execute(f"DELETE FROM {t} WHERE owner = %s", (owner,)))
        pg.close()


def _dense(pg: Any, query: str, **filters: Any) -> list[tuple[int, float]]:
    index = pg.vector_index
    vector = index.query_vector(query)
    return [
        (int(h.row["id"]), round(h.score, 5)) for h in index.search(vector, limit=20, **filters)
    ]


def test_vectors_in_memory_rank_exactly_as_vectors_read_from_postgres(
    archive: Any, pg_dsn: str, owner: str, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_memory_postgres.archive import _vector_rows

    reads: list[int] = []
    real = _vector_rows.vector_rows

    def counted(*args: Any) -> Any:
        reads.append(1)
        return real(*args)

    monkeypatch.setattr(_vector_rows, "vector_rows", counted)
    in_memory = [_dense(archive, q) for q in QUESTIONS]
    assert archive.vector_index._codes.codes.vectors is not None
    assert reads == []  # nothing read back: the vectors were in memory
    assert all(in_memory)
    read_back = _open(pg_dsn, owner, embedder, 0)
    try:
        assert [_dense(read_back, q) for q in QUESTIONS] == in_memory
        assert read_back.vector_index._codes.codes.vectors is None
        assert len(reads) == len(QUESTIONS)
        filtered = [_dense(read_back, q, role_filter=["user"]) for q in QUESTIONS]
        assert filtered == [_dense(archive, q, role_filter=["user"]) for q in QUESTIONS]
    finally:
        read_back.close()


@pytest.mark.parametrize("budget", BUDGETS)
def test_a_deleted_or_edited_message_is_not_found_by_its_loaded_vector(
    pg_dsn: str, owner: str, embedder: Any, budget: int | None
) -> None:
    pg = _open(pg_dsn, owner, embedder, budget)
    try:
        fill(pg)
        pg.embed_pending()
        top = pg.discover_messages("kitten", limit=1)[0]
        assert top["session_id"] == "pet"
        before = {i for i, _ in _dense(pg, "kitten")}
        assert int(top["id"]) in before  # its vector is loaded (in memory or by id)
        # Another host edits the message: the trigger drops its vector; not embedded again.
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(
                "UPDATE hm_messages SET content = 'sourdough starter' WHERE owner = %s AND id = %s",
                (owner, int(top["id"])),
            )
        assert int(top["id"]) not in {i for i, _ in _dense(pg, "kitten")}
        pg.delete_session("pet")
        assert all(r["session_id"] != "pet" for r in pg.discover_messages("kitten", limit=10))
        assert not {i for i, _ in _dense(pg, "kitten")} - before  # nothing new appeared
    finally:
        pg.drop_vectors()
        for table in ("hm_messages", "hm_sessions", "hm_term_df"):
            pg.db.run(lambda c, t=table: c.execute(f"DELETE FROM {t} WHERE owner = %s", (owner,)))
        pg.close()


@pytest.mark.parametrize("role", ["user", "assistant"])
def test_dense_hits_keep_to_the_role_filter(archive: Any, owner: str, role: str) -> None:
    # Both paths above share the filter, so comparing them cannot see it ignored: the roles
    # are checked against the stored rows, and the unfiltered hits of that role come first.
    rows: Any = archive.db.run(
        lambda c: c.execute(
            "SELECT id, role FROM hm_messages WHERE owner = %s", (owner,)
        ).fetchall()
    )
    role_of = {int(r["id"]): str(r["role"]) for r in rows}
    for q in QUESTIONS:
        kept = _dense(archive, q, role_filter=[role])
        assert kept and all(role_of[i] == role for i, _ in kept)
        of_role = [h for h in _dense(archive, q) if role_of[h[0]] == role]
        assert kept[: len(of_role)] == of_role


def test_dropping_one_owners_vectors_leaves_another_owners(
    archive: Any, pg_dsn: str, owner: str, embedder: Any
) -> None:
    other = _open(pg_dsn, owner + "-b", embedder, None)
    try:
        fill(other)
        assert other.embed_pending() == 2 * len(CONVERSATIONS)
        other.drop_vectors()
        assert other.vector_coverage()["embedded"] == 0
        assert archive.vector_coverage()["embedded"] == 2 * len(CONVERSATIONS)
        assert all(_dense(archive, q) for q in QUESTIONS)
    finally:
        other.drop_vectors()
        for table in ("hm_messages", "hm_sessions", "hm_term_df"):
            other.db.run(
                lambda c, t=table: c.execute(f"DELETE FROM {t} WHERE owner = %s", (owner + "-b",))
            )
        other.close()


def test_a_vector_stored_twice_for_one_model_is_replaced(archive: Any, owner: str) -> None:
    # Two hosts embedding the same pending message: the second write replaces the first.
    from hermes_memory_postgres.archive._vector_rows import store_vectors

    model = archive.vector_index.model
    mid: Any = archive.db.run(
        lambda c: c.execute(
            "SELECT message_id FROM hm_vectors WHERE owner = %s LIMIT 1", (owner,)
        ).fetchone()
    )
    blob = b"\x00\x00\x80\x3f" + bytes(384)
    archive.db.run(lambda c: store_vectors(c, owner, model, [(int(mid["message_id"]), blob)]))
    rows: Any = archive.db.run(
        lambda c: c.execute(
            "SELECT vec FROM hm_vectors WHERE owner = %s AND message_id = %s",
            (owner, int(mid["message_id"])),
        ).fetchall()
    )
    assert [bytes(r["vec"]) for r in rows] == [blob]
