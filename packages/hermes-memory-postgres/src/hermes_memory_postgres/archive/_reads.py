"""`ArchiveReads`: sessions and messages of one owner — listing, scrolling, anchored views
and statistics (the reads of `hermes_memory_sessions.protocol.SessionArchive`)."""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg

from hermes_memory_postgres._connection import ArchiveUnavailable
from hermes_memory_postgres.archive._anchored import Around, read_around
from hermes_memory_postgres.archive._core import ArchiveCore
from hermes_memory_postgres.archive._rows import SELECT_MSG, VIEW_COLS, restore_nul, session_dict
from hermes_memory_sessions.search import anchored_result, decode_row, escape_like
from hermes_memory_sessions.storage import PREVIEW_ELIGIBLE, check_id

__all__ = ["ArchiveReads"]

_ORDERS = {
    "started_desc": "started_at DESC, id DESC",
    "started_asc": "started_at ASC, id ASC",
    "last_active": "COALESCE(last_activity_at, started_at) DESC, id DESC",
}
_PAGE = 500
#: The full-text indexes `ArchiveReads.index_sizes` reports, by the key it uses: the word
#: index's two parts (schema 8) as the SQLite archive's two word tables.
_INDEX_KEYS = {"hm_messages_words": "words", "hm_messages_tools": "tools", "hm_messages_cjk": "cjk"}


