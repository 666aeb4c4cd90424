"""PostgreSQL indexes the same bounded text of a message as the SQLite archive, and rows
indexed whole by a release without the cap are re-indexed when the archive opens."""

from __future__ import annotations

import psycopg

from hermes_memory_postgres import PostgresSessionArchive
from hermes_memory_postgres._text import cjk_tsvector, tsvector_literal, word_tokens, words_document
from hermes_memory_postgres.archive._recap import INDEX_CAP_KEY, cap_marker, recap_long_rows
from hermes_memory_sessions.storage import MESSAGE_INDEX_PREFIX


def test_a_long_message_is_indexed_up_to_the_prefix() -> None:
    head = "earlybird " + "x" * (MESSAGE_INDEX_PREFIX - 10)
    tokens = words_document("user", f"{head} latecomer", None, None)
    assert "earlybird" in tokens and "latecomer" not in tokens
    calls = words_document("assistant", "ok", None, f"{head} latecomer")
    assert "earlybird" in calls and "latecomer" not in calls


def test_cjk_past_the_prefix_is_not_indexed() -> None:
    head = "部署" + "x" * MESSAGE_INDEX_PREFIX
    vector = cjk_tsvector("user", f"{head} 周五", None) or ""
    assert "部署" in vector and "周五" not in vector


def _ids(store: PostgresSessionArchive, query: str) -> list[int]:
    hits = store.find_hits(query)
    return [] if hits is None else sorted(int(r["id"]) for r in hits.rows)


