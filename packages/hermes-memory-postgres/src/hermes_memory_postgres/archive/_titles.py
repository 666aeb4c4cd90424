"""`TitleOps`: session titles and lineage, as the SQLite archive keeps them.

A compression continuation takes the next numbered title (``"x"`` → ``"x #2"``), a title
held by a compression ancestor moves to the heir, automatic titles never overwrite a
user's, and the writers of one title are serialised across hosts by an advisory lock.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg

from hermes_memory_postgres.archive._core import ArchiveCore
from hermes_memory_postgres.archive._rows import session_dict
from hermes_memory_sessions.search import escape_like, next_numbered_title, title_base
from hermes_memory_sessions.storage import TITLE_SOURCES, clean_title

__all__ = ["TitleOps"]


class TitleOps(ArchiveCore):
    """Titles, numbered continuations and lineage walks of one owner's sessions."""

    def _lock_title(self, conn: psycopg.Connection[Any], title: str) -> None:
        """Serialise, until commit, the writers of one title of this owner (other hosts too):
        the check that a title is free and the insert that takes it are one step."""
        conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            (f"hm-title\x1f{self.owner}\x1f{title}",),
        )

    def _next_title(self, conn: psycopg.Connection[Any], title: str, *, lock: bool) -> str:
        base = title_base(title)
        if lock:
            self._lock_title(conn, "#base\x1f" + base)
        rows = conn.execute(
            "SELECT title FROM hm_sessions WHERE owner = %s AND (title = %s OR title LIKE %s)",
            (self.owner, base, escape_like(base) + " #%"),
        ).fetchall()
        return next_numbered_title(base, (str(r["title"]) for r in rows))

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

    def set_title(self, session_id: str, title: str | None, *, source: str = "user") -> str | None:
        """Set (or clear) a title; returns the title now stored (see `SessionStore.set_title`).

        ``source`` is the provenance: ``"user"`` always wins, an automatic title lands only
        on an untitled session or over one of lower rank. A title held by a compression
        ancestor moves here. With ``scrub_secrets`` on credentials in the title are masked.
        ValueError for an unknown session or provenance, or a title in use by another
        conversation.
        """
        if source not in TITLE_SOURCES:
            raise ValueError(f"title source must be one of {sorted(TITLE_SOURCES)}")
        clean = clean_title(title, scrub=self.scrub_secrets)

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

        return self._write(run)

    def lineage_root(self, session_id: str) -> str:
        """Walk ``parent_session_id`` to the top (cycle-safe; stops at a missing row)."""

        memo = self._memo()

        def run(conn: psycopg.Connection[Any]) -> str:
            seen = {session_id}
            current = session_id
            while True:
                # The whole row in a pinned block: discovery asks get_session next.
                cols = "s.*" if memo is not None else "s.parent_session_id"
                row = conn.execute(
                    f"SELECT {cols}, p.id AS _present FROM hm_sessions s"  # noqa: S608
                    " LEFT JOIN hm_sessions p ON p.owner = s.owner AND p.id ="
                    " s.parent_session_id WHERE s.owner = %s AND s.id = %s",
                    (self.owner, current),
                ).fetchone()
                if memo is not None and row is not None:
                    found = session_dict(row)
                    del found["_present"]
                    memo[(self.owner, "session", current)] = found
                parent = row["parent_session_id"] if row else None
                if not parent or parent in seen or row is None or row["_present"] is None:
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
            # One round trip for both lookups (every discovery asks). ``title IS NOT
            # NULL`` (implied by the LIKE) is an index condition of hm_sessions_title: an
            # archive of untitled sessions is not scanned whole (9,115 sessions at 1M
            # messages: 1.9 ms; 0.1 ms with it).
            row = conn.execute(
                "SELECT id FROM ((SELECT id, 0 AS pick FROM hm_sessions WHERE owner = %s"
                "  AND title IS NOT NULL AND title LIKE %s ORDER BY started_at DESC LIMIT 1)"
                " UNION ALL (SELECT id, 1 FROM hm_sessions WHERE owner = %s AND title = %s"
                "  LIMIT 1)) t ORDER BY pick LIMIT 1",
                (self.owner, escape_like(title) + " #%", self.owner, title),
            ).fetchone()
            return str(row["id"]) if row else None

        return self._read(run)


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
