"""`SessionStore`'s plain reads: sessions by id, prefix or page, and messages by session,
tail or around an anchor (the scroll view of ``session_search``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from hermes_memory_sessions.search._shaping import like_prefix
from hermes_memory_sessions.storage._connection import SqliteArchiveBase
from hermes_memory_sessions.storage._message_rows import check_id

__all__ = ["ArchiveBrowse"]


class ArchiveBrowse(SqliteArchiveBase):
    """`SessionStore`'s session and message reads."""

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """Every stored column of one session, or None."""
        with self.read() as conn:
            row = conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return dict(row) if row else None

    def resolve_session_id(self, id_or_prefix: str) -> str | None:
        """Full id for an exact id or a *unique* prefix; None when unknown or ambiguous.

        Raises ValueError for an id containing NUL or another control character (SQLite's
        ``LIKE`` would stop at a NUL and match a shorter prefix).
        """
        if not id_or_prefix:
            return None
        check_id(id_or_prefix)
        with self.read() as conn:
            if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (id_or_prefix,)).fetchone():
                return id_or_prefix
            pattern = like_prefix(id_or_prefix)
            if pattern is None:
                return None
            rows = conn.execute(
                "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 2", (pattern,)
            ).fetchall()
        return str(rows[0][0]) if len(rows) == 1 else None

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
        """Sessions with every stored column plus ``last_active``.

        ``order``: ``"started_desc"`` (default, newest first), ``"started_asc"``, or
        ``"last_active"`` (most recently active first); ties are broken by id.
        ``since``/``until`` (epoch seconds, inclusive) bound ``started_at``; ``roles``
        keeps sessions holding at least one message of one of those roles.
        """
        orders = {
            "started_desc": "started_at DESC, id DESC",
            "started_asc": "started_at ASC, id ASC",
            "last_active": "COALESCE(last_activity_at, started_at) DESC, id DESC",
        }
        if order not in orders:
            raise ValueError(f"order must be one of {sorted(orders)}")
        where: list[str] = []
        params: list[Any] = []
        if source:
            where.append("source = ?")
            params.append(source)
        if exclude_sources:
            where.append(f"source NOT IN ({','.join('?' * len(exclude_sources))})")
            params.extend(exclude_sources)
        if since is not None:
            where.append("started_at >= ?")
            params.append(float(since))
        if until is not None:
            where.append("started_at <= ?")
            params.append(float(until))
        if roles:
            marks = ",".join("?" * len(roles))  # placeholders only
            where.append(
                "EXISTS (SELECT 1 FROM messages m WHERE m.session_id = sessions.id"  # noqa: S608
                f" AND m.role IN ({marks}))"
            )
            params.extend(roles)
        sql = "SELECT *, COALESCE(last_activity_at, started_at) AS last_active FROM sessions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY {orders[order]} LIMIT ? OFFSET ?"
        params.extend([-1 if limit is None else int(limit), int(offset)])
        with self.read() as conn:
            return [dict(r) for r in conn.execute(sql, params).fetchall()]

    def iter_sessions(self) -> Iterator[dict[str, Any]]:
        """Every session (all columns), oldest first (started_at ASC, id ASC), in pages."""
        last: tuple[float, str] | None = None
        while True:
            with self.read() as conn:
                if last is None:
                    rows = conn.execute(
                        "SELECT * FROM sessions ORDER BY started_at, id LIMIT 500"
                    ).fetchall()
                else:
                    rows = conn.execute(
                        "SELECT * FROM sessions WHERE (started_at, id) > (?, ?) "
                        "ORDER BY started_at, id LIMIT 500",
                        last,
                    ).fetchall()
            if not rows:
                return
            for r in rows:
                yield dict(r)
            last = (rows[-1]["started_at"], rows[-1]["id"])

    def get_messages(self, session_id: str) -> list[dict[str, Any]]:
        """Every message of a session with all stored columns, in id order."""
        with self.read() as conn:
            rows = conn.execute(
                "SELECT * FROM messages WHERE session_id = ? ORDER BY id", (session_id,)
            ).fetchall()
        return [dict(r) for r in rows]

    def tail_messages(self, session_id: str, n: int) -> list[dict[str, Any]]:
        """The last ``n`` messages of a session (all stored columns), in id order.

        Reads only those rows (``ORDER BY id DESC LIMIT n``), however long the session is.
        """
        if n <= 0:
            return []
        with self.read() as conn:
            rows = conn.execute(
                "SELECT * FROM messages WHERE session_id = ? ORDER BY id DESC LIMIT ?",
                (session_id, int(n)),
            ).fetchall()
        return [dict(r) for r in reversed(rows)]

    def get_messages_around(self, session_id: str, anchor_id: int, window: int) -> dict[str, Any]:
        """Up to ``window`` messages before and after an anchor, ascending by id.

        Returns ``{"window": [...], "messages_before": n, "messages_after": m}``; the window
        is empty when the anchor is not a message of ``session_id``. ``tool_calls`` is
        decoded to a list.
        """
        from hermes_memory_sessions.search._lexical import messages_around

        with self.read() as conn:
            return messages_around(conn, session_id, int(anchor_id), int(window))

    def get_anchored_view(
        self,
        session_id: str,
        anchor_id: int,
        window: int = 5,
        bookend: int = 3,
        keep_roles: Sequence[str] = ("user", "assistant"),
    ) -> dict[str, Any]:
        """`get_messages_around` filtered to ``keep_roles`` (anchor always kept) plus bookends."""
        from hermes_memory_sessions.search._lexical import anchored_view

        with self.read() as conn:
            return anchored_view(conn, session_id, int(anchor_id), window, bookend, keep_roles)

    def search_messages(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        """Full-text search; see `hermes_memory_sessions.search._lexical.search_messages`."""
        from hermes_memory_sessions.search._lexical import search_messages

        with self.read() as conn:
            return search_messages(conn, query, **kwargs)