def _uncap(dsn: str, owner: str, ident: int, text: str) -> None:
    """Give one row the index a release without the cap wrote: its whole text, with the
    term statistics that went with it, and no cap recorded."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "UPDATE hm_messages SET words = %s::tsvector WHERE owner = %s AND id = %s",
            (tsvector_literal(word_tokens(text)), owner, ident),
        )
        conn.execute(
            "INSERT INTO hm_term_df (owner, lexeme, df) VALUES (%s, 'latecomer', 1)"
            " ON CONFLICT (owner, lexeme) DO UPDATE SET df = hm_term_df.df + 1",
            (owner,),
        )
        conn.execute("DELETE FROM hm_index_meta WHERE key = %s", (INDEX_CAP_KEY,))


def _df(dsn: str, owner: str, lexeme: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT df FROM hm_term_df WHERE owner = %s AND lexeme = %s", (owner, lexeme)
        ).fetchone()
    return 0 if row is None else int(row[0])


def test_rows_indexed_before_the_cap_are_reindexed_when_the_archive_opens(
    schema_dsn: str, owner: str
) -> None:
    head = "earlybird " + " ".join(f"w{i}" for i in range(MESSAGE_INDEX_PREFIX // 4))
    text = f"{head} latecomer"
    store = PostgresSessionArchive(schema_dsn, owner=owner)
    try:
        store.create_session("s", source="cli")
        long_id = store.append_message("s", "user", text)
        short_id = store.append_message("s", "user", "a short latecomer note")
        _uncap(schema_dsn, owner, long_id, text)
        assert _ids(store, "latecomer") == [long_id, short_id]  # the old index shape
        assert _df(schema_dsn, owner, "latecomer") == 2
    finally:
        store.close()
    reopened = PostgresSessionArchive(schema_dsn, owner=owner)  # this release's code
    try:
        assert _ids(reopened, "latecomer") == [short_id]  # past the cap: no longer indexed
        assert _ids(reopened, "earlybird") == [long_id]  # the first 32,768 chars still are
        assert _ids(reopened, "w100") == [long_id]
        assert reopened.get_messages("s")[0]["content"] == text  # stored whole
    finally:
        reopened.close()
    assert _df(schema_dsn, owner, "latecomer") == 1  # the statistics follow the index
    with psycopg.connect(schema_dsn) as conn:
        meta = dict(conn.execute("SELECT key, value FROM hm_index_meta").fetchall())
        row = conn.execute(
            "SELECT words::text FROM hm_messages WHERE owner = %s AND id = %s", (owner, long_id)
        ).fetchone()
    assert meta[INDEX_CAP_KEY] == cap_marker() and "index_cap_resume" not in meta
    assert row is not None and "'latecomer'" not in row[0] and "'earlybird'" in row[0]


def test_an_interrupted_reindex_resumes_where_it_stopped(schema_dsn: str, owner: str) -> None:
    text = "earlybird " + "x " * MESSAGE_INDEX_PREFIX + "latecomer"
    store = PostgresSessionArchive(schema_dsn, owner=owner)
    try:
        store.create_session("s", source="cli")
        first, second = (store.append_message("s", "user", text) for _ in range(2))
    finally:
        store.close()
    for ident in (first, second):
        _uncap(schema_dsn, owner, ident, text)
    with psycopg.connect(schema_dsn, autocommit=True) as conn:
        # a run that stopped after the first row (its window was committed)
        conn.execute(
            "INSERT INTO hm_index_meta(key, value) VALUES ('index_cap_resume', %s)",
            (f"{owner}\t{first}",),
        )
    with psycopg.connect(schema_dsn) as conn:
        assert recap_long_rows(conn, window=1) == 1  # only the row after the resume point
        words = dict(
            conn.execute(
                "SELECT id, words::text FROM hm_messages WHERE owner = %s", (owner,)
            ).fetchall()
        )
        assert "latecomer" in words[first] and "latecomer" not in words[second]
        assert recap_long_rows(conn) == 0  # done: the cap is recorded


def test_a_window_full_of_long_rows_is_rewritten_in_several_transactions(
    schema_dsn: str, owner: str
) -> None:
    text = "earlybird " + "x " * MESSAGE_INDEX_PREFIX + "latecomer"
    store = PostgresSessionArchive(schema_dsn, owner=owner)
    try:
        store.create_session("s", source="cli")
        ids = [store.append_message("s", "user", text) for _ in range(3)]
    finally:
        store.close()
    for ident in ids:
        _uncap(schema_dsn, owner, ident, text)
    with psycopg.connect(schema_dsn) as conn:
        assert recap_long_rows(conn, max_long=1) == 3
        assert conn.execute(
            "SELECT count(*) FROM hm_messages WHERE owner = %s AND words @@ 'latecomer'",
            (owner,),
        ).fetchone() == (0,)
    assert _df(schema_dsn, owner, "latecomer") == 0


def test_a_reindex_in_another_schema_does_not_stop_this_one(
    schema_dsn: str, pg_dsn: str, owner: str
) -> None:
    """The re-index lock is per schema: while a host re-indexes another schema of the same
    database (its lock held), this schema's rows are re-indexed, not skipped; while a host
    holds this schema's lock, they are left to that host."""
    from hermes_memory_postgres.archive import _recap

    text = "earlybird " + "x " * MESSAGE_INDEX_PREFIX + "latecomer"
    store = PostgresSessionArchive(schema_dsn, owner=owner)
    try:
        store.create_session("s", source="cli")
        ident = store.append_message("s", "user", text)
    finally:
        store.close()
    _uncap(schema_dsn, owner, ident, text)
    lock = f"SELECT pg_advisory_lock(%s, {_recap._LOCK_SCHEMA})"
    with psycopg.connect(schema_dsn, autocommit=True) as here:
        here.execute(lock, (_recap._LOCK_KEY,))  # this schema's work, held by "a host"
        with psycopg.connect(schema_dsn) as conn:
            assert recap_long_rows(conn) == 0  # left to the host holding it
    with psycopg.connect(pg_dsn, autocommit=True) as elsewhere:
        elsewhere.execute(lock, (_recap._LOCK_KEY,))  # another schema's re-index runs
        with psycopg.connect(schema_dsn) as conn:
            assert recap_long_rows(conn) == 1
