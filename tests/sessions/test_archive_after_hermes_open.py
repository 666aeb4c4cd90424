"""Our archive keeps opening after Hermes Agent opened it read-write.

Hermes' ``SessionDB`` runs its schema on every writable open: its own tables
(``messages_fts``, ``messages_fts_trigram``, ``session_model_usage``…), FTS triggers on
``messages``, missing columns, ``schema_version`` bumped, WAL. A user pointing Hermes at our
archive (to go back, or by mistake) must not lock themselves out of it; Hermes' own
``state.db`` with an earlier release's archive inside stays refused (see
test_statedb_safety.py). The real Hermes Agent does the same in
tests/hermes_compat/test_archive_compat.py.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from hermes_statedb import COMMON, L1_FTS, L1_MESSAGES, L1_SESSIONS

from hermes_memory_sessions.storage import HermesDatabaseError, SessionStore, inspect_database


def _if_not_exists(ddl: str) -> str:
    ddl = re.sub(
        r"CREATE (TABLE|VIRTUAL TABLE|TRIGGER|INDEX|UNIQUE INDEX) ",
        r"CREATE \1 IF NOT EXISTS ",
        ddl,
    )
    return ddl


def hermes_read_write_open(path: Path) -> None:
    """What Hermes' SessionDB does to a database it opens for writing (reference §1.5/1.6)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    for table, ddl in (("sessions", L1_SESSIONS), ("messages", L1_MESSAGES)):
        have = {str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")}
        body = ddl[ddl.index("(") + 1 : ddl.rindex(")")]
        for line in body.split(",\n"):
            name, _, decl = line.strip().partition(" ")
            if name not in have and "PRIMARY KEY" not in decl:
                decl = decl.replace("NOT NULL", "").replace("REFERENCES sessions(id)", "")
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")
    conn.executescript(_if_not_exists(COMMON + L1_FTS))
    conn.execute(
        "CREATE TABLE IF NOT EXISTS session_model_usage (session_id TEXT, model TEXT,"
        " task TEXT NOT NULL DEFAULT '', PRIMARY KEY (session_id, model, task))"
    )
    conn.execute("CREATE TABLE IF NOT EXISTS gateway_routing (scope TEXT, entry_json TEXT)")
    conn.execute("UPDATE schema_version SET version = 22")
    conn.close()


def _archive(path: Path) -> None:
    with SessionStore(path) as store:
        store.create_session("s1", source="cli", title="backup plan")
        store.append_message("s1", "user", "How do I rotate the postgres backups on the NAS?")
        store.append_message("s1", "assistant", "Use pg_dump nightly; 部署在周五。")


def test_archive_opens_after_hermes_opened_it_read_write(tmp_path: Path) -> None:
    path = tmp_path / "hermes-memory" / "sessions.db"
    _archive(path)
    hermes_read_write_open(path)
    assert inspect_database(path).kind == "archive"
    with SessionStore(path) as store:
        assert [m["content"][:6] for m in store.get_messages("s1")] == ["How do", "Use pg"]
        assert store.search_messages("postgres")
        assert store.search_messages("部署")
        store.append_message("s1", "user", "and the offsite copy?")
        assert store.search_messages("offsite")
    # Hermes' objects are left as they were: its next open finds its index up to date.
    conn = sqlite3.connect(path)
    try:
        indexed = conn.execute(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'offsite'"
        ).fetchone()[0]
    finally:
        conn.close()
    assert indexed == 1


def test_hermes_state_db_with_an_earlier_archive_inside_is_still_refused(tmp_path: Path) -> None:
    from hermes_statedb import build_l1, populate

    from hermes_memory_sessions.storage import _schema as schema

    state = tmp_path / "state.db"
    conn = build_l1(state)
    populate(conn, v23=False)
    conn.execute("BEGIN IMMEDIATE")
    schema._v1(conn)
    conn.execute("INSERT INTO state_meta(key, value) VALUES (?, '1')", (schema.META_SCHEMA_KEY,))
    conn.execute("COMMIT")
    conn.close()
    assert inspect_database(state).kind == "legacy"
    before = state.read_bytes()
    with pytest.raises(HermesDatabaseError, match="migrate-out"):
        SessionStore(state)
    assert state.read_bytes() == before
