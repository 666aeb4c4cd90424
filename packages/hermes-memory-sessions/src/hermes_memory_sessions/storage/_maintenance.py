"""`SessionStore`'s upkeep: deleting and pruning sessions, ending those a crash left open,
and the sizes and counts ``doctor`` and ``stats`` report."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from pathlib import Path
from typing import Any

from hermes_memory_sessions.storage._connection import FTS_TABLES, SqliteArchiveBase

__all__ = ["STALE_END_REASON", "ArchiveMaintenance", "delete_session_rows"]

#: ``end_reason`` written by `SessionStore.end_stale_sessions`.
STALE_END_REASON = "stale"


class ArchiveMaintenance(SqliteArchiveBase):
    """`SessionStore`'s deletion, pruning, stale-session and size methods."""

    def delete_session(self, session_id: str) -> bool:
        """Delete a session, its messages and their index rows; children become roots.

        Returns False when the session does not exist.
        """
        with self._write() as conn:
            return delete_session_rows(conn, session_id)

    def prune(self, older_than_days: float) -> int:
        """Delete *ended* sessions that started more than ``older_than_days`` ago.

        Live sessions are never pruned. Returns how many sessions were deleted.
        """
        days = float(older_than_days)
        if days < 0:
            raise ValueError("older_than_days must be >= 0")
        cutoff = time.time() - days * 86400
        with self._write() as conn:
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM sessions WHERE ended_at IS NOT NULL AND started_at < ?",
                    (cutoff,),
                ).fetchall()
            ]
            for sid in ids:
                delete_session_rows(conn, sid)
        return len(ids)

    def end_stale_sessions(self, older_than_hours: float) -> list[str]:
        """End sessions still open whose last activity is more than ``older_than_hours`` ago.

        For sessions left open by a host that crashed or was killed: each gets ``ended_at`` =
        its last activity (its last message, else its start) and ``end_reason`` =
        `STALE_END_REASON`, so `prune` can delete it once it is old enough. Returns the ids
        ended, oldest activity first.
        """
        hours = float(older_than_hours)
        if not hours >= 0:
            raise ValueError("older_than_hours must be a number >= 0")
        cutoff = time.time() - hours * 3600
        with self._write() as conn:
            rows = conn.execute(
                "SELECT id, COALESCE(last_activity_at, started_at) AS at FROM sessions"
                " WHERE ended_at IS NULL AND COALESCE(last_activity_at, started_at) < ?"
                " ORDER BY at, id",
                (cutoff,),
            ).fetchall()
            for row in rows:
                conn.execute(
                    "UPDATE sessions SET ended_at = ?, end_reason = ?"
                    " WHERE id = ? AND ended_at IS NULL",
                    (row["at"], STALE_END_REASON, row["id"]),
                )
        return [str(r["id"]) for r in rows]

    def count_open_sessions(self, older_than_days: float | None = None) -> int:
        """Sessions not ended (optionally only those started more than N days ago): what
        `prune` leaves alone; `end_stale_sessions` ends those abandoned by a crash."""
        sql = "SELECT COUNT(*) FROM sessions WHERE ended_at IS NULL"
        params: list[Any] = []
        if older_than_days is not None:
            sql += " AND started_at < ?"
            params.append(time.time() - float(older_than_days) * 86400)
        with self.read() as conn:
            return int(conn.execute(sql, params).fetchone()[0])

    def optimize(self) -> None:
        """Merge every full-text index into a single segment (fastest lookups).

        Worth running after a large import; takes seconds per 100 MB of index and holds the
        write lock meanwhile (other writers wait and retry).
        """
        self._db.optimize()

    def stats(self) -> dict[str, Any]:
        """Counts and sizes: sessions, messages, db_size_bytes (file + WAL), text_bytes."""
        with self.read() as conn:
            sessions = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
            messages = conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
            text = conn.execute(
                "SELECT COALESCE(SUM(length(CAST(content AS BLOB))), 0) FROM messages"
            ).fetchone()[0]
            by_source = {
                str(r[0]): int(r[1])
                for r in conn.execute("SELECT source, COUNT(*) FROM sessions GROUP BY source")
            }
        size = 0
        for p in (self.path, Path(f"{self.path}-wal")):
            with contextlib.suppress(OSError):
                size += p.stat().st_size
        return {
            "sessions": int(sessions),
            "messages": int(messages),
            "db_size_bytes": size,
            "text_bytes": int(text),
            "by_source": by_source,
            "journal_mode": self._db.journal_mode,
            "path": str(self.path),
        }

    def index_sizes(self) -> dict[str, int]:
        """Bytes used by each full-text index (all its shadow tables), via ``dbstat``."""
        out: dict[str, int] = {}
        with self.read() as conn:
            try:
                rows = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
            except sqlite3.OperationalError:
                return out
        for name, size in rows:
            for prefix in (*FTS_TABLES, "hm_cjk_docs"):
                if str(name).startswith(prefix):
                    key = "hm_fts_cjk" if prefix == "hm_cjk_docs" else prefix
                    out[key] = out.get(key, 0) + int(size)
        return out


def delete_session_rows(conn: sqlite3.Connection, session_id: str) -> bool:
    """Delete one session and its messages inside the caller's write; children become
    roots. False when it does not exist."""
    if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
        return False
    conn.execute(
        "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?",
        (session_id,),
    )
    conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
    conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
    return True
