"""`PostgresSessionArchive.rewind_messages` (``/undo``) and ``reopen_session`` (resume) on
PostgreSQL, as the SQLite archive does them (`hermes_memory_sessions.storage`): undone
rows stay, marked ``active = 0, compacted = 0``, so search, browse and resume leave them
out; the live counters follow. A reopened session has no end again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from hermes_memory_postgres.archive._core import ArchiveCore
from hermes_memory_sessions.storage import count_tool_calls

__all__ = ["ArchiveRewind"]


class ArchiveRewind(ArchiveCore):
    """The undo and reopen writes of one owner's sessions."""

    def rewind_messages(self, session_id: str, message_ids: Sequence[int]) -> int:
        """Mark live messages of ``session_id`` as undone; returns how many were live."""
        ids = sorted({int(i) for i in message_ids})
        if not ids:
            return 0

        def run(conn: psycopg.Connection[Any]) -> int:
            rows = conn.execute(
                "UPDATE hm_messages SET active = 0, compacted = 0 WHERE owner = %s"
                " AND session_id = %s AND active = 1 AND id = ANY(%s)"
                " RETURNING role, tool_calls",
                (self.owner, session_id, ids),
            ).fetchall()
            if not rows:
                return 0
            calls = sum(count_tool_calls(r["tool_calls"]) for r in rows if r["role"] == "assistant")
            conn.execute(
                "UPDATE hm_sessions SET"
                " message_count = GREATEST(0, COALESCE(message_count, 0) - %s),"
                " tool_call_count = GREATEST(0, COALESCE(tool_call_count, 0) - %s),"
                " rewind_count = COALESCE(rewind_count, 0) + 1 WHERE owner = %s AND id = %s",
                (len(rows), calls, self.owner, session_id),
            )
            return len(rows)

        return int(self._write(run))

    def reopen_session(self, session_id: str) -> bool:
        """Clear ``ended_at`` and ``end_reason`` of an ended session; True if it was ended."""
        known = self._known.get(session_id)
        if known is not None:
            known["ended_at"] = None
        cur_count = self._write(
            lambda conn: (
                conn.execute(
                    "UPDATE hm_sessions SET ended_at = NULL, end_reason = NULL"
                    " WHERE owner = %s AND id = %s AND ended_at IS NOT NULL",
                    (self.owner, session_id),
                ).rowcount
            )
        )
        return bool(cur_count)
