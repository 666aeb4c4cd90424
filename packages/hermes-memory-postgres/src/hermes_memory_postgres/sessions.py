"""`PostgresSessionArchive`: the session archive on PostgreSQL, one owner's rows.

It implements `hermes_memory_sessions.protocol.SessionArchive`, so ``session_search``, the
sessions provider, the CLI and the MCP server work on it unchanged. Differences from the
SQLite `SessionStore` that a caller can see:

* every row belongs to ``owner``; no method reads or writes another owner's rows;
* message ids come from one sequence of the database (they grow with insertion, unique per
  owner); ``import_session(keep_ids=True)`` keeps given ids (a round trip is exact);
* search runs on two ``tsvector`` columns made in Python (`hermes_memory_postgres.text`):
  words (case-folded, diacritics removed) and CJK one- and two-character tokens; the query
  sanitiser, implicit AND, natural-language fallback and snippets are the SQLite archive's;
* writes of the agent's turns (``create_session``, ``append_messages``, ``end_session``)
  survive an unreachable server: after a bounded retry they go to a local spool file
  (`hermes_memory_postgres.spool.Spool`) that is replayed in order, exactly once, when the
  server answers again.
"""

from __future__ import annotations

# ruff: noqa: S608  (SQL is built from constant column names and filters; values are bound)
import json
import math
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import psycopg
from psycopg.copy import QueuedLibpqWriter

from hermes_memory_postgres.connection import ArchiveUnavailable, Database, check_owner
from hermes_memory_postgres.spool import Spool
from hermes_memory_postgres.text import cjk_tsvector, render_tsquery, words_tsvector
from hermes_memory_sessions.cjk import split_cjk
from hermes_memory_sessions.query import ParsedQuery, Term, parse_query
from hermes_memory_sessions.query import any_terms as content_terms
from hermes_memory_sessions.search import (
    _SMOOTH_SEEDS,
    COMMON_TERM_CAP,
    NATURAL_POOL,
    NATURAL_WINDOW,
    RANK_WINDOW,
    SMOOTHING,
    Hits,
    _latin_only,
    _needles,
    python_snippet,
)
from hermes_memory_sessions.store import (
    _NUMBERED_TITLE,
    MESSAGE_DATA_FIELDS,
    STALE_END_REASON,
    TITLE_SOURCES,
    _check_id,
    _count_tool_calls,
    _encode_content,
    _encode_json,
    sanitize_title,
)

__all__ = ["PostgresSessionArchive"]

_MESSAGE_COLS = (
    "id",
    "session_id",
    "role",
    "content",
    "tool_call_id",
    "tool_calls",
    "tool_name",
    "timestamp",
    *[f for f in MESSAGE_DATA_FIELDS if f not in ("role", "content", "tool_call_id",
                                                   "tool_calls", "tool_name", "timestamp")],
)  # fmt: skip
_SELECT_MSG = ", ".join(f"m.{c}" for c in (*_MESSAGE_COLS, "nul_fields"))
_VIEW_COLS = "id, session_id, role, content, timestamp, tool_name, tool_calls, tool_call_id"
_SESSION_COLS_CACHE: list[str] = []
#: ``gin_pending_list_limit`` (kB) during `PostgresSessionArchive.bulk_import`.
_BULK_GIN_PENDING_KB = 65536


