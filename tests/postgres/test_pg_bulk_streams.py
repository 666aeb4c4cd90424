"""`bulk_import_batches`: several batches in flight on separate connections give what
sequential `bulk_import` calls give - every message exactly, ids ascending in batch order,
the same term statistics - and a bad batch stops the stream without losing the ones
before it. The deferred index builds of `bulk_loading` run two at once."""

from __future__ import annotations

from itertools import chain, pairwise
from typing import Any

import psycopg
import pytest

from hermes_memory_postgres import PostgresSessionArchive
from hermes_memory_postgres._schema import BULK_DEFERRED, missing_deferred
from hermes_memory_postgres.archive._ingest import PARALLEL_BUILDS

Batch = list[tuple[dict[str, Any], list[dict[str, Any]]]]


def _batches(prefix: str, n_batches: int = 6, per_batch: int = 4) -> list[Batch]:
    out: list[Batch] = []
    t = 1_700_000_000.0
    for b in range(n_batches):
        batch: Batch = []
        for s in range(per_batch):
            msgs: list[dict[str, Any]] = []
            for i in range(3 + (b + s) % 5):
                t += 1.0
                content = f"batch {b} session {s} line {i} zebra 北京天气 café"
                if i == 1:
                    content += " with\x00nul"
                msgs.append(
                    {"role": "user" if i % 2 == 0 else "assistant", "content": content,
                     "timestamp": t}
                )  # fmt: skip
            if s == 0:
                msgs.append(
                    {"role": "assistant", "content": None, "timestamp": t + 0.5,
                     "tool_calls": [{"function": {"name": "lookup", "arguments": "{}"}}]}
                )  # fmt: skip
            batch.append(({"id": f"{prefix}-{b}-{s}", "title": f"{prefix} {b}/{s}"}, msgs))
        out.append(batch)
    return out


def _term_df_differences(a: PostgresSessionArchive, b: PostgresSessionArchive) -> list[Any]:
    """Lexemes whose statistics differ between two owners (none when identical)."""
    return a.db.run(
        lambda c: c.execute(
            "SELECT COALESCE(x.lexeme, y.lexeme) AS lexeme, x.df AS a, y.df AS b FROM"
            " (SELECT lexeme, df FROM hm_term_df WHERE owner = %s) x FULL JOIN"
            " (SELECT lexeme, df FROM hm_term_df WHERE owner = %s) y ON x.lexeme = y.lexeme"
            " WHERE x.df IS DISTINCT FROM y.df",
            (a.owner, b.owner),
        ).fetchall()
    )


def test_streams_keep_every_message_and_the_id_order(pg_dsn: str, owner: str) -> None:
    batches = _batches("st")
    streamed = PostgresSessionArchive(pg_dsn, owner=owner)
    sequential = PostgresSessionArchive(pg_dsn, owner=owner + "-seq")
    try:
        want = sum(len(ms) for batch in batches for _, ms in batch)
        assert streamed.bulk_import_batches(iter(batches), streams=3) == want
        for batch in batches:
            sequential.bulk_import(batch)
        batch_ids: list[list[int]] = []
        for batch in batches:
            ids: list[int] = []
            for session, msgs in batch:
                got = streamed.get_messages(session["id"])
                assert [m["content"] for m in got] == [m["content"] for m in msgs]
                assert [m["timestamp"] for m in got] == [m["timestamp"] for m in msgs]
                assert [m["role"] for m in got] == [m["role"] for m in msgs]
                assert [m["id"] for m in got] == sorted(m["id"] for m in got)
                row = streamed.get_session(session["id"])
                assert row is not None and row["title"] == session["title"]
                ids.extend(m["id"] for m in got)
            batch_ids.append(ids)
        for earlier, later in pairwise(batch_ids):
            assert max(earlier) < min(later)  # ids ascend in batch order
        assert _term_df_differences(streamed, sequential) == []
        assert streamed.stats()["messages"] == want
        for query in ("zebra 北京", "cafe", "天气", "lookup"):  # the same search results
            hits, seq = streamed.find_hits(query, limit=500), sequential.find_hits(query, limit=500)
            assert hits is not None and seq is not None and hits.rows
            assert [(r["session_id"], r["timestamp"]) for r in hits.rows] == [
                (r["session_id"], r["timestamp"]) for r in seq.rows
            ]
    finally:
        streamed.close()
        sequential.close()


def test_a_bad_batch_stops_the_stream(pg_dsn: str, owner: str) -> None:
    good = _batches("bad", n_batches=4, per_batch=2)
    bad = [({"id": "bad-x"}, [{"role": "", "content": "no role"}])]
    archive = PostgresSessionArchive(pg_dsn, owner=owner)
    try:
        with pytest.raises(ValueError, match="role"):
            archive.bulk_import_batches(iter([good[0], good[1], bad, good[3]]), streams=2)
        for batch in (good[0], good[1]):  # before the bad batch: imported
            for session, msgs in batch:
                assert len(archive.get_messages(session["id"])) == len(msgs)
        for session, _ in good[3]:  # after it: never started
            assert archive.get_session(session["id"]) is None
        assert archive.get_session("bad-x") is None
        with pytest.raises(psycopg.errors.UniqueViolation):  # a session id already there
            archive.bulk_import_batches(iter([good[2], good[0]]), streams=2)
        assert len(archive.get_messages(good[2][0][0]["id"])) == len(good[2][0][1])
    finally:
        archive.close()


@pytest.mark.parametrize("streams", [0, 9, True, 1.5])
def test_streams_must_be_a_small_integer(pg_dsn: str, owner: str, streams: Any) -> None:
    archive = PostgresSessionArchive(pg_dsn, owner=owner)
    try:
        with pytest.raises(ValueError, match="streams"):
            archive.bulk_import_batches([], streams=streams)
        assert archive.bulk_import_batches([], streams=1) == 0
    finally:
        archive.close()


def test_parallel_builds_name_every_deferred_index() -> None:
    names = list(chain.from_iterable(PARALLEL_BUILDS))
    assert len(names) == len(set(names))
    fk = {n for n, ddl in BULK_DEFERRED.items() if "FOREIGN KEY" in ddl}
    assert set(names) == set(BULK_DEFERRED) - fk


def test_a_streamed_load_into_an_empty_table_builds_every_index(
    schema_dsn: str, owner: str
) -> None:
    archive = PostgresSessionArchive(schema_dsn, owner=owner)
    try:
        with archive.bulk_loading() as deferred:
            assert deferred
            archive.bulk_import_batches(iter(_batches("ld", n_batches=5)), streams=2)
        assert archive.db.run(missing_deferred) == []
        hits = archive.find_hits("北京", limit=200)
        assert hits is not None and len(hits.rows) > 0
        assert archive.stats()["messages"] == sum(
            len(ms) for batch in _batches("ld", n_batches=5) for _, ms in batch
        )
    finally:
        archive.close()
