"""The ``hm_vectors`` table beside the messages, and the triggers that keep it in sync.

A deleted message loses its vectors; an edited message (and the two messages after it,
whose context it is) loses its vectors and is embedded again. A message may hold one vector
per model (the fast and the quality tier, `hermes_memory_sessions.vectors._tiers`); an
archive made when one vector per message was the rule is migrated in place. See
`hermes_memory_sessions.vectors._index` for the layout.
"""

from __future__ import annotations

import sqlite3

__all__ = ["ensure_vector_schema", "has_vector_table"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS hm_vectors (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id INTEGER NOT NULL,
    model TEXT NOT NULL,
    vec BLOB NOT NULL,
    UNIQUE (message_id, model)
);
CREATE TRIGGER IF NOT EXISTS hm_vectors_msg_ad AFTER DELETE ON messages BEGIN
    DELETE FROM hm_vectors WHERE message_id = OLD.id;
END;
CREATE TRIGGER IF NOT EXISTS hm_vectors_msg_au AFTER UPDATE OF content, role ON messages
WHEN OLD.content IS NOT NEW.content OR OLD.role IS NOT NEW.role BEGIN
    DELETE FROM hm_vectors WHERE message_id = OLD.id;
    DELETE FROM hm_vectors WHERE message_id IN (
        SELECT id FROM messages WHERE session_id = OLD.session_id AND id > OLD.id
        ORDER BY id LIMIT 2);
END;
"""


def ensure_vector_schema(conn: sqlite3.Connection) -> None:
    """Create ``hm_vectors`` and its triggers (idempotent; migrates the one-vector-per-
    message layout, keeping every vector and its ``seq``); the caller holds a write."""
    row = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'hm_vectors'"
    ).fetchone()
    if row is not None and "message_id INTEGER NOT NULL UNIQUE" in str(row[0]):
        _migrate_per_model(conn)
    buffer = ""
    for line in _SCHEMA.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            conn.execute(buffer)
            buffer = ""


def _migrate_per_model(conn: sqlite3.Connection) -> None:
    """``UNIQUE (message_id)`` to ``UNIQUE (message_id, model)``: SQLite cannot drop a
    constraint, so the table is copied (seq kept: the in-memory codes stay valid)."""
    # The triggers name hm_vectors: drop them while the table is swapped, recreated after.
    conn.execute("DROP TRIGGER IF EXISTS hm_vectors_msg_ad")
    conn.execute("DROP TRIGGER IF EXISTS hm_vectors_msg_au")
    conn.execute(
        "CREATE TABLE hm_vectors_new (seq INTEGER PRIMARY KEY AUTOINCREMENT,"
        " message_id INTEGER NOT NULL, model TEXT NOT NULL, vec BLOB NOT NULL,"
        " UNIQUE (message_id, model))"
    )
    conn.execute(
        "INSERT INTO hm_vectors_new(seq, message_id, model, vec)"
        " SELECT seq, message_id, model, vec FROM hm_vectors ORDER BY seq"
    )
    # seq never goes back (another process's codes were loaded up to the old high mark).
    high = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'hm_vectors'").fetchone()
    conn.execute("DROP TABLE hm_vectors")
    conn.execute("ALTER TABLE hm_vectors_new RENAME TO hm_vectors")
    if high is not None:
        conn.execute(
            "UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'hm_vectors'", (high[0],)
        )


def has_vector_table(conn: sqlite3.Connection) -> bool:
    """Whether the archive has a vector table (it may be empty)."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'hm_vectors'"
    ).fetchone()
    return row is not None