def _decode(row: Mapping[str, Any]) -> dict[str, Any]:
    d = dict(row)
    tc = d.get("tool_calls")
    if isinstance(tc, str) and tc:
        try:
            d["tool_calls"] = json.loads(tc)
        except ValueError:
            d["tool_calls"] = tc
    return d


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class PostgresSessionArchive:
    """The session archive of one owner in a PostgreSQL database.

    Args:
        dsn: libpq connection string or URL (or pass ``database``).
        owner: the tenant key; every row read or written belongs to it.
        database: a shared `Database` (pool) instead of ``dsn``.
        spool_dir: folder of the local spool that keeps turns while the server is
            unreachable (None: writes raise `ArchiveUnavailable` instead).
        write_budget_s: how long a write retries before it is spooled (or raises).
        read_budget_s: how long a read retries before it raises `ArchiveUnavailable`.
    """

    def __init__(
        self,
        dsn: str | None = None,
        *,
        owner: str,
        database: Database | None = None,
        spool_dir: str | Path | None = None,
        write_budget_s: float = 5.0,
        read_budget_s: float = 5.0,
    ) -> None:
        self.owner = check_owner(owner)
        if database is None:
            database = Database(dsn or "")
            self._owns_db = True
        else:
            self._owns_db = False
        self.db = database
        self._write_budget = write_budget_s
        self._read_budget = read_budget_s
        self._known: dict[str, dict[str, Any]] = {}
        self._lock = threading.RLock()
        self._closed = False
        self.spool = Spool(Path(spool_dir), f"sessions-{self.owner}") if spool_dir else None
        self.path = None  # no local file: the ``profile`` argument never maps to this archive

    def __repr__(self) -> str:
        return f"PostgresSessionArchive(owner={self.owner!r}, {self.db.masked_dsn})"

    # ------------------------------------------------------------------ plumbing

    def _read(self, fn: Any) -> Any:
        if self._closed:
            raise RuntimeError("PostgresSessionArchive is closed")
        return self.db.run(fn, budget=self._read_budget)

    def _write(self, fn: Any) -> Any:
        if self._closed:
            raise RuntimeError("PostgresSessionArchive is closed")
        return self.db.run(fn, budget=self._write_budget)

    def close(self) -> None:
        """Release the pool (when this archive opened it); safe to call twice."""
        if self._closed:
            return
        self._closed = True
        if self._owns_db:
            self.db.close()

    def __enter__(self) -> PostgresSessionArchive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _applied(self, conn: psycopg.Connection[Any], op_key: str | None) -> bool:
        """Record ``op_key`` as applied in this transaction; True if it already was."""
        if op_key is None:
            return False
        cur = conn.execute(
            "INSERT INTO hm_applied_ops(owner, op_key, applied_at) VALUES (%s, %s, %s)"
            " ON CONFLICT DO NOTHING",
            (self.owner, op_key, time.time()),
        )
        return cur.rowcount == 0

    def _durable(self, kind: str, payload: dict[str, Any]) -> Any:
        """Apply one turn write exactly once: now, or later from the spool.

        Returns the operation's result, or None when it was spooled.
        """
        op_key = uuid.uuid4().hex
        with self._lock:
            if self.spool is not None and self.spool.pending():
                try:
                    self.replay_spool()
                except ArchiveUnavailable:
                    self.spool.append(op_key, kind, payload)
                    return None
            try:
                return self._write(lambda conn: self._apply(conn, op_key, kind, payload))
            except ArchiveUnavailable:
                if self.spool is None:
                    raise
                self.spool.append(op_key, kind, payload)
                return None

    def replay_spool(self) -> int:
        """Apply the spooled writes in order (each exactly once); returns how many.

        Raises `ArchiveUnavailable` when the server is still unreachable (what was not
        applied stays in the spool).
        """
        if self.spool is None:
            return 0
        with self._lock:
            return self.spool.replay(
                lambda key, kind, payload: self._write(
                    lambda conn: self._apply(conn, key, kind, payload)
                )
            )

    def _apply(
        self, conn: psycopg.Connection[Any], op_key: str, kind: str, payload: dict[str, Any]
    ) -> Any:
        if self._applied(conn, op_key):
            return None
        if kind == "create":
            return self._create(conn, **payload)
        if kind == "append":
            return self._append(conn, payload["session_id"], payload["messages"])
        if kind == "end":
            return self._end(conn, payload["session_id"], payload["end_reason"], payload["at"])
        raise ValueError(f"unknown spooled operation {kind!r}")

    def spool_state(self) -> dict[str, Any]:
        """``{"pending": n, "path": ...}`` of the local spool (None path: no spool)."""
        if self.spool is None:
            return {"pending": 0, "path": None}
        return {"pending": self.spool.pending(), "path": str(self.spool.path)}

    # ------------------------------------------------------------------ sessions

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
        """Create a session row (no-op if it exists); returns the id. See `SessionStore`."""
        session_id = _check_id(session_id)
        clean = sanitize_title(title)
        payload = {
            "session_id": session_id,
            "source": source or "cli",
            "model": model,
            "parent_session_id": parent_session_id or None,
            "title": clean,
            "started_at": float(started_at) if started_at is not None else time.time(),
        }
        self._known.setdefault(
            session_id,
            {
                "id": session_id,
                "source": payload["source"],
                "model": model,
                "parent_session_id": payload["parent_session_id"],
                "title": clean,
                "started_at": payload["started_at"],
                "ended_at": None,
            },
        )
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
            (
                self.owner,
                session_id,
                source,
                model,
                parent_session_id,
                title,
                provenance,
                started_at,
            ),
        )

    def _lock_title(self, conn: psycopg.Connection[Any], title: str) -> None:
        """Serialise, until commit, the writers of one title of this owner (other hosts too):
        the check that a title is free and the insert that takes it are one step."""
        conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            (f"hm-title\x1f{self.owner}\x1f{title}",),
        )

    def _next_title(self, conn: psycopg.Connection[Any], title: str, *, lock: bool) -> str:
        match = _NUMBERED_TITLE.match(title)
        base = match.group(1) if match else title
        if lock:
            self._lock_title(conn, "#base\x1f" + base)
        taken = [
            str(r["title"])
            for r in conn.execute(
                "SELECT title FROM hm_sessions WHERE owner = %s AND (title = %s OR title LIKE %s)",
                (self.owner, base, _escape_like(base) + " #%"),
            ).fetchall()
        ]
        if not taken:
            return base
        numbers = [1]
        for existing in taken:
            numbered = _NUMBERED_TITLE.match(existing)
            if numbered and numbered.group(1) == base:
                numbers.append(int(numbered.group(2)))
        return f"{base} #{max(numbers) + 1}"

    def get_next_title_in_lineage(self, title: str) -> str:
        """The title for the next continuation: ``"x"`` → ``"x #2"`` → ``"x #3"`` (as
        `SessionStore.get_next_title_in_lineage`: the unnumbered title counts as #1)."""
        return str(self._read(lambda conn: self._next_title(conn, title, lock=False)))

    def _is_compression_ancestor(
        self, conn: psycopg.Connection[Any], holder: str, session_id: str
    ) -> bool:
        """Whether ``holder`` is reached from ``session_id`` through compression hops only."""
        current, seen = session_id, {session_id}
        for _ in range(1000):
            row = conn.execute(
                "SELECT p.id, p.end_reason FROM hm_sessions c JOIN hm_sessions p"
                " ON p.owner = c.owner AND p.id = c.parent_session_id"
                " WHERE c.owner = %s AND c.id = %s",
                (self.owner, current),
            ).fetchone()
            if row is None or row["end_reason"] != "compression" or row["id"] in seen:
                return False
            if row["id"] == holder:
                return True
            current = str(row["id"])
            seen.add(current)
        return False

    def _check_title_free(self, conn: psycopg.Connection[Any], title: str, sid: str) -> None:
        """Refuse a title in use, except by a compression ancestor: it moves to the heir."""
        self._lock_title(conn, title)
        row = conn.execute(
            "SELECT id FROM hm_sessions WHERE owner = %s AND title = %s AND id <> %s LIMIT 1",
            (self.owner, title, sid),
        ).fetchone()
        if row is None:
            return
        if self._is_compression_ancestor(conn, str(row["id"]), sid):
            conn.execute(
                "UPDATE hm_sessions SET title = NULL WHERE owner = %s AND id = %s",
                (self.owner, row["id"]),
            )
            return
        raise ValueError(f"Title '{title}' is already in use by session {row['id']}")

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

    def set_title(self, session_id: str, title: str | None, *, source: str = "user") -> str | None:
        """Set (or clear) a title; returns the title now stored (see `SessionStore.set_title`).

        ``source`` is the provenance: ``"user"`` always wins, an automatic title lands only
        on an untitled session or over one of lower rank. A title held by a compression
        ancestor moves here. ValueError for an unknown session or provenance, or a title
        in use by another conversation.
        """
        if source not in TITLE_SOURCES:
            raise ValueError(f"title source must be one of {sorted(TITLE_SOURCES)}")
        clean = sanitize_title(title)

        def run(conn: psycopg.Connection[Any]) -> str | None:
            row = conn.execute(
                "SELECT title, title_source FROM hm_sessions WHERE owner = %s AND id = %s"
                " FOR UPDATE",
                (self.owner, session_id),
            ).fetchone()
            if row is None:
                raise ValueError(f"session_id not found: {session_id}")
            held = TITLE_SOURCES.get(row["title_source"] or "user", TITLE_SOURCES["user"])
            if source != "user" and row["title"] is not None and held >= TITLE_SOURCES[source]:
                return str(row["title"])
            if clean is not None:
                self._check_title_free(conn, clean, session_id)
            conn.execute(
                "UPDATE hm_sessions SET title = %s, title_source = %s WHERE owner = %s AND id = %s",
                (clean, source if clean is not None else None, self.owner, session_id),
            )
            return clean

        result: str | None = self._write(run)
        return result

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """Every stored column of one session, or None.

        While the server is unreachable, a session this process created is answered from
        memory (so recording turns goes on); others raise `ArchiveUnavailable`.
        """
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
        return _session_dict(row) if row else None

    def resolve_session_id(self, id_or_prefix: str) -> str | None:
        """Full id for an exact id or a unique prefix; None when unknown or ambiguous."""
        if not id_or_prefix:
            return None
        _check_id(id_or_prefix)
        if self.get_session(id_or_prefix) is not None:
            return id_or_prefix
        rows = self.matching_session_ids(id_or_prefix, 2)
        return rows[0] if len(rows) == 1 else None

    def matching_session_ids(self, prefix: str, limit: int) -> list[str]:
        """Up to ``limit`` session ids starting with ``prefix``, in id order."""
        rows = self._read(
            lambda conn: conn.execute(
                "SELECT id FROM hm_sessions WHERE owner = %s AND id LIKE %s ORDER BY id LIMIT %s",
                (self.owner, _escape_like(prefix) + "%", int(limit)),
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
    ) -> list[dict[str, Any]]:
        """Sessions with every stored column plus ``last_active`` (see `SessionStore`)."""
        orders = {
            "started_desc": "started_at DESC, id DESC",
            "started_asc": "started_at ASC, id ASC",
            "last_active": "COALESCE(last_activity_at, started_at) DESC, id DESC",
        }
        if order not in orders:
            raise ValueError(f"order must be one of {sorted(orders)}")
        where = ["owner = %s"]
        params: list[Any] = [self.owner]
        if source:
            where.append("source = %s")
            params.append(source)
        if exclude_sources:
            where.append("NOT (source = ANY(%s))")
            params.append(list(exclude_sources))
        sql = (
            "SELECT *, COALESCE(last_activity_at, started_at) AS last_active FROM hm_sessions"
            f" WHERE {' AND '.join(where)} ORDER BY {orders[order]} LIMIT %s OFFSET %s"
        )
        params.extend([None if limit is None else int(limit), int(offset)])
        rows = self._read(lambda conn: conn.execute(sql, params).fetchall())
        return [_session_dict(r) for r in rows]

    def iter_sessions(self) -> Iterator[dict[str, Any]]:
        """Every session (all columns), oldest first (started_at, id), in pages."""
        last: tuple[float, str] | None = None
        while True:
            if last is None:
                rows = self._read(
                    lambda conn: conn.execute(
                        "SELECT * FROM hm_sessions WHERE owner = %s"
                        " ORDER BY started_at, id LIMIT 500",
                        (self.owner,),
                    ).fetchall()
                )
            else:
                rows = self._read(
                    lambda conn, key=last: conn.execute(
                        "SELECT * FROM hm_sessions WHERE owner = %s AND (started_at, id) >"
                        " (%s, %s) ORDER BY started_at, id LIMIT 500",
                        (self.owner, *key),
                    ).fetchall()
                )
            if not rows:
                return
            for r in rows:
                yield _session_dict(r)
            last = (rows[-1]["started_at"], rows[-1]["id"])

    def lineage_root(self, session_id: str) -> str:
        """Walk ``parent_session_id`` to the top (cycle-safe; stops at a missing row)."""

        def run(conn: psycopg.Connection[Any]) -> str:
            seen = {session_id}
            current = session_id
            while True:
                row = conn.execute(
                    "SELECT s.parent_session_id AS parent, p.id AS present FROM hm_sessions s"
                    " LEFT JOIN hm_sessions p ON p.owner = s.owner AND p.id ="
                    " s.parent_session_id WHERE s.owner = %s AND s.id = %s",
                    (self.owner, current),
                ).fetchone()
                parent = row["parent"] if row else None
                if not parent or parent in seen or row is None or row["present"] is None:
                    return current
                seen.add(parent)
                current = parent

        return str(self._read(run))

    def compression_tip(self, session_id: str) -> str:
        """The latest continuation of a conversation that compression carried forward
        (children of compression-ended sessions; never branches or delegations)."""

        def run(conn: psycopg.Connection[Any]) -> str:
            current, seen = session_id, {session_id}
            for _ in range(100):
                rows = conn.execute(
                    "SELECT c.id, c.model_config, c.end_reason, c.ended_at, c.source"
                    " FROM hm_sessions p JOIN hm_sessions c ON c.owner = p.owner"
                    " AND c.parent_session_id = p.id WHERE p.owner = %s AND p.id = %s"
                    " AND p.end_reason = 'compression' AND COALESCE(c.source, '') <> 'tool'"
                    " ORDER BY CASE WHEN c.end_reason = 'compression' THEN 0"
                    "  WHEN c.ended_at IS NULL THEN 1 ELSE 2 END,"
                    " COALESCE(c.last_activity_at, c.started_at) DESC, c.started_at DESC,"
                    " c.id DESC",
                    (self.owner, current),
                ).fetchall()
                nxt = next((r["id"] for r in rows if _plain_continuation(r["model_config"])), None)
                if nxt is None or nxt in seen:
                    return current
                current = str(nxt)
                seen.add(current)
            return current

        return str(self._read(run))

    def session_by_title(self, title: str) -> str | None:
        """The session a title names: its latest ``"<title> #N"``, else the exact title."""

        def run(conn: psycopg.Connection[Any]) -> str | None:
            row = conn.execute(
                "SELECT id FROM hm_sessions WHERE owner = %s AND title LIKE %s"
                " ORDER BY started_at DESC LIMIT 1",
                (self.owner, _escape_like(title) + " #%"),
            ).fetchone()
            if row is None:
                row = conn.execute(
                    "SELECT id FROM hm_sessions WHERE owner = %s AND title = %s LIMIT 1",
                    (self.owner, title),
                ).fetchone()
            return str(row["id"]) if row else None

        result: str | None = self._read(run)
        return result

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
        conn.execute(
            "DELETE FROM hm_messages WHERE owner = %s AND session_id = %s",
            (self.owner, session_id),
        )
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

        result: list[str] = self._write(run)
        return result

    def count_open_sessions(self, older_than_days: float | None = None) -> int:
        """Sessions not ended (optionally only those started more than N days ago)."""
        sql = "SELECT COUNT(*) AS n FROM hm_sessions WHERE owner = %s AND ended_at IS NULL"
        params: list[Any] = [self.owner]
        if older_than_days is not None:
            sql += " AND started_at < %s"
            params.append(time.time() - float(older_than_days) * 86400)
        return int(self._read(lambda conn: conn.execute(sql, params).fetchone())["n"])

    # ------------------------------------------------------------------ messages

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
        """Append one message; returns its id (0 when it was spooled for later)."""
        ids = self.append_messages(
            session_id,
            [
                {
                    "role": role,
                    "content": content,
                    "tool_name": tool_name,
                    "tool_calls": tool_calls,
                    "tool_call_id": tool_call_id,
                    "timestamp": timestamp,
                }
            ],
        )
        return ids[0] if ids else 0

    def append_messages(self, session_id: str, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        """Append messages to one session in one transaction; returns their ids.

        The messages are normalised first (timestamps fixed now), so a spooled write stores
        them exactly as given. Returns [] when the write was spooled.
        """
        rows = [_normal_message(m) for m in messages]
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

    def _insert(
        self,
        conn: psycopg.Connection[Any],
        session_id: str,
        rows: Sequence[Mapping[str, Any]],
        *,
        keep_ids: bool = False,
        update_counters: bool = True,
    ) -> list[int]:
        if not rows:
            return []
        if keep_ids:
            ids = [int(r["id"]) for r in rows]
        else:
            ids = [
                int(r["id"])
                for r in conn.execute(
                    "SELECT nextval('hm_message_id_seq') AS id FROM generate_series(1, %s)",
                    (len(rows),),
                ).fetchall()
            ]
            ids.sort()
        cols = ["owner", "id", "session_id", *MESSAGE_DATA_FIELDS, "words", "cjk", "nul_fields"]
        copy_sql = f"COPY hm_messages ({', '.join(cols)}) FROM STDIN"
        live = 0
        calls = 0
        last_ts: float | None = None
        with conn.cursor().copy(copy_sql.encode()) as copy:
            for mid, r in zip(ids, rows, strict=True):
                copy.write_row(_copy_row(self.owner, mid, session_id, r))
                ts = float(r["timestamp"])
                last_ts = ts if last_ts is None else max(last_ts, ts)
                if r.get("active", 1) in (0, False):
                    continue
                live += 1
                if r["role"] == "assistant":
                    calls += _count_tool_calls(r.get("tool_calls"))
        if keep_ids:
            conn.execute(
                "SELECT setval('hm_message_id_seq', GREATEST(%s,"
                " (SELECT last_value FROM hm_message_id_seq)))",
                (max(ids),),
            )
        if update_counters:
            conn.execute(
                "UPDATE hm_sessions SET message_count = COALESCE(message_count, 0) + %s,"
                " tool_call_count = COALESCE(tool_call_count, 0) + %s,"
                " last_activity_at = GREATEST(COALESCE(last_activity_at, 0), %s)"
                " WHERE owner = %s AND id = %s",
                (live, calls, last_ts, self.owner, session_id),
            )
        return ids

    def import_session(
        self,
        session: Mapping[str, Any],
        messages: Iterable[Mapping[str, Any]],
        *,
        keep_ids: bool = False,
        import_source: str | None = None,
        source_last_id: int | None = None,
    ) -> str:
        """Insert one complete session (row + messages, by ``COPY``) in one transaction.

        Same contract as `SessionStore.import_session`: every given column kept, messages in
        order with their timestamps, ``keep_ids`` keeps message ids (an id already used by
        this owner is a ValueError and nothing is imported).
        """
        sid = _check_id(session.get("id"))
        msgs = [_normal_message(m, keep_id=keep_ids) for m in messages]
        if keep_ids:
            wanted = [m.get("id") for m in msgs]
            if any(not isinstance(i, int) or isinstance(i, bool) for i in wanted):
                raise ValueError("keep_ids=True needs an integer 'id' on every message")
            if len(set(wanted)) != len(wanted):
                raise ValueError("duplicate message ids in the imported session")

        def run(conn: psycopg.Connection[Any]) -> str:
            if conn.execute(
                "SELECT 1 FROM hm_sessions WHERE owner = %s AND id = %s", (self.owner, sid)
            ).fetchone():
                raise ValueError(f"session {sid!r} already exists in the archive")
            columns = _session_columns(conn)
            row = {k: v for k, v in session.items() if k in columns and k != "owner"}
            row["id"] = sid
            row["source"] = row.get("source") or "cli"
            if row.get("started_at") is None:
                first = next((m.get("timestamp") for m in msgs if m.get("timestamp")), None)
                row["started_at"] = float(first) if first is not None else time.time()
            if row.get("title") is not None:
                row["title"] = sanitize_title(row["title"])
                if row["title"] is not None:
                    self._check_title_free(conn, row["title"], sid)
            nul = next((k for k, v in row.items() if isinstance(v, str) and "\x00" in v), None)
            if nul is not None:  # message text keeps NUL exactly; session columns cannot
                raise ValueError(
                    f"session {sid!r}: column {nul} holds a NUL character (U+0000), which"
                    " PostgreSQL cannot store; nothing of this session was imported"
                )
            given = {
                k: row.pop(k, None)
                for k in ("message_count", "tool_call_count", "last_activity_at")
            }
            cols = ["owner", *row]
            conn.execute(
                f"INSERT INTO hm_sessions({', '.join(cols)})"
                f" VALUES ({', '.join(['%s'] * len(cols))})",
                [self.owner, *row.values()],
            )
            if keep_ids and msgs:
                taken = conn.execute(
                    "SELECT id FROM hm_messages WHERE owner = %s AND id = ANY(%s) LIMIT 1",
                    (self.owner, [m["id"] for m in msgs]),
                ).fetchone()
                if taken:
                    raise ValueError(f"message id {taken['id']} already exists in the archive")
            self._insert(conn, sid, msgs, keep_ids=keep_ids)
            sets = {k: v for k, v in given.items() if v is not None}
            if sets:
                conn.execute(
                    f"UPDATE hm_sessions SET {', '.join(f'{k} = %s' for k in sets)}"
                    " WHERE owner = %s AND id = %s",
                    [*sets.values(), self.owner, sid],
                )
            if import_source is not None:
                self._record_import(conn, import_source, sid, source_last_id)
            return sid

        result: str = self._write(run)
        return result

    def bulk_import(
        self, sessions: Iterable[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]]
    ) -> int:
        """Import many new sessions with their messages in one transaction (one ``COPY`` for
        all messages); returns how many messages were written. For migrations and benchmarks.
        """
        batch = [(dict(s), [_normal_message(m) for m in ms]) for s, ms in sessions]

        def run(conn: psycopg.Connection[Any]) -> int:
            # GIN entries go to the pending list and are merged in larger sorted batches.
            conn.execute(f"SET LOCAL gin_pending_list_limit = {_BULK_GIN_PENDING_KB}")
            total = sum(len(ms) for _, ms in batch)
            ids = [
                int(r["id"])
                for r in conn.execute(
                    "SELECT nextval('hm_message_id_seq') AS id FROM generate_series(1, %s)",
                    (total,),
                ).fetchall()
            ]
            ids.sort()
            with conn.cursor().copy(
                b"COPY hm_sessions (owner, id, source, model, title, parent_session_id,"
                b" started_at, ended_at, end_reason, message_count, last_activity_at)"
                b" FROM STDIN"
            ) as copy:
                for s, ms in batch:
                    copy.write_row(
                        (
                            self.owner,
                            _check_id(s.get("id")),
                            s.get("source") or "cli",
                            s.get("model"),
                            sanitize_title(s.get("title")),
                            s.get("parent_session_id"),
                            float(
                                s.get("started_at") or (ms[0]["timestamp"] if ms else time.time())
                            ),
                            s.get("ended_at"),
                            s.get("end_reason"),
                            len(ms),
                            max((m["timestamp"] for m in ms), default=None),
                        )
                    )
            cols = ["owner", "id", "session_id", *MESSAGE_DATA_FIELDS, "words", "cjk", "nul_fields"]
            pos = 0
            cur = conn.cursor()
            # A writer thread sends the data while this one tokenises the next rows.
            with cur.copy(
                f"COPY hm_messages ({', '.join(cols)}) FROM STDIN".encode(),
                writer=QueuedLibpqWriter(cur),
            ) as copy:
                for s, ms in batch:
                    for m in ms:
                        copy.write_row(_copy_row(self.owner, ids[pos], str(s["id"]), m))
                        pos += 1
            # Merge the pending GIN entries now, in one sorted pass: left in the pending
            # list, every later search would scan it linearly.
            conn.execute(
                "SELECT gin_clean_pending_list('hm_messages_words'::regclass),"
                " gin_clean_pending_list('hm_messages_cjk'::regclass)"
            )
            return total

        return int(self._write(run))

    def _record_import(
        self, conn: psycopg.Connection[Any], source: str, sid: str, last_id: int | None
    ) -> None:
        conn.execute(
            "INSERT INTO hm_import_sessions(owner, source, session_id, last_message_id)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (owner, source, session_id) DO UPDATE SET"
            " last_message_id = GREATEST(hm_import_sessions.last_message_id,"
            " excluded.last_message_id)",
            (self.owner, source, sid, int(last_id or 0)),
        )

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
        """Append messages an import source added to a session it created earlier."""
        rows = [_normal_message(m) for m in messages]

        def run(conn: psycopg.Connection[Any]) -> bool:
            ids = self._append(conn, session_id, rows)
            changed = bool(ids)
            if ended_at is not None:
                cur = conn.execute(
                    "UPDATE hm_sessions SET ended_at = %s, end_reason = COALESCE(%s, end_reason)"
                    " WHERE owner = %s AND id = %s AND ended_at IS NULL",
                    (float(ended_at), end_reason, self.owner, session_id),
                )
                changed = changed or cur.rowcount > 0
            self._record_import(conn, import_source, session_id, source_last_id)
            return changed

        return bool(self._write(run))

    def import_state(self, source: str) -> tuple[int, dict[str, int]]:
        """``(watermark, {session_id: last source message id})`` of earlier imports."""

        def run(conn: psycopg.Connection[Any]) -> tuple[int, dict[str, int]]:
            row = conn.execute(
                "SELECT last_message_id FROM hm_import_sources WHERE owner = %s AND source = %s",
                (self.owner, source),
            ).fetchone()
            sessions = {
                str(r["session_id"]): int(r["last_message_id"])
                for r in conn.execute(
                    "SELECT i.session_id, i.last_message_id FROM hm_import_sessions i"
                    " JOIN hm_sessions s ON s.owner = i.owner AND s.id = i.session_id"
                    " WHERE i.owner = %s AND i.source = %s",
                    (self.owner, source),
                ).fetchall()
            }
            return (int(row["last_message_id"]) if row else 0), sessions

        result: tuple[int, dict[str, int]] = self._read(run)
        return result

    def set_import_watermark(
        self, source: str, message_id: int, *, sessions: int = 0, messages: int = 0
    ) -> None:
        """Record that every message of ``source`` up to ``message_id`` has been looked at."""
        self._write(
            lambda conn: conn.execute(
                "INSERT INTO hm_import_sources(owner, source, last_message_id, imported_at,"
                " sessions, messages) VALUES (%s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (owner, source) DO UPDATE SET"
                " last_message_id = excluded.last_message_id,"
                " imported_at = excluded.imported_at,"
                " sessions = hm_import_sources.sessions + excluded.sessions,"
                " messages = hm_import_sources.messages + excluded.messages",
                (self.owner, source, int(message_id), time.time(), int(sessions), int(messages)),
            )
        )

    def forget_import_source(self, source: str) -> None:
        """Drop the bookkeeping of ``source`` (its sessions stay)."""

        def run(conn: psycopg.Connection[Any]) -> None:
            conn.execute(
                "DELETE FROM hm_import_sources WHERE owner = %s AND source = %s",
                (self.owner, source),
            )
            conn.execute(
                "DELETE FROM hm_import_sessions WHERE owner = %s AND source = %s",
                (self.owner, source),
            )

        self._write(run)

    def get_messages(self, session_id: str) -> list[dict[str, Any]]:
        """Every message of a session with all stored columns, in id order."""
        rows = self._read(
            lambda conn: conn.execute(
                f"SELECT {_SELECT_MSG} FROM hm_messages m WHERE m.owner = %s"
                " AND m.session_id = %s ORDER BY m.id",
                (self.owner, session_id),
            ).fetchall()
        )
        return [_restore_nul(r) for r in rows]

    def tail_messages(self, session_id: str, n: int) -> list[dict[str, Any]]:
        """The last ``n`` messages of a session (all stored columns), in id order."""
        if n <= 0:
            return []
        rows = self._read(
            lambda conn: conn.execute(
                f"SELECT {_SELECT_MSG} FROM hm_messages m WHERE m.owner = %s"
                " AND m.session_id = %s ORDER BY m.id DESC LIMIT %s",
                (self.owner, session_id, int(n)),
            ).fetchall()
        )
        return [_restore_nul(r) for r in reversed(rows)]

    def live_messages(self, session_id: str) -> list[dict[str, Any]]:
        """The live conversation (``active = 1``), ascending, ``tool_calls`` decoded."""
        rows = self._read(
            lambda conn: conn.execute(
                f"SELECT {_VIEW_COLS} FROM hm_messages WHERE owner = %s AND session_id = %s"
                " AND active = 1 ORDER BY id",
                (self.owner, session_id),
            ).fetchall()
        )
        return [_decode(r) for r in rows]

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
        """The content of the first non-empty user message of a session, or None."""
        row = self._read(
            lambda conn: conn.execute(
                "SELECT content FROM hm_messages WHERE owner = %s AND session_id = %s"
                " AND role = 'user' AND content IS NOT NULL AND content <> ''"
                " ORDER BY id LIMIT 1",
                (self.owner, session_id),
            ).fetchone()
        )
        return str(row["content"]) if row else None

    def get_messages_around(self, session_id: str, anchor_id: int, window: int) -> dict[str, Any]:
        """Up to ``window`` messages before and after an anchor, ascending by id."""
        return dict(self._read(lambda conn: self._around(conn, session_id, int(anchor_id), window)))

    def _around(
        self, conn: psycopg.Connection[Any], sid: str, anchor_id: int, window: int
    ) -> dict[str, Any]:
        window = max(0, int(window))
        anchor = conn.execute(
            f"SELECT {_VIEW_COLS} FROM hm_messages WHERE owner = %s AND id = %s"
            " AND session_id = %s",
            (self.owner, anchor_id, sid),
        ).fetchone()
        if anchor is None:
            return {"window": [], "messages_before": 0, "messages_after": 0}
        before = conn.execute(
            f"SELECT {_VIEW_COLS} FROM hm_messages WHERE owner = %s AND session_id = %s"
            " AND id < %s ORDER BY id DESC LIMIT %s",
            (self.owner, sid, anchor_id, window),
        ).fetchall()
        after = conn.execute(
            f"SELECT {_VIEW_COLS} FROM hm_messages WHERE owner = %s AND session_id = %s"
            " AND id > %s ORDER BY id ASC LIMIT %s",
            (self.owner, sid, anchor_id, window),
        ).fetchall()
        rows = [*reversed(before), anchor, *after]
        return {
            "window": [_decode(r) for r in rows],
            "messages_before": len(before),
            "messages_after": len(after),
        }

    def get_anchored_view(
        self,
        session_id: str,
        anchor_id: int,
        window: int = 5,
        bookend: int = 3,
        keep_roles: Sequence[str] = ("user", "assistant"),
    ) -> dict[str, Any]:
        """`get_messages_around` filtered to ``keep_roles`` (anchor kept) plus bookends."""
        roles = list(keep_roles)

        def run(conn: psycopg.Connection[Any]) -> dict[str, Any]:
            base = self._around(conn, session_id, int(anchor_id), window)
            full = base["window"]
            if not full:
                return {**base, "bookend_start": [], "bookend_end": []}
            kept = [m for m in full if m["id"] == anchor_id or m["role"] in roles]
            start = conn.execute(
                f"SELECT {_VIEW_COLS} FROM hm_messages WHERE owner = %s AND session_id = %s"
                " AND id < %s AND role = ANY(%s) AND content IS NOT NULL AND content <> ''"
                " ORDER BY id ASC LIMIT %s",
                (self.owner, session_id, full[0]["id"], roles, max(0, bookend)),
            ).fetchall()
            end = conn.execute(
                f"SELECT {_VIEW_COLS} FROM hm_messages WHERE owner = %s AND session_id = %s"
                " AND id > %s AND role = ANY(%s) AND content IS NOT NULL AND content <> ''"
                " ORDER BY id DESC LIMIT %s",
                (self.owner, session_id, full[-1]["id"], roles, max(0, bookend)),
            ).fetchall()
            return {
                "window": kept,
                "messages_before": base["messages_before"],
                "messages_after": base["messages_after"],
                "bookend_start": [_decode(r) for r in start],
                "bookend_end": [_decode(r) for r in reversed(end)],
            }

        return dict(self._read(run))

    # ------------------------------------------------------------------ search

    def find_hits(
        self,
        query: str,
        *,
        role_filter: Sequence[str] | None = None,
        source_filter: Sequence[str] | None = None,
        exclude_sources: Sequence[str] | None = None,
        limit: int = 20,
        offset: int = 0,
        sort: str | None = None,
        include_inactive: bool = False,
        any_terms: bool = False,
    ) -> Hits | None:
        """Matching rows without snippets (None when nothing matches or no terms).

        The SQLite archive's policy: implicit AND over the word index, then the CJK index
        (Latin words glued to CJK text); a CJK query on the CJK index plus its Latin terms
        on the word index; ``any_terms=True`` is the natural-language fallback (content
        terms OR-ed, very common terms dropped, neighbour smoothing). Ranking is
        ``ts_rank`` among the newest `RANK_WINDOW` matches (IDF-weighted per term in the
        fallback); ``sort="newest"|"oldest"`` orders by time.
        """
        parsed = parse_query(query)
        if not parsed.terms:
            return None
        limit = max(1, int(limit))
        offset = max(0, int(offset))
        filt = _Filters(role_filter, source_filter, exclude_sources, sort, include_inactive)
        want = limit + offset

        def run(conn: psycopg.Connection[Any]) -> list[dict[str, Any]]:
            if any_terms:
                return self._natural(conn, parsed, want, filt)
            return self._search_items(conn, list(parsed.items), parsed.has_cjk, want, filt)

        rows = self._read(run)
        if not rows:
            return None
        sources: dict[int, tuple[str, str]] = {}
        merged: list[dict[str, Any]] = []
        for row in rows:
            if row["id"] not in sources:
                sources[row["id"]] = row.pop("_src")
                merged.append(row)
        merged = merged[offset : offset + limit]
        for row in merged:
            row.pop("rank", None)
            row.pop("_src", None)
        return Hits(merged, sources, _needles(parsed))

    def _search_items(
        self,
        conn: psycopg.Connection[Any],
        items: list[Term | str],
        has_cjk: bool,
        want: int,
        filt: _Filters,
        natural: Sequence[Term] = (),
    ) -> list[dict[str, Any]]:
        if has_cjk:
            plans = [
                ("cjk", render_tsquery(items, cjk=True)),
                ("words", render_tsquery(_latin_only(items), cjk=False)),
            ]
            fallback: list[tuple[str, str]] = []
        else:
            plans = [("words", render_tsquery(items, cjk=False))]
            fallback = [("cjk", render_tsquery(items, cjk=True))]
        found: list[list[dict[str, Any]]] = []
        for group in (plans, fallback):
            for column, expr in group:
                if not expr:
                    continue
                if natural and column == "words" and not has_cjk:
                    rows = self._ranked_natural(conn, natural, want, filt)
                else:
                    rows = self._run(conn, column, expr, want, filt, bool(natural))
                for row in rows:
                    row["_src"] = (column, expr)
                if rows:
                    found.append(rows)
            if found:
                break
        merged = [row for rows in found for row in rows]
        if len(found) > 1:
            if filt.sort in ("newest", "oldest"):
                merged.sort(key=lambda r: (r["timestamp"], r["id"]), reverse=filt.sort == "newest")
            else:
                merged.sort(key=lambda r: (-(r.get("rank") or 0.0), r["id"]))
        return merged

    def _natural(
        self, conn: psycopg.Connection[Any], parsed: ParsedQuery, want: int, filt: _Filters
    ) -> list[dict[str, Any]]:
        terms = content_terms(parsed)
        if not terms:
            return []
        items: list[Term | str] = []
        for t in terms:
            if items:
                items.append("OR")
            items.append(t)
        has_cjk = any(is_cjk for t in terms for is_cjk, _ in split_cjk(t.text))
        return self._search_items(conn, items, has_cjk, want, filt, natural=terms)

    def _where(self, filt: _Filters) -> tuple[str, list[Any]]:
        where = ["m.owner = %s"]
        params: list[Any] = [self.owner]
        if filt.role_filter:
            where.append("m.role = ANY(%s)")
            params.append(list(filt.role_filter))
        if filt.source_filter:
            where.append("s.source = ANY(%s)")
            params.append(list(filt.source_filter))
        if filt.exclude_sources:
            where.append("NOT (s.source = ANY(%s))")
            params.append(list(filt.exclude_sources))
        if not filt.include_inactive:
            where.append("(m.active = 1 OR m.compacted = 1)")
        return " AND ".join(where), params

    _SELECT = (
        "m.id AS id, m.session_id AS session_id, m.role AS role, m.timestamp AS timestamp,"
        " m.tool_name AS tool_name, s.source AS source, s.model AS model,"
        " s.started_at AS session_started"
    )

    def _run(
        self,
        conn: psycopg.Connection[Any],
        column: str,
        expr: str,
        want: int,
        filt: _Filters,
        natural: bool,
    ) -> list[dict[str, Any]]:
        cond, params = self._where(filt)
        base = (
            f"FROM hm_messages m JOIN hm_sessions s ON s.owner = m.owner AND s.id = m.session_id"
            f" WHERE {cond} AND m.{column} @@ %s::tsquery"
        )
        if filt.sort in ("newest", "oldest"):
            direction = "DESC" if filt.sort == "newest" else "ASC"
            rows = conn.execute(
                f"SELECT {self._SELECT}, 0.0 AS rank {base}"
                f" ORDER BY m.timestamp {direction}, m.id {direction} LIMIT %s",
                [*params, expr, want],
            ).fetchall()
            return [dict(r) for r in rows]
        window = NATURAL_WINDOW if natural else RANK_WINDOW
        pool = max(NATURAL_POOL, want) if natural else want
        rows = conn.execute(
            f"SELECT * FROM (SELECT {self._SELECT}, ts_rank(m.{column}, %s::tsquery, 1) AS rank"
            f" {base} ORDER BY m.id DESC LIMIT %s) w ORDER BY rank DESC, id LIMIT %s",
            [expr, *params, expr, max(window, want), pool],
        ).fetchall()
        out = [dict(r) for r in rows]
        if natural:
            out = self._smooth(conn, out, filt)[:want]
        return out

    def _ranked_natural(
        self, conn: psycopg.Connection[Any], terms: Sequence[Term], want: int, filt: _Filters
    ) -> list[dict[str, Any]]:
        """The any-term fallback on the word index: common terms dropped, IDF-weighted
        ``ts_rank`` per term over the newest `NATURAL_WINDOW` matches, then smoothing."""
        exprs = [(t, render_tsquery([t], cjk=False)) for t in terms]
        exprs = [(t, e) for t, e in exprs if e]
        if not exprs:
            return []
        counts = {
            e: int(
                conn.execute(
                    "SELECT COUNT(*) AS n FROM (SELECT 1 FROM hm_messages WHERE owner = %s"
                    " AND words @@ %s::tsquery LIMIT %s) x",
                    (self.owner, e, COMMON_TERM_CAP),
                ).fetchone()["n"]  # type: ignore[index]
            )
            for _, e in exprs
        }
        rare = [(t, e) for t, e in exprs if counts[e] < COMMON_TERM_CAP] or exprs
        total = max(self._message_estimate(conn), 1)
        weights = [math.log((total - counts[e] + 0.5) / (counts[e] + 0.5) + 1.0) for _, e in rare]
        any_expr = " | ".join(e for _, e in rare)
        score = " + ".join(f"{w:.6f} * ts_rank(m.words, %s::tsquery, 1)" for w in weights)
        cond, params = self._where(filt)
        rows = conn.execute(
            f"SELECT {self._SELECT}, ({score}) AS rank FROM hm_messages m JOIN hm_sessions s"
            " ON s.owner = m.owner AND s.id = m.session_id"
            f" WHERE {cond} AND m.words @@ %s::tsquery ORDER BY m.id DESC LIMIT %s",
            [*(e for _, e in rare), *params, any_expr, NATURAL_WINDOW],
        ).fetchall()
        pool = max(NATURAL_POOL, want)
        ranked = sorted((dict(r) for r in rows), key=lambda r: (-r["rank"], r["id"]))[:pool]
        return self._smooth(conn, ranked, filt)[:want]

    def _message_estimate(self, conn: psycopg.Connection[Any]) -> int:
        """This owner's message count for IDF weights (counted at most once a minute)."""
        cached = getattr(self, "_estimate", None)
        if cached is not None and time.monotonic() - cached[1] < 60:
            return int(cached[0])
        value = self._count_messages(conn)
        self._estimate = (value, time.monotonic())
        return value

    def _count_messages(self, conn: psycopg.Connection[Any]) -> int:
        row = conn.execute(
            "SELECT COUNT(*) AS n FROM (SELECT 1 FROM hm_messages WHERE owner = %s"
            " LIMIT 1000000) x",
            (self.owner,),
        ).fetchone()
        return int(row["n"]) if row else 0

    def _smooth(
        self, conn: psycopg.Connection[Any], rows: list[dict[str, Any]], filt: _Filters
    ) -> list[dict[str, Any]]:
        """score(m) = rank(m) + `SMOOTHING` × max rank(adjacent message), as in SQLite."""
        if not rows:
            return rows
        score = {int(r["id"]): float(r["rank"] or 0.0) for r in rows}
        by_id = {int(r["id"]): r for r in rows}
        adjacent = conn.execute(
            "SELECT m.id,"
            " (SELECT p.id FROM hm_messages p WHERE p.owner = m.owner AND"
            "  p.session_id = m.session_id AND p.id < m.id ORDER BY p.id DESC LIMIT 1) AS prev,"
            " (SELECT n.id FROM hm_messages n WHERE n.owner = m.owner AND"
            "  n.session_id = m.session_id AND n.id > m.id ORDER BY n.id LIMIT 1) AS next"
            " FROM hm_messages m WHERE m.owner = %s AND m.id = ANY(%s)",
            (self.owner, list(score)),
        ).fetchall()
        near: dict[int, set[int]] = {}
        for r in adjacent:
            for n in (r["prev"], r["next"]):
                if n is not None:
                    near.setdefault(int(r["id"]), set()).add(int(n))
                    near.setdefault(int(n), set()).add(int(r["id"]))
        seeds = list(score)[:_SMOOTH_SEEDS]
        extra = sorted({n for mid in seeds for n in near.get(mid, ()) if n not in by_id})
        if extra:
            cond, params = self._where(filt)
            added = conn.execute(
                f"SELECT {self._SELECT}, 0.0 AS rank FROM hm_messages m JOIN hm_sessions s"
                " ON s.owner = m.owner AND s.id = m.session_id"
                f" WHERE {cond} AND m.id = ANY(%s)",
                [*params, extra],
            ).fetchall()
            by_id.update((int(r["id"]), dict(r)) for r in added)
        smoothed = {
            mid: score.get(mid, 0.0)
            + SMOOTHING * max((score.get(n, 0.0) for n in near.get(mid, ())), default=0.0)
            for mid in by_id
        }
        ranked = sorted(by_id, key=lambda mid: (-smoothed[mid], mid))
        return [{**by_id[mid], "rank": smoothed[mid]} for mid in ranked]

    def hit_snippet(self, hits: Hits, message_id: int) -> str:
        """The ``>>>term<<<`` snippet of one row of ``hits`` (around the first match)."""
        row = self._read(
            lambda conn: conn.execute(
                "SELECT content FROM hm_messages WHERE owner = %s AND id = %s",
                (self.owner, int(message_id)),
            ).fetchone()
        )
        return python_snippet(row["content"] if row else None, hits.needles)

    def search_messages(
        self, query: str, *, with_context: bool = True, with_snippet: bool = True, **kwargs: Any
    ) -> list[dict[str, Any]]:
        """Search message text; never raises for a malformed query (returns ``[]``).

        Rows as `SessionStore.search_messages`: ``id, session_id, role, snippet, timestamp,
        tool_name, source, model, session_started`` (+ ``context``).
        """
        hits = self.find_hits(query, **kwargs)
        if hits is None:
            return []
        for row in hits.rows:
            row["snippet"] = self.hit_snippet(hits, row["id"]) if with_snippet else ""
            if with_context:
                row["context"] = self._read(
                    lambda conn, r=row: self._context(
                        conn, r["session_id"], r["id"], r["timestamp"]
                    )
                )
        return hits.rows

    def _context(
        self, conn: psycopg.Connection[Any], sid: str, mid: int, ts: float
    ) -> list[dict[str, Any]]:
        prev = conn.execute(
            "SELECT role, content FROM hm_messages WHERE owner = %s AND session_id = %s AND"
            " (timestamp < %s OR (timestamp = %s AND id < %s)) ORDER BY timestamp DESC, id DESC"
            " LIMIT 1",
            (self.owner, sid, ts, ts, mid),
        ).fetchone()
        nxt = conn.execute(
            "SELECT role, content FROM hm_messages WHERE owner = %s AND session_id = %s AND"
            " (timestamp > %s OR (timestamp = %s AND id > %s)) ORDER BY timestamp, id LIMIT 1",
            (self.owner, sid, ts, ts, mid),
        ).fetchone()
        return [
            {"role": r["role"], "content": (r["content"] or "")[:200]} for r in (prev, nxt) if r
        ]

    # ------------------------------------------------------------------ maintenance

    def stats(self) -> dict[str, Any]:
        """Counts for this owner: sessions, messages, text_bytes, by_source (+ database)."""

        def run(conn: psycopg.Connection[Any]) -> dict[str, Any]:
            sessions = conn.execute(
                "SELECT COUNT(*) AS n FROM hm_sessions WHERE owner = %s", (self.owner,)
            ).fetchone()["n"]  # type: ignore[index]
            msgs: Any = conn.execute(
                "SELECT COUNT(*) AS n, COALESCE(SUM(octet_length(content)), 0) AS b"
                " FROM hm_messages WHERE owner = %s",
                (self.owner,),
            ).fetchone()
            by_source = {
                str(r["source"]): int(r["n"])
                for r in conn.execute(
                    "SELECT source, COUNT(*) AS n FROM hm_sessions WHERE owner = %s"
                    " GROUP BY source",
                    (self.owner,),
                ).fetchall()
            }
            size = conn.execute(
                "SELECT pg_total_relation_size('hm_messages') + "
                "pg_total_relation_size('hm_sessions') AS n"
            ).fetchone()["n"]  # type: ignore[index]
            return {
                "sessions": int(sessions),
                "messages": int(msgs["n"]),
                "db_size_bytes": int(size),
                "text_bytes": int(msgs["b"]),
                "by_source": by_source,
                "journal_mode": None,
                "path": f"{self.db.masked_dsn} (owner {self.owner})",
                "backend": "postgres",
            }

        return dict(self._read(run))

    def index_sizes(self) -> dict[str, int]:
        """Bytes of the word and CJK indexes (the whole database: indexes are shared)."""

        def run(conn: psycopg.Connection[Any]) -> dict[str, int]:
            rows = conn.execute(
                "SELECT relname, pg_relation_size(oid) AS n FROM pg_class"
                " WHERE relname IN ('hm_messages_words', 'hm_messages_cjk')"
            ).fetchall()
            names = {"hm_messages_words": "words", "hm_messages_cjk": "cjk"}
            return {names[r["relname"]]: int(r["n"]) for r in rows}

        return dict(self._read(run))


class _Filters:
    __slots__ = ("exclude_sources", "include_inactive", "role_filter", "sort", "source_filter")

    def __init__(
        self,
        role_filter: Sequence[str] | None,
        source_filter: Sequence[str] | None,
        exclude_sources: Sequence[str] | None,
        sort: str | None,
        include_inactive: bool,
    ) -> None:
        self.role_filter = role_filter
        self.source_filter = source_filter
        self.exclude_sources = exclude_sources
        self.sort = sort
        self.include_inactive = include_inactive


def _plain_continuation(model_config: Any) -> bool:
    """A child that is neither a branch nor a delegation (its model_config says so)."""
    if not model_config:
        return True
    try:
        cfg = json.loads(model_config)
    except (TypeError, ValueError):
        return True
    if not isinstance(cfg, dict):
        return True
    return cfg.get("_branched_from") is None and cfg.get("_delegate_from") is None


def _session_columns(conn: psycopg.Connection[Any]) -> set[str]:
    if not _SESSION_COLS_CACHE:
        rows = conn.execute(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_name = 'hm_sessions' AND table_schema = current_schema()"
        ).fetchall()
        _SESSION_COLS_CACHE.extend(str(r["column_name"]) for r in rows)
    return set(_SESSION_COLS_CACHE)


def _session_dict(row: Mapping[str, Any]) -> dict[str, Any]:
    d = dict(row)
    d.pop("owner", None)
    return d


def _normal_message(m: Mapping[str, Any], *, keep_id: bool = False) -> dict[str, Any]:
    """A message as stored: the data columns, role checked, content/tool calls as text,
    the timestamp fixed (now when missing)."""
    role = m.get("role")
    if not isinstance(role, str) or not role.strip():
        raise ValueError("message role must be a non-empty string")
    out: dict[str, Any] = {k: m.get(k) for k in MESSAGE_DATA_FIELDS if k in m}
    out["role"] = role
    out["content"] = _encode_content(m.get("content"))
    out["tool_calls"] = _encode_json(m.get("tool_calls"))
    ts = m.get("timestamp")
    out["timestamp"] = float(ts) if ts is not None else time.time()
    if out.get("active") is None:
        out.pop("active", None)
    if out.get("compacted") is None:
        out.pop("compacted", None)
    if keep_id:
        out["id"] = m.get("id")
    return out


_DEFAULTS = {"active": 1, "compacted": 0, "observed": 0}


def _copy_row(owner: str, mid: int, sid: str, m: Mapping[str, Any]) -> tuple[Any, ...]:
    values = []
    exact: dict[str, str] = {}
    for f in MESSAGE_DATA_FIELDS:
        v = m.get(f, _DEFAULTS.get(f))
        if v is None and f in _DEFAULTS:
            v = _DEFAULTS[f]
        if isinstance(v, bool):
            v = int(v)
        if isinstance(v, str) and "\x00" in v:
            # PostgreSQL text cannot hold NUL: the column shows U+FFFD (searchable, visible)
            # and the exact text is kept in nul_fields (JSON escapes NUL), restored on read.
            exact[f] = v
            v = v.replace("\x00", "\ufffd")
        values.append(v)
    role, content = m.get("role"), m.get("content")
    words = words_tsvector(role, content, m.get("tool_name"), m.get("tool_calls"))
    cjk = cjk_tsvector(role, content, m.get("tool_calls"))
    nul = json.dumps(exact, ensure_ascii=True) if exact else None
    return (owner, mid, sid, *values, words, cjk, nul)


def _restore_nul(row: Mapping[str, Any]) -> dict[str, Any]:
    """A stored message as given: fields that held NUL get their exact text back."""
    d = dict(row)
    exact = d.pop("nul_fields", None)
    if exact:
        d.update(json.loads(exact))
    return d
