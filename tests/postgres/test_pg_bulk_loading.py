"""`bulk_loading`: a load into an empty database defers the full-text indexes and builds
them at the end; with rows present it changes nothing; an interrupted load is repaired by
the next process. Each test works in a schema of its own (an empty ``hm_messages``: the
``schema_dsn`` fixture)."""

from __future__ import annotations

import psycopg
import pytest

from hermes_memory_postgres import PostgresSessionArchive
from hermes_memory_postgres._schema import BULK_DEFERRED, missing_deferred
from hermes_memory_postgres.archive._ingest import _drop_deferred_if_empty


def _sessions(prefix: str, n: int) -> list[tuple[dict[str, str], list[dict[str, object]]]]:
    return [
        (
            {"id": f"{prefix}{i}"},
            [
                {"role": "user", "content": f"zebra crossing number {i} 北京", "timestamp": i},
                {"role": "assistant", "content": "noted", "timestamp": i + 0.5},
            ],
        )
        for i in range(n)
    ]


def _missing(archive: PostgresSessionArchive) -> list[str]:
    return archive.db.run(missing_deferred)


def test_a_load_into_an_empty_table_builds_the_indexes_at_the_end(schema_dsn, owner):
    archive = PostgresSessionArchive(schema_dsn, owner=owner)
    assert _missing(archive) == []
    with archive.bulk_loading() as deferred:
        assert deferred
        assert sorted(_missing(archive)) == sorted(BULK_DEFERRED)
        assert archive.bulk_import(_sessions("a", 30)) == 60
        inside = archive.find_hits("zebra 7", limit=5)  # no index: the table is scanned
        assert inside is not None and inside.rows[0]["session_id"] == "a7"
    assert _missing(archive) == []
    pages, visible = archive.db.run(
        lambda c: c.execute(
            "SELECT relpages, relallvisible FROM pg_class WHERE oid = 'hm_messages'::regclass"
        ).fetchone()
    ).values()
    assert pages > 0 and visible == pages  # vacuumed, not only analysed
    hits = archive.find_hits("北京", limit=100)
    assert hits is not None and len(hits.rows) == 30
    words = archive.find_hits("crossing", limit=100)
    assert words is not None and len(words.rows) == 30
    first = archive.get_messages("a3")[0]["id"]
    assert len(archive.get_messages_around("a3", first, 5)["window"]) == 2
    with pytest.raises(psycopg.errors.ForeignKeyViolation):  # the key is back, and checked
        archive.db.run(
            lambda c: c.execute(
                "INSERT INTO hm_messages (owner, id, session_id, role, timestamp)"
                " VALUES (%s, 999999999, 'no-such-session', 'user', 0)",
                (owner,),
            )
        )
    with archive.bulk_loading() as deferred_again:  # rows present: nothing is dropped
        assert not deferred_again
        assert _missing(archive) == []
        archive.bulk_import(_sessions("b", 2))
    assert archive.stats()["messages"] == 64
    archive.close()


def test_another_owners_rows_keep_the_indexes(schema_dsn, owner):
    other = PostgresSessionArchive(schema_dsn, owner=owner + "-other")
    other.create_session("x")
    other.append_message("x", "user", "already here")
    archive = PostgresSessionArchive(schema_dsn, owner=owner)
    with archive.bulk_loading() as deferred:
        assert not deferred and _missing(archive) == []
        archive.bulk_import(_sessions("a", 3))
    assert archive.find_hits("zebra", limit=10) is not None
    other.close()
    archive.close()


def test_an_interrupted_load_is_repaired_by_the_next_process(schema_dsn, owner):
    archive = PostgresSessionArchive(schema_dsn, owner=owner)
    assert archive.db.run(_drop_deferred_if_empty)  # a load that never reached its end
    archive.bulk_import(_sessions("a", 3))
    assert sorted(_missing(archive)) == sorted(BULK_DEFERRED)
    archive.close()
    reopened = PostgresSessionArchive(schema_dsn, owner=owner)  # a new Database migrates
    assert _missing(reopened) == []
    hits = reopened.find_hits("北京", limit=10)
    assert hits is not None and len(hits.rows) == 3
    reopened.close()


def test_a_busy_table_is_not_taken_from_its_users(schema_dsn, owner):
    archive = PostgresSessionArchive(schema_dsn, owner=owner)
    assert _missing(archive) == []
    with psycopg.connect(schema_dsn) as reader:  # a reader on another host, mid-transaction
        reader.execute("SELECT COUNT(*) FROM hm_messages").fetchone()
        with archive.bulk_loading() as deferred:  # waits 2 s for the lock, then goes on
            assert not deferred
            assert _missing(archive) == []
            archive.bulk_import(_sessions("a", 2))
        reader.rollback()
    hits = archive.find_hits("zebra", limit=10)
    assert hits is not None and len(hits.rows) == 2
    archive.close()