class ArchiveReads(ArchiveCore):
    """Reads of sessions and messages (all scoped to ``owner``)."""

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """Every stored column of one session, or None.

        While the server is unreachable, a session this process created is answered from
        memory (so recording turns goes on); others raise `ArchiveUnavailable`.
        """
        memo = self._memo()
        key = (self.owner, "session", session_id)
        if memo is not None and key in memo:
            return dict(memo[key])
        try:
            row = self._read(
                lambda conn: conn.execute(
                    "SELECT * FROM hm_sessions WHERE owner = %s AND id = %s",
                    (self.owner, session_id),
                ).fetchone()
            )
        except ArchiveUnavailable:
            if session_id in self._known:
                return dict(self._known[session_id])
            raise
        if row is None:
            return None
        if memo is not None:
            memo[key] = session_dict(row)
        return session_dict(row)

    def resolve_session_id(self, id_or_prefix: str) -> str | None:
        """Full id for an exact id or a unique prefix; None when unknown or ambiguous."""
        if not id_or_prefix:
            return None
        check_id(id_or_prefix)
        if self.get_session(id_or_prefix) is not None:
            return id_or_prefix
        rows = self.matching_session_ids(id_or_prefix, 2)
        return rows[0] if len(rows) == 1 else None

    def matching_session_ids(self, prefix: str, limit: int) -> list[str]:
        """Up to ``limit`` session ids starting with ``prefix``, in id order."""
        rows = self._read(
            lambda conn: conn.execute(
                "SELECT id FROM hm_sessions WHERE owner = %s AND id LIKE %s ORDER BY id LIMIT %s",
                (self.owner, escape_like(prefix) + "%", int(limit)),
            ).fetchall()
        )
        return [str(r["id"]) for r in rows]

    def list_sessions(
        self,
        *,
        source: str | None = None,
        exclude_sources: Sequence[str] | None = None,
        limit: int | None = None,
        offset: int = 0,
        order: str = "started_desc",
        since: float | None = None,
        until: float | None = None,
        roles: Sequence[str] | None = None,
    ) -> list[dict[str, Any]]:
        """Sessions with every stored column plus ``last_active`` (see `SessionStore`)."""
        if order not in _ORDERS:
            raise ValueError(f"order must be one of {sorted(_ORDERS)}")
        where = ["owner = %s"]
        params: list[Any] = [self.owner]
        if source:
            where.append("source = %s")
            params.append(source)
        if exclude_sources:
            where.append("NOT (source = ANY(%s))")
            params.append(list(exclude_sources))
        if since is not None:
            where.append("started_at >= %s")
            params.append(float(since))
        if until is not None:
            where.append("started_at <= %s")
            params.append(float(until))
        if roles:
            where.append(
                "EXISTS (SELECT 1 FROM hm_messages m WHERE m.owner = hm_sessions.owner"
                " AND m.session_id = hm_sessions.id AND m.role = ANY(%s))"
            )
            params.append(list(roles))
        sql = (
            "SELECT *, COALESCE(last_activity_at, started_at) AS last_active FROM hm_sessions"  # noqa: S608
            f" WHERE {' AND '.join(where)} ORDER BY {_ORDERS[order]} LIMIT %s OFFSET %s"
        )
        params.extend([None if limit is None else int(limit), int(offset)])
        rows = self._read(lambda conn: conn.execute(sql, params).fetchall())
        return [session_dict(r) for r in rows]

    def iter_sessions(self) -> Iterator[dict[str, Any]]:
        """Every session (all columns), oldest first (started_at, id), in pages."""
        after = ""
        params: tuple[Any, ...] = ()
        while True:
            sql = (
                f"SELECT * FROM hm_sessions WHERE owner = %s{after}"  # noqa: S608
                " ORDER BY started_at, id LIMIT %s"
            )
            args = (self.owner, *params, _PAGE)
            rows = self._read(functools.partial(_fetch_all, sql=sql, args=args))
            if not rows:
                return
            for r in rows:
                yield session_dict(r)
            after = " AND (started_at, id) > (%s, %s)"
            params = (rows[-1]["started_at"], rows[-1]["id"])

    def count_open_sessions(self, older_than_days: float | None = None) -> int:
        """Sessions not ended (optionally only those started more than N days ago)."""
        sql = "SELECT COUNT(*) AS n FROM hm_sessions WHERE owner = %s AND ended_at IS NULL"
        params: list[Any] = [self.owner]
        if older_than_days is not None:
            sql += " AND started_at < %s"
            params.append(time.time() - float(older_than_days) * 86400)
        row: Any = self._read(lambda conn: conn.execute(sql, params).fetchone())
        return int(row["n"])

    def get_messages(self, session_id: str) -> list[dict[str, Any]]:
        """Every message of a session with all stored columns, in id order."""
        rows = self._read(
            lambda conn: conn.execute(
                f"SELECT {SELECT_MSG} FROM hm_messages m WHERE m.owner = %s"  # noqa: S608
                " AND m.session_id = %s ORDER BY m.id",
                (self.owner, session_id),
            ).fetchall()
        )
        return [restore_nul(r) for r in rows]

    def tail_messages(self, session_id: str, n: int) -> list[dict[str, Any]]:
        """The last ``n`` messages of a session (all stored columns), in id order."""
        if n <= 0:
            return []
        rows = self._read(
            lambda conn: conn.execute(
                f"SELECT {SELECT_MSG} FROM hm_messages m WHERE m.owner = %s"  # noqa: S608
                " AND m.session_id = %s ORDER BY m.id DESC LIMIT %s",
                (self.owner, session_id, int(n)),
            ).fetchall()
        )
        return [restore_nul(r) for r in reversed(rows)]

    def live_messages(self, session_id: str) -> list[dict[str, Any]]:
        """The live conversation (``active = 1``), ascending, ``tool_calls`` decoded."""
        rows = self._read(
            lambda conn: conn.execute(
                f"SELECT {VIEW_COLS} FROM hm_messages WHERE owner = %s"  # noqa: S608
                " AND session_id = %s AND active = 1 ORDER BY id",
                (self.owner, session_id),
            ).fetchall()
        )
        return [decode_row(r) for r in rows]

    def message_session(self, message_id: int) -> str | None:
        """The session a message of this owner belongs to, or None."""
        row = self._read(
            lambda conn: conn.execute(
                "SELECT session_id FROM hm_messages WHERE owner = %s AND id = %s",
                (self.owner, int(message_id)),
            ).fetchone()
        )
        return str(row["session_id"]) if row else None

    def first_user_message(self, session_id: str) -> str | None:
        """The content of the first non-empty user message of a session, or None (undone
        messages and compression summaries are not eligible)."""
        row = self._read(
            lambda conn: conn.execute(
                "SELECT content FROM hm_messages WHERE owner = %s AND session_id = %s"  # noqa: S608
                " AND role = 'user' AND content IS NOT NULL AND content <> ''"
                f" AND {PREVIEW_ELIGIBLE} ORDER BY id LIMIT 1",
                (self.owner, session_id),
            ).fetchone()
        )
        return str(row["content"]) if row else None

    def get_messages_around(self, session_id: str, anchor_id: int, window: int) -> dict[str, Any]:
        """Up to ``window`` messages before and after an anchor, ascending by id."""
        found = self._read(
            lambda conn: read_around(conn, self.owner, session_id, int(anchor_id), window)
        )
        return _window(found)

    def get_anchored_view(
        self,
        session_id: str,
        anchor_id: int,
        window: int = 5,
        bookend: int = 3,
        keep_roles: Sequence[str] = ("user", "assistant"),
    ) -> dict[str, Any]:
        """`get_messages_around` filtered to ``keep_roles`` (anchor kept) plus bookends
        (one round trip: `hermes_memory_postgres.archive._anchored`)."""
        roles = list(keep_roles)
        found = self._read(
            lambda conn: read_around(
                conn, self.owner, session_id, int(anchor_id), window, bookend, roles
            )
        )
        base = _window(found)
        if not base["window"]:
            return {**base, "bookend_start": [], "bookend_end": []}
        memo = self._memo()
        if memo is not None and found.anchor is not None:  # hit_snippet asks next
            memo[(self.owner, "content", int(anchor_id))] = found.anchor["content"]
        return anchored_result(base, anchor_id, roles, found.start, found.end_desc)

    def stats(self) -> dict[str, Any]:
        """Counts for this owner: sessions, messages, text_bytes, by_source (+ database)."""

        def run(conn: psycopg.Connection[Any]) -> dict[str, Any]:
            by_source = {
                str(r["source"]): int(r["n"])
                for r in conn.execute(
                    "SELECT source, COUNT(*) AS n FROM hm_sessions WHERE owner = %s"
                    " GROUP BY source",
                    (self.owner,),
                ).fetchall()
            }
            msgs: Any = conn.execute(
                "SELECT COUNT(*) AS n, COALESCE(SUM(octet_length(content)), 0) AS b"
                " FROM hm_messages WHERE owner = %s",
                (self.owner,),
            ).fetchone()
            size: Any = conn.execute(
                "SELECT pg_total_relation_size('hm_messages') + "
                "pg_total_relation_size('hm_sessions') AS n"
            ).fetchone()
            return {
                "sessions": sum(by_source.values()),
                "messages": int(msgs["n"]),
                "db_size_bytes": int(size["n"]),
                "text_bytes": int(msgs["b"]),
                "by_source": by_source,
                "journal_mode": None,
                "path": f"{self.db.masked_dsn} (owner {self.owner})",
                "backend": "postgres",
            }

        return self._read(run)

    def index_sizes(self) -> dict[str, int]:
        """Bytes of the word (conversation and tool output) and CJK indexes (every owner's:
        owners share them), this archive's schema only (names resolved through the search
        path, as its tables)."""

        def run(conn: psycopg.Connection[Any]) -> dict[str, int]:
            rows = conn.execute(
                "SELECT c.relname, pg_relation_size(c.oid) AS n"
                " FROM unnest(%s::text[]) AS name JOIN pg_class c ON c.oid = to_regclass(name)",
                (list(_INDEX_KEYS),),
            ).fetchall()
            return {_INDEX_KEYS[r["relname"]]: int(r["n"]) for r in rows}

        return self._read(run)


def _window(found: Around) -> dict[str, Any]:
    """The scroll window of `read_around`'s parts (empty when the anchor is not there)."""
    if found.anchor is None:
        return {"window": [], "messages_before": 0, "messages_after": 0}
    rows = [*reversed(found.before), found.anchor, *found.after]
    return {
        "window": [decode_row(r) for r in rows],
        "messages_before": len(found.before),
        "messages_after": len(found.after),
    }


def _fetch_all(conn: psycopg.Connection[Any], *, sql: str, args: Sequence[Any]) -> list[Any]:
    return conn.execute(sql, args).fetchall()
