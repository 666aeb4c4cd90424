"""`SessionStore`'s import methods: whole sessions inserted with their own ids and times,
and the bookkeeping that lets a later import of the same source add only what is new."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Mapping
from typing import Any

from hermes_memory_sessions.storage._connection import SqliteArchiveBase
from hermes_memory_sessions.storage._message_rows import check_id, insert_messages, schema_columns
from hermes_memory_sessions.storage._titles import check_title_free, sanitize_title

__all__ = ["ArchiveImports"]


class ArchiveImports(SqliteArchiveBase):
    """`SessionStore`'s imports and their per-source bookkeeping."""

    def import_session(
        self,
        session: Mapping[str, Any],
        messages: Iterable[Mapping[str, Any]],
        *,
        keep_ids: bool = False,
        import_source: str | None = None,
        source_last_id: int | None = None,
    ) -> str:
        """Insert one complete session (row + messages) in one transaction; returns its id.

        ``session`` may carry any ``sessions`` column (unknown keys are ignored);
        ``started_at`` defaults to the first message's timestamp (or now), ``source`` to
        ``"cli"``. ``message_count``/``tool_call_count`` default to what was inserted.
        Messages keep their order, timestamps and stored fields. Their ``id`` is reassigned
        unless ``keep_ids`` is true: then each message's ``id`` is kept (an id already in the
        archive is a ValueError and nothing is imported; later appends get larger ids).
        With ``import_source`` the session is recorded, in the same transaction, as created
        by an import of that source, ``source_last_id`` being the last source message id it
        holds (see `import_more`).
        Raises ValueError when the session id already exists or a title is taken.
        """
        sid = check_id(session.get("id"))
        msgs = list(messages)
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchone():
                raise ValueError(f"session {sid!r} already exists in the archive")
            columns = schema_columns(conn, "sessions")
            row = {k: v for k, v in session.items() if k in columns}
            row["id"] = sid
            row["source"] = row.get("source") or "cli"
            if row.get("started_at") is None:
                first = next((m.get("timestamp") for m in msgs if m.get("timestamp")), None)
                row["started_at"] = float(first) if first is not None else time.time()
            if row.get("title") is not None:
                row["title"] = sanitize_title(row["title"])
                if row["title"] is not None:
                    check_title_free(conn, row["title"], sid)
            given_count = row.pop("message_count", None)
            given_tools = row.pop("tool_call_count", None)
            given_activity = row.pop("last_activity_at", None)
            conn.execute(
                f"INSERT INTO sessions({','.join(row)}) VALUES ({','.join('?' * len(row))})",  # noqa: S608
                list(row.values()),
            )
            if keep_ids:
                wanted = [m.get("id") for m in msgs]
                if any(not isinstance(i, int) or isinstance(i, bool) for i in wanted):
                    raise ValueError("keep_ids=True needs an integer 'id' on every message")
                if len(set(wanted)) != len(wanted):
                    raise ValueError("duplicate message ids in the imported session")
                for chunk in range(0, len(wanted), 500):
                    part = wanted[chunk : chunk + 500]
                    taken = conn.execute(
                        f"SELECT id FROM messages WHERE id IN ({','.join('?' * len(part))})",  # noqa: S608
                        part,
                    ).fetchone()
                    if taken:
                        raise ValueError(f"message id {taken[0]} already exists in the archive")
            insert_messages(conn, sid, msgs, keep_ids=keep_ids)
            self._db.messages_written(len(msgs))
            updates = {
                "message_count": given_count,
                "tool_call_count": given_tools,
                "last_activity_at": given_activity,
            }
            sets = {k: v for k, v in updates.items() if v is not None}
            if sets:
                conn.execute(
                    f"UPDATE sessions SET {', '.join(f'{k} = ?' for k in sets)} WHERE id = ?",  # noqa: S608
                    [*sets.values(), sid],
                )
            if import_source is not None:
                _record_import(conn, import_source, sid, source_last_id)
        return sid

    def import_more(
        self,
        session_id: str,
        messages: Iterable[Mapping[str, Any]],
        *,
        import_source: str,
        source_last_id: int,
        ended_at: float | None = None,
        end_reason: str | None = None,
    ) -> bool:
        """Append messages that an import source added to a session it created earlier.

        One transaction: the messages (as `append_messages`), the session's end when the
        source has ended it and the archive has not, and the new ``source_last_id``. Returns
        True when anything changed. ValueError when the session is not in the archive.
        """
        with self._write() as conn:
            if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                raise ValueError(f"session_id not found: {session_id}")
            ids = insert_messages(conn, session_id, messages)
            self._db.messages_written(len(ids))
            changed = bool(ids)
            if ended_at is not None:
                cur = conn.execute(
                    "UPDATE sessions SET ended_at = ?, end_reason = COALESCE(?, end_reason)"
                    " WHERE id = ? AND ended_at IS NULL",
                    (float(ended_at), end_reason, session_id),
                )
                changed = changed or cur.rowcount > 0
            _record_import(conn, import_source, session_id, source_last_id)
        return changed

    def import_state(self, source: str) -> tuple[int, dict[str, int]]:
        """What earlier imports of ``source`` did: ``(watermark, {session_id: last source
        message id})`` (``(0, {})`` for a source never imported)."""
        with self.read() as conn:
            row = conn.execute(
                "SELECT last_message_id FROM hm_import_sources WHERE source = ?", (source,)
            ).fetchone()
            sessions = {
                str(r[0]): int(r[1])
                for r in conn.execute(
                    "SELECT i.session_id, i.last_message_id FROM hm_import_sessions i"
                    " JOIN sessions s ON s.id = i.session_id WHERE i.source = ?",
                    (source,),
                )
            }
        return (int(row[0]) if row else 0), sessions

    def set_import_watermark(
        self, source: str, message_id: int, *, sessions: int = 0, messages: int = 0
    ) -> None:
        """Record that every message of ``source`` up to ``message_id`` has been looked at."""
        with self._write() as conn:
            conn.execute(
                "INSERT INTO hm_import_sources(source, last_message_id, imported_at, sessions,"
                " messages) VALUES (?, ?, ?, ?, ?) ON CONFLICT(source) DO UPDATE SET"
                " last_message_id = excluded.last_message_id,"
                " imported_at = excluded.imported_at,"
                " sessions = hm_import_sources.sessions + excluded.sessions,"
                " messages = hm_import_sources.messages + excluded.messages",
                (source, int(message_id), time.time(), int(sessions), int(messages)),
            )

    def forget_import_source(self, source: str) -> None:
        """Drop the bookkeeping of ``source`` (its sessions stay; a re-import skips them)."""
        with self._write() as conn:
            conn.execute("DELETE FROM hm_import_sources WHERE source = ?", (source,))
            conn.execute("DELETE FROM hm_import_sessions WHERE source = ?", (source,))


def _record_import(
    conn: sqlite3.Connection, source: str, session_id: str, last_id: int | None
) -> None:
    conn.execute(
        "INSERT INTO hm_import_sessions(source, session_id, last_message_id) VALUES (?, ?, ?)"
        " ON CONFLICT(source, session_id) DO UPDATE SET"
        " last_message_id = MAX(last_message_id, excluded.last_message_id)",
        (source, session_id, int(last_id or 0)),
    )
