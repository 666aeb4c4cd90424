"""The reads of the `SessionArchive` protocol that `session_search` and the CLI need, for the
SQLite `SessionStore` (mixed into it; each runs under the store's read lock)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any, TypeVar

from hermes_memory_sessions.search._lexical import Hits
from hermes_memory_sessions.search._shaping import like_prefix
from hermes_memory_sessions.storage._message_rows import PREVIEW_ELIGIBLE

__all__ = ["SqliteArchiveReads"]

T = TypeVar("T")


class SqliteArchiveReads:
    """Protocol reads over ``self.read_with`` (provided by `SessionStore`)."""

    def read_with(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        raise NotImplementedError  # pragma: no cover - SessionStore provides it

    def find_hits(self, query: str, **filters: Any) -> Hits | None:
        """Matching rows without snippets; ``filters`` are the keywords of
        `hermes_memory_sessions.search._lexical.find_hits` (the protocol's ``find_hits``)."""
        from hermes_memory_sessions.search._lexical import find_hits

        return self.read_with(find_hits, query, **filters)

    def hit_snippet(self, hits: Hits, message_id: int) -> str:
        """The ``>>>term<<<`` snippet of one row of ``hits``."""
        return self.read_with(hits.snippet, message_id)

    def live_messages(self, session_id: str) -> list[dict[str, Any]]:
        """The live conversation of a session (``active = 1``), ascending, decoded."""
        from hermes_memory_sessions.search._lexical import live_messages

        return self.read_with(live_messages, session_id)

    def session_by_title(self, title: str) -> str | None:
        """The session a title names (its latest ``"<title> #N"``, else the exact title)."""
        from hermes_memory_sessions.tool import _session_by_title

        return self.read_with(_session_by_title, title)

    def compression_tip(self, session_id: str) -> str:
        """The latest continuation of a conversation that compression carried forward."""
        from hermes_memory_sessions.tool import _compression_tip

        return self.read_with(_compression_tip, session_id)

    def message_session(self, message_id: int) -> str | None:
        """The session a message belongs to, or None."""

        def run(conn: sqlite3.Connection) -> str | None:
            row = conn.execute(
                "SELECT session_id FROM messages WHERE id = ?", (int(message_id),)
            ).fetchone()
            return str(row[0]) if row else None

        return self.read_with(run)

    def first_user_message(self, session_id: str) -> str | None:
        """The content of the first non-empty user message of a session, or None (undone
        messages and compression summaries are not eligible)."""

        def run(conn: sqlite3.Connection) -> str | None:
            row = conn.execute(
                "SELECT content FROM messages WHERE session_id = ? AND role = 'user'"  # noqa: S608
                " AND content IS NOT NULL AND content != ''"
                f" AND {PREVIEW_ELIGIBLE} ORDER BY id LIMIT 1",
                (session_id,),
            ).fetchone()
            return str(row[0]) if row else None

        return self.read_with(run)

    def matching_session_ids(self, prefix: str, limit: int) -> list[str]:
        """Up to ``limit`` session ids starting with ``prefix``, in id order."""
        pattern = like_prefix(prefix)
        if pattern is None:
            return []

        def run(conn: sqlite3.Connection) -> list[str]:
            rows = conn.execute(
                "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?",
                (pattern, int(limit)),
            ).fetchall()
            return [str(r[0]) for r in rows]

        return self.read_with(run)
