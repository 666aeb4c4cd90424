"""`SessionStore.rewind_messages` (``/undo``) and `SessionStore.reopen_session` (resume).

``rewind_messages`` takes messages back out of the live conversation.
Undone messages stay in the file, marked as Hermes marks rewound rows (``active = 0``,
``compacted = 0``): search, browse and resume leave them out, exactly as for rewound rows
imported from Hermes. The session's live counters (``message_count``, ``tool_call_count``)
follow and ``rewind_count`` grows by one.

``reopen_session`` clears the end of a session a host resumes, so that it is open while in use
and a later compression can end it with ``end_reason = "compression"`` (the first end
written wins, so a stale ``session_end`` would otherwise cut the lineage).
"""

from __future__ import annotations

from collections.abc import Sequence

from hermes_memory_sessions.storage._connection import SqliteArchiveBase
from hermes_memory_sessions.storage._message_rows import count_tool_calls

__all__ = ["ArchiveRewind"]


class ArchiveRewind(SqliteArchiveBase):
    """`SessionStore`'s undo and reopen writes."""

    def rewind_messages(self, session_id: str, message_ids: Sequence[int]) -> int:
        """Mark live messages of ``session_id`` as undone; returns how many were live.

        Ids of other sessions or of rows not live are ignored. One transaction.
        """
        ids = sorted({int(i) for i in message_ids})
        if not ids:
            return 0
        marks = ",".join("?" * len(ids))
        with self._write() as conn:
            rows = conn.execute(
                f"SELECT id, role, tool_calls FROM messages WHERE session_id = ?"  # noqa: S608
                f" AND active = 1 AND id IN ({marks})",
                (session_id, *ids),
            ).fetchall()
            if not rows:
                return 0
            live = [int(r[0]) for r in rows]
            calls = sum(count_tool_calls(r[2]) for r in rows if r[1] == "assistant")
            conn.execute(
                f"UPDATE messages SET active = 0, compacted = 0"  # noqa: S608
                f" WHERE id IN ({','.join('?' * len(live))})",
                live,
            )
            conn.execute(
                "UPDATE sessions SET message_count = MAX(0, COALESCE(message_count, 0) - ?),"
                " tool_call_count = MAX(0, COALESCE(tool_call_count, 0) - ?),"
                " rewind_count = COALESCE(rewind_count, 0) + 1 WHERE id = ?",
                (len(live), calls, session_id),
            )
        return len(live)

    def reopen_session(self, session_id: str) -> bool:
        """Clear ``ended_at`` and ``end_reason`` of an ended session; True if it was ended."""
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE sessions SET ended_at = NULL, end_reason = NULL"
                " WHERE id = ? AND ended_at IS NOT NULL",
                (session_id,),
            )
            return cur.rowcount > 0
