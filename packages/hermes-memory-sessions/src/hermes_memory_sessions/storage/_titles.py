"""Session titles: cleaning, provenance ranks, numbered continuations and lineage.

A continuation that compression starts inherits its parent's title with the next number
(``"x"`` → ``"x #2"``); a title is unique across sessions except that it moves from a
compression ancestor to its heir; an automatic title never replaces one of equal or higher
rank (the user's above all).
"""

from __future__ import annotations

import sqlite3
import unicodedata

from hermes_memory_sessions.search._shaping import (
    escape_like,
    like_prefix,
    next_numbered_title,
    title_base,
)
from hermes_memory_sessions.storage._connection import SqliteArchiveBase

__all__ = [
    "TITLE_MAX_CHARS",
    "TITLE_SOURCES",
    "ArchiveTitles",
    "check_title_free",
    "clean_title",
    "compression_tip",
    "next_title_in_lineage",
    "sanitize_title",
    "session_by_title",
]

#: Longest title accepted after sanitising.
TITLE_MAX_CHARS = 100
_INVISIBLE = {
    "\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u2060", "\ufeff", "\ufffc",
    "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",
    "\u2066", "\u2067", "\u2068", "\u2069",
}  # fmt: skip


#: Title provenance and its rank: an automatic title never replaces one of equal or higher
#: rank; a title with no recorded provenance counts as the user's.
TITLE_SOURCES: dict[str, int] = {
    "derived": 0,
    "branch_fallback": 0,
    "llm": 1,
    "branch": 1,
    "user": 2,
}


def next_title_in_lineage(conn: sqlite3.Connection, title: str) -> str:
    """The title of the next continuation of ``title`` given the titles in use."""
    base = title_base(title)
    taken = [
        str(r[0])
        for r in conn.execute(
            "SELECT title FROM sessions WHERE title = ? OR title LIKE ? ESCAPE '\\'",
            (base, f"{escape_like(base)} #%"),
        )
    ]
    return next_numbered_title(base, taken)


def _is_compression_ancestor(conn: sqlite3.Connection, holder: str, session_id: str) -> bool:
    """Whether ``holder`` is reached from ``session_id`` through compression hops only."""
    current, seen = session_id, {session_id}
    for _ in range(1000):
        row = conn.execute(
            "SELECT p.id, p.end_reason FROM sessions c JOIN sessions p"
            " ON p.id = c.parent_session_id WHERE c.id = ?",
            (current,),
        ).fetchone()
        if row is None or row[1] != "compression" or row[0] in seen:
            return False
        if row[0] == holder:
            return True
        current = str(row[0])
        seen.add(current)
    return False


def check_title_free(conn: sqlite3.Connection, title: str, session_id: str) -> None:
    """Refuse a title in use, except by a compression ancestor: it moves to the heir."""
    row = conn.execute(
        "SELECT id FROM sessions WHERE title = ? AND id != ?", (title, session_id)
    ).fetchone()
    if row is None:
        return
    if _is_compression_ancestor(conn, str(row[0]), session_id):
        conn.execute("UPDATE sessions SET title = NULL WHERE id = ?", (row[0],))
        return
    raise ValueError(f"Title '{title}' is already in use by session {row[0]}")


def sanitize_title(title: str | None) -> str | None:
    """Clean a session title; None for an empty result.

    Removes control characters (whitespace kept), zero-width / bidi / object-replacement
    code points and lone surrogates, collapses whitespace and trims. Raises ValueError when
    the result is longer than `TITLE_MAX_CHARS`.
    """
    if title is None:
        return None
    chars = []
    for ch in str(title):
        if ch in _INVISIBLE or 0xD800 <= ord(ch) <= 0xDFFF:
            continue
        if unicodedata.category(ch) == "Cc" and not ch.isspace():
            continue
        chars.append(ch)
    cleaned = " ".join("".join(chars).split())
    if not cleaned:
        return None
    if len(cleaned) > TITLE_MAX_CHARS:
        raise ValueError(f"Title too long ({len(cleaned)} chars, max {TITLE_MAX_CHARS})")
    return cleaned


def clean_title(title: str | None, *, scrub: bool) -> str | None:
    """A title as the archives' write API stores it: `sanitize_title`, then with ``scrub``
    credentials masked (`hermes_memory_core.scrub_secrets`).

    The mask is applied to the sanitised text, so an invisible character inside a key does
    not hide it from the scrubber; a masked title is sanitised again (its length checked).
    """
    clean = sanitize_title(title)
    if not scrub or clean is None:
        return clean
    from hermes_memory_core import scrub_secrets  # the rule set loads on first use

    masked = scrub_secrets(clean)
    return clean if masked == clean else sanitize_title(masked)


