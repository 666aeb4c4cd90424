"""`SessionStore`'s recording methods: sessions started and ended, messages appended.

Every write is one ``BEGIN IMMEDIATE`` transaction (see `archive_connection`), so several
processes can append at once without losing rows.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from hermes_memory_sessions.search._shaping import single_message
from hermes_memory_sessions.storage._connection import SqliteArchiveBase
from hermes_memory_sessions.storage._message_rows import check_id, insert_messages, scrub_messages
from hermes_memory_sessions.storage._titles import (
    check_title_free,
    clean_title,
    next_title_in_lineage,
)

__all__ = ["ArchiveWrites"]


class ArchiveWrites(SqliteArchiveBase):
    """`SessionStore`'s session and message writes."""

    # Provided by `ArchiveVectors` in `SessionStore` (declared, not defined, so the MRO
    # finds that one).
    _notify_vectors: Callable[[Sequence[int]], None]
    #: Whether appended messages and titles are masked of credentials (set by `SessionStore`).
    scrub_secrets: bool

    def create_session(
        self,
        session_id: str,
        *,
        source: str = "cli",
        model: str | None = None,
        parent_session_id: str | None = None,
        title: str | None = None,
        started_at: float | None = None,
    ) -> str:
        """Create a session row (no-op if ``session_id`` already exists); returns the id.

        ``title`` is sanitised, masked of credentials with ``scrub_secrets`` on (`clean_title`),
        and must be unique (ValueError otherwise). ``started_at`` defaults to now (epoch
        seconds). A continuation of a titled session that compression ended gets the next
        numbered title of the lineage (``"x"`` → ``"x #2"``) unless a title is given, with the
        parent's title provenance.
        """
        session_id = check_id(session_id)
        clean = clean_title(title, scrub=self.scrub_secrets)
        provenance = "user" if clean is not None else None
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                return session_id
            if clean is None and parent_session_id:
                parent = conn.execute(
                    "SELECT title, title_source, end_reason FROM sessions WHERE id = ?",
                    (parent_session_id,),
                ).fetchone()
                if parent and parent[0] and parent[2] == "compression":
                    clean = next_title_in_lineage(conn, str(parent[0]))
                    provenance = parent[1] or "user"
            if clean is not None:
                check_title_free(conn, clean, session_id)
            conn.execute(
                "INSERT INTO sessions(id, source, model, parent_session_id, title, title_source,"
                " started_at, last_activity_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
                (
                    session_id,
                    source or "cli",
                    model,
                    parent_session_id or None,
                    clean,
                    provenance,
                    float(started_at) if started_at is not None else time.time(),
                ),
            )
        return session_id

    def end_session(self, session_id: str, end_reason: str) -> bool:
        """Mark a session ended; the first writer wins. True if this call ended it."""
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ?"
                " WHERE id = ? AND ended_at IS NULL",
                (time.time(), end_reason, session_id),
            )
            return cur.rowcount > 0

    def append_message(self, session_id: str, role: str, content: Any, **fields: Any) -> int:
        """Append one message; returns its id (globally increasing).

        ``fields`` are the keywords of `SessionArchive.append_message` (``tool_name``,
        ``tool_calls``, ``tool_call_id``, ``timestamp``). Raises ValueError when the session
        does not exist or ``role`` is empty, TypeError for another keyword. Credentials in
        the text are masked as in `append_messages`.
        """
        return self.append_messages(session_id, [single_message(role, content, **fields)])[0]

    def append_messages(self, session_id: str, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        """Append many messages to one session in a single transaction; returns their ids.

        With ``scrub_secrets`` on (the default) credentials in each message's free text
        (``content``, ``tool_calls``, ``reasoning``, ``reasoning_content``, ``api_content``)
        are masked before anything is written (`message_rows.scrub_messages`); role, ids,
        timestamps and ``tool_name`` are stored as given.
        """
        if self.scrub_secrets:
            messages = scrub_messages(messages)
        with self._write() as conn:
            if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                raise ValueError(f"session_id not found: {session_id}")
            ids = insert_messages(conn, session_id, messages)
            self._db.messages_written(len(ids))
        self._notify_vectors(ids)
        return ids
