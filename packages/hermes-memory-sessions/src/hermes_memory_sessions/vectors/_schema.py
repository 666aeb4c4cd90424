"""The ``hm_vectors`` table beside the messages, and the triggers that keep it in sync.

A deleted message loses its vector; an edited message (and the two messages after it,
whose context it is) loses its vector and is embedded again. See
`hermes_memory_sessions.vectors._index` for the layout.
"""

from __future__ import annotations

import sqlite3

__all__ = ["ensure_vector_schema", "has_vector_table"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS hm_vectors (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id INTEGER NOT NULL UNIQUE,
    model TEXT NOT NULL,
    vec BLOB NOT NULL
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
    """Create ``hm_vectors`` and its triggers (idempotent); the caller holds a write."""
    buffer = ""
    for line in _SCHEMA.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            conn.execute(buffer)
            buffer = ""


def has_vector_table(conn: sqlite3.Connection) -> bool:
    """Whether the archive has a vector table (it may be empty)."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'hm_vectors'"
    ).fetchone()
    return row is not None