def session_by_title(conn: sqlite3.Connection, title: str) -> str | None:
    """The session a remembered title names: its latest ``"<title> #N"`` continuation, else
    the session titled exactly ``title`` (as Hermes resolves titles)."""
    pattern = like_prefix(f"{title} #")
    row = None
    if pattern is not None:  # a query too long to be a title names no session
        # ``title IS NOT NULL`` (implied by LIKE) lets SQLite walk the partial title index
        # (titled sessions only, no table read for a title that does not match) instead of
        # every session in start order: 7 ms at 9,000 sessions, on every search.
        row = conn.execute(
            "SELECT id FROM sessions WHERE title IS NOT NULL AND title LIKE ? ESCAPE '\\' "
            "ORDER BY started_at DESC LIMIT 1",
            (pattern,),
        ).fetchone()
    if row is None:
        row = conn.execute("SELECT id FROM sessions WHERE title = ?", (title,)).fetchone()
    return str(row[0]) if row else None


def compression_tip(conn: sqlite3.Connection, session_id: str) -> str:
    """The latest continuation of a conversation that compression carried forward.

    Follows children of compression-ended sessions (never branches, delegations or tool
    runs), preferring a child that was itself compressed, then a live one, then the most
    recently active; the walk is bounded and cycle-safe.
    """
    current, seen = session_id, {session_id}
    for _ in range(100):
        row = conn.execute(
            "SELECT c.id FROM sessions p JOIN sessions c ON c.parent_session_id = p.id"
            " WHERE p.id = ? AND p.end_reason = 'compression'"
            " AND json_extract(COALESCE(c.model_config, '{}'), '$._branched_from') IS NULL"
            " AND json_extract(COALESCE(c.model_config, '{}'), '$._delegate_from') IS NULL"
            " AND COALESCE(c.source, '') <> 'tool'"
            " ORDER BY CASE WHEN c.end_reason = 'compression' THEN 0"
            "  WHEN c.ended_at IS NULL THEN 1 ELSE 2 END,"
            " COALESCE(c.last_activity_at, c.started_at) DESC, c.started_at DESC, c.id DESC"
            " LIMIT 1",
            (current,),
        ).fetchone()
        if row is None or row[0] in seen:
            return current
        current = str(row[0])
        seen.add(current)
    return current


class ArchiveTitles(SqliteArchiveBase):
    """`SessionStore`'s title and lineage methods."""

    #: Whether titles are masked of credentials (set by `SessionStore`).
    scrub_secrets: bool

    def get_next_title_in_lineage(self, title: str) -> str:
        """The title for the next continuation: ``"x"`` → ``"x #2"`` → ``"x #3"``.

        A trailing `` #N`` of ``title`` is dropped to find the base; the base itself is
        returned while no session uses it or a numbered form of it (the unnumbered title
        counts as #1).
        """
        with self.read() as conn:
            return next_title_in_lineage(conn, title)

    def set_title(self, session_id: str, title: str | None, *, source: str = "user") -> str | None:
        """Set (or with None/blank, clear) a session's title; returns the title now stored.

        ``source`` is the title's provenance (`TITLE_SOURCES`): ``"user"`` always wins; an
        automatic title (``"derived"``, ``"llm"``, ``"branch"``, ``"branch_fallback"``) lands
        only on an untitled session or over a title of lower rank, so it never overwrites a
        user's (the stored title is returned unchanged then). A title held by a compression
        ancestor moves to this session (the ancestor's becomes NULL). With ``scrub_secrets``
        on (the default) credentials in the title are masked (`clean_title`).

        Raises ValueError for an unknown session or provenance, a too-long title, or a
        title already in use by another conversation.
        """
        if source not in TITLE_SOURCES:
            raise ValueError(f"title source must be one of {sorted(TITLE_SOURCES)}")
        clean = clean_title(title, scrub=self.scrub_secrets)
        with self._write() as conn:
            row = conn.execute(
                "SELECT title, title_source FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                raise ValueError(f"session_id not found: {session_id}")
            held = TITLE_SOURCES.get(row[1] or "user", TITLE_SOURCES["user"])
            if source != "user" and row[0] is not None and held >= TITLE_SOURCES[source]:
                return str(row[0])
            if clean is not None:
                check_title_free(conn, clean, session_id)
            conn.execute(
                "UPDATE sessions SET title = ?, title_source = ? WHERE id = ?",
                (clean, source if clean is not None else None, session_id),
            )
        return clean

    def lineage_root(self, session_id: str) -> str:
        """Walk ``parent_session_id`` to the top (cycle-safe; stops at a missing row)."""
        seen = {session_id}
        current = session_id
        with self.read() as conn:
            while True:
                row = conn.execute(
                    "SELECT parent_session_id FROM sessions WHERE id = ?", (current,)
                ).fetchone()
                parent = row[0] if row else None
                if not parent or parent in seen:
                    return current
                if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (parent,)).fetchone():
                    return current
                seen.add(parent)
                current = parent
