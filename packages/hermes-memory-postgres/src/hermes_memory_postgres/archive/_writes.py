"""`TurnWrites`: the agent's writes of sessions and messages, each durable.

``create_session``, ``append_messages`` and ``end_session`` go through the spool
(`ArchiveCore._durable`), so an acknowledged turn survives an unreachable server; deletes
and pruning are plain transactions. Messages are written with ``COPY`` and their
``tsvector`` columns are made in Python (`hermes_memory_postgres._text`). With
``scrub_secrets`` on, credentials in message text and titles are masked before anything is
written or spooled (`hermes_memory_sessions.storage.scrub_messages`, as the SQLite
archive does).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import psycopg

from hermes_memory_postgres.archive._rows import COPY_COLUMNS, copy_row, normal_message
from hermes_memory_postgres.archive._termstats import add_frequencies, subtract_deleted
from hermes_memory_postgres.archive._titles import TitleOps
from hermes_memory_sessions.search import single_message
from hermes_memory_sessions.storage import (
    STALE_END_REASON,
    check_id,
    clean_title,
    count_tool_calls,
    scrub_messages,
)

__all__ = ["TurnWrites"]

#: ``COPY`` statement of `COPY_COLUMNS` into ``hm_messages``.
COPY_MESSAGES = f"COPY hm_messages ({', '.join(COPY_COLUMNS)}) FROM STDIN".encode()


class TurnWrites(TitleOps):
    """Session lifecycle and message appends of one owner."""

    def _apply_op(self, conn: psycopg.Connection[Any], kind: str, payload: dict[str, Any]) -> Any:
        if kind == "create":
            return self._create(conn, **payload)
        if kind == "append":
            return self._append(conn, payload["session_id"], payload["messages"])
        if kind == "end":
            return self._end(conn, payload["session_id"], payload["end_reason"], payload["at"])
        raise ValueError(f"unknown spooled operation {kind!r}")

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
        """Create a session row (no-op if it exists); returns the id. See `SessionStore`
        (the title is sanitised, and masked of credentials with ``scrub_secrets`` on)."""
        session_id = check_id(session_id)
        payload = {
            "session_id": session_id,
            "source": source or "cli",
            "model": model,
            "parent_session_id": parent_session_id or None,
            "title": clean_title(title, scrub=self.scrub_secrets),
            "started_at": float(started_at) if started_at is not None else time.time(),
        }
        known = {k: v for k, v in payload.items() if k != "session_id"}
        self._known.setdefault(session_id, {"id": session_id, **known, "ended_at": None})
        self._durable("create", payload)
        return session_id

    def _create(
        self,
        conn: psycopg.Connection[Any],
        session_id: str,
        source: str,
        model: str | None,
        parent_session_id: str | None,
        title: str | None,
        started_at: float,
    ) -> None:
        if conn.execute(
            "SELECT 1 FROM hm_sessions WHERE owner = %s AND id = %s", (self.owner, session_id)
        ).fetchone():
            return
        provenance = "user" if title is not None else None
        if title is None and parent_session_id:
            parent = conn.execute(
                "SELECT title, title_source, end_reason FROM hm_sessions"
                " WHERE owner = %s AND id = %s",
                (self.owner, parent_session_id),
            ).fetchone()
            if parent and parent["title"] and parent["end_reason"] == "compression":
                title = self._next_title(conn, str(parent["title"]), lock=True)
                provenance = parent["title_source"] or "user"
        if title is not None:
            self._check_title_free(conn, title, session_id)
        conn.execute(
            "INSERT INTO hm_sessions(owner, id, source, model, parent_session_id, title,"
            " title_source, started_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT DO NOTHING",
            (self.owner, session_id, source, model, parent_session_id, title, provenance,
             started_at),
        )  # fmt: skip

    def end_session(self, session_id: str, end_reason: str) -> bool:
        """Mark a session ended; the first writer wins. True if this call ended it (also
        True when the end was spooled for later)."""
        result = self._durable(
            "end", {"session_id": session_id, "end_reason": end_reason, "at": time.time()}
        )
        return True if result is None else bool(result)

    def _end(self, conn: psycopg.Connection[Any], sid: str, reason: str, at: float) -> bool:
        cur = conn.execute(
            "UPDATE hm_sessions SET ended_at = %s, end_reason = %s"
            " WHERE owner = %s AND id = %s AND ended_at IS NULL",
            (at, reason, self.owner, sid),
        )
        return cur.rowcount > 0

    def delete_session(self, session_id: str) -> bool:
        """Delete a session and its messages; children become roots. False if unknown."""
        self._known.pop(session_id, None)
        return bool(self._write(lambda conn: self._delete(conn, session_id)))

    def _delete(self, conn: psycopg.Connection[Any], session_id: str) -> bool:
        if not conn.execute(
            "SELECT 1 FROM hm_sessions WHERE owner = %s AND id = %s FOR UPDATE",
            (self.owner, session_id),
        ).fetchone():
            return False
        conn.execute(
            "UPDATE hm_sessions SET parent_session_id = NULL"
            " WHERE owner = %s AND parent_session_id = %s",
            (self.owner, session_id),
        )
        gone = conn.execute(
            "DELETE FROM hm_messages WHERE owner = %s AND session_id = %s"
            " RETURNING role, tsvector_to_array(COALESCE(words, ''::tsvector)) AS lexemes",
            (self.owner, session_id),
        ).fetchall()
        subtract_deleted(conn, self.owner, gone)
        conn.execute(
            "DELETE FROM hm_sessions WHERE owner = %s AND id = %s", (self.owner, session_id)
        )
        return True

    def prune(self, older_than_days: float) -> int:
        """Delete *ended* sessions that started more than ``older_than_days`` ago."""
        days = float(older_than_days)
        if days < 0:
            raise ValueError("older_than_days must be >= 0")
        cutoff = time.time() - days * 86400

        def run(conn: psycopg.Connection[Any]) -> int:
            ids = [
                r["id"]
                for r in conn.execute(
                    "SELECT id FROM hm_sessions WHERE owner = %s AND ended_at IS NOT NULL"
                    " AND started_at < %s",
                    (self.owner, cutoff),
                ).fetchall()
            ]
            for sid in ids:
                self._delete(conn, sid)
            return len(ids)

        return int(self._write(run))

    def end_stale_sessions(self, older_than_hours: float) -> list[str]:
        """End open sessions whose last activity is older than ``older_than_hours``."""
        hours = float(older_than_hours)
        if not hours >= 0:
            raise ValueError("older_than_hours must be a number >= 0")
        cutoff = time.time() - hours * 3600

        def run(conn: psycopg.Connection[Any]) -> list[str]:
            rows = conn.execute(
                "UPDATE hm_sessions SET ended_at = COALESCE(last_activity_at, started_at),"
                " end_reason = %s WHERE owner = %s AND ended_at IS NULL"
                " AND COALESCE(last_activity_at, started_at) < %s RETURNING id, ended_at",
                (STALE_END_REASON, self.owner, cutoff),
            ).fetchall()
            rows.sort(key=lambda r: (r["ended_at"], r["id"]))
            return [str(r["id"]) for r in rows]

        return self._write(run)

    def append_message(
        self,
        session_id: str,
        role: str,
        content: Any,
        *,
        tool_name: str | None = None,
        tool_calls: Any = None,
        tool_call_id: str | None = None,
        timestamp: float | None = None,
    ) -> int:
        """Append one message; returns its id (0 when it was spooled for later). Credentials
        in the text are masked as in `append_messages`."""
        message = single_message(
            role,
            content,
            tool_name=tool_name,
            tool_calls=tool_calls,
            tool_call_id=tool_call_id,
            timestamp=timestamp,
        )
        ids = self.append_messages(session_id, [message])
        return ids[0] if ids else 0

    def append_messages(self, session_id: str, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        """Append messages to one session in one transaction; returns their ids.

        The messages are normalised first (timestamps fixed now), so a spooled write stores
        them exactly as given. With ``scrub_secrets`` on (the default) credentials in each
        message's free text (``content``, ``tool_calls``, ``reasoning``,
        ``reasoning_content``, ``api_content``) are masked first, so the spool holds none
        either; role, ids, timestamps and ``tool_name`` are kept. Returns [] when the write
        was spooled.
        """
        if self.scrub_secrets:
            messages = scrub_messages(messages)
        rows = [normal_message(m) for m in messages]
        if not rows:
            return []
        result = self._durable("append", {"session_id": session_id, "messages": rows})
        return list(result) if result is not None else []

    def _append(
        self,
        conn: psycopg.Connection[Any],
        session_id: str,
        rows: Sequence[Mapping[str, Any]],
        *,
        keep_ids: bool = False,
    ) -> list[int]:
        if not conn.execute(
            "SELECT 1 FROM hm_sessions WHERE owner = %s AND id = %s FOR UPDATE",
            (self.owner, session_id),
        ).fetchone():
            raise ValueError(f"session_id not found: {session_id}")
        return self._insert(conn, session_id, rows, keep_ids=keep_ids)

    def _new_ids(self, conn: psycopg.Connection[Any], n: int) -> list[int]:
        """``n`` fresh message ids from the database's sequence, ascending."""
        if n <= 0:
            return []
        # one text value instead of n rows: a bulk batch draws thousands of ids
        row = conn.execute(
            "SELECT string_agg(nextval('hm_message_id_seq')::text, ',') AS ids"
            " FROM generate_series(1, %s)",
            (n,),
        ).fetchone()
        ids = list(map(int, str(row["ids"]).split(","))) if row else []
        ids.sort()
        return ids

    def _insert(
        self,
        conn: psycopg.Connection[Any],
        session_id: str,
        rows: Sequence[Mapping[str, Any]],
        *,
        keep_ids: bool = False,
    ) -> list[int]:
        if not rows:
            return []
        ids = [int(r["id"]) for r in rows] if keep_ids else self._new_ids(conn, len(rows))
        live = 0
        calls = 0
        last_ts: float | None = None
        df: Counter[str] = Counter()
        with conn.cursor().copy(COPY_MESSAGES) as copy:
            for mid, r in zip(ids, rows, strict=True):
                copy.write_row(copy_row(self.owner, mid, session_id, r, df))
                ts = float(r["timestamp"])
                last_ts = ts if last_ts is None else max(last_ts, ts)
                if r.get("active", 1) in (0, False):
                    continue
                live += 1
                if r["role"] == "assistant":
                    calls += count_tool_calls(r.get("tool_calls"))
        add_frequencies(conn, self.owner, df)
        if keep_ids:
            conn.execute(
                "SELECT setval('hm_message_id_seq', GREATEST(%s,"
                " (SELECT last_value FROM hm_message_id_seq)))",
                (max(ids),),
            )
        conn.execute(
            "UPDATE hm_sessions SET message_count = COALESCE(message_count, 0) + %s,"
            " tool_call_count = COALESCE(tool_call_count, 0) + %s,"
            " last_activity_at = GREATEST(COALESCE(last_activity_at, 0), %s)"
            " WHERE owner = %s AND id = %s",
            (live, calls, last_ts, self.owner, session_id),
        )
        return ids
