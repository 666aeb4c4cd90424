"""What ``sessions browse`` shows, read through the archive protocol (no terminal UI here).

`BrowseModel` keeps the newest sessions, filters them as the person types (titles and ids
first, then the archive's message discovery, the same as ``session_search``'s) and builds the
preview of one session: the transcript around the hit, or the end of the session when the
filter is empty. Works on every `SessionArchive` (SQLite and PostgreSQL).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_memory_sessions.protocol import SessionArchive

#: Sessions loaded for the picker when ``--limit``/``--all`` are not given.
PICKER_ROWS = 1_000
#: Messages the discovery ranks per filter (grouped into sessions, best hit first).
DISCOVERY_POOL = 300
#: Roles searched, as ``session_search`` does by default.
ROLES = ("user", "assistant")
#: Messages shown each side of the hit in the preview; messages at the end of a session.
WINDOW = 3
TAIL = 6

_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f]")
_SYNTAX = re.compile(r"[\"*()]|\b(?:AND|OR|NOT|NEAR)\b")


@dataclass
class Row:
    """One session of the list; ``hit`` is the message the filter matched (None: no hit)."""

    session: dict[str, Any]
    hit: int | None = None

    @property
    def id(self) -> str:
        return str(self.session["id"])


@dataclass
class Preview:
    """The preview of one row: the session's head and a window of its messages.

    ``more_before``/``more_after``: the session has messages outside the window.
    """

    session: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)
    hit: int | None = None
    more_before: bool = False
    more_after: bool = False


def live_query(text: str) -> str | None:
    """The query to run while the person is typing, or None when it must run as typed.

    The last Latin word is still being typed, so it becomes a prefix (``rot`` ->
    ``rot*``) once it has two characters; CJK text is matched as a substring already and
    queries with syntax (quotes, ``OR``, ``*``) are left alone.
    """
    stripped = text.rstrip()
    if not stripped or stripped != text or _SYNTAX.search(text):
        return None
    last = stripped.split()[-1]
    # one letter as a prefix matches most of an archive and costs the most: wait for two
    if _CJK.search(last) or not re.fullmatch(r"\w{2,}", last):
        return None
    return f"{stripped}*"


def needles(query: str) -> list[str]:
    """Words of ``query`` to highlight in the preview (longest first)."""
    words = {
        w for w in re.findall(r"\w+", query) if w not in {"AND", "OR", "NOT", "NEAR"} and w.strip()
    }
    return sorted(words, key=len, reverse=True)


class BrowseModel:
    """The sessions of one archive as the picker shows them."""

    def __init__(
        self, store: SessionArchive, *, limit: int | None, source: str | None = None
    ) -> None:
        self.store = store
        self.limit = limit
        self.source = source
        self.sessions: list[dict[str, Any]] = []
        self._by_id: dict[str, dict[str, Any]] = {}
        self.query = ""
        self.rows: list[Row] = []
        self._openings: dict[str, str] = {}
        self.reload()

    # ------------------------------------------------------------------ the list
    def reload(self) -> None:
        """Read the newest sessions again (after a rename or a delete) and re-filter."""
        self.sessions = self.store.list_sessions(source=self.source, limit=self.limit)
        self._by_id = {str(s["id"]): s for s in self.sessions}
        self.set_query(self.query)

    @property
    def truncated(self) -> bool:
        """True when the archive may hold more sessions than were loaded."""
        return self.limit is not None and len(self.sessions) >= self.limit

    def set_query(self, text: str) -> None:
        """Filter: sessions whose title or id holds the text, then message hits, best first."""
        self.query = text
        query = text.strip()
        if not query:
            self.rows = [Row(s) for s in self.sessions]
            return
        hits = self._discover(text)
        folded = query.casefold()
        rows = [
            Row(s, hits.get(str(s["id"])))
            for s in self.sessions
            if folded in str(s.get("title") or "").casefold() or str(s["id"]).startswith(query)
        ]
        seen = {r.id for r in rows}
        named = self._titled(query)  # an older session, past the loaded ones, by its title
        if named is not None and named["id"] not in seen:
            rows.append(Row(named, hits.get(str(named["id"]))))
            seen.add(str(named["id"]))
        for sid, message_id in hits.items():
            if sid in seen:
                continue
            seen.add(sid)
            session = self._session(sid)
            if session is not None:
                rows.append(Row(session, message_id))
        self.rows = rows

    def _titled(self, title: str) -> dict[str, Any] | None:
        """The session the archive resolves ``title`` to (``"x"`` -> its latest ``"x #N"``)."""
        try:
            sid = self.store.session_by_title(title)
        except ValueError:  # a title the archive refuses to look up (control characters)
            return None
        session = None if sid is None else self._session(sid)
        if session is None or (self.source and session.get("source") != self.source):
            return None
        return session

    def _session(self, sid: str) -> dict[str, Any] | None:
        """A loaded session, or one older than the loaded ones read from the archive."""
        found = self._by_id.get(sid)
        if found is None:
            found = self.store.get_session(sid)
            if found is not None:
                self._by_id[sid] = found
        return found

    def _discover(self, text: str) -> dict[str, int]:
        """Session id -> its best message id, in the discovery's order (best first)."""
        found: list[dict[str, Any]] = []
        prefix = live_query(text)
        for query in [q for q in (prefix, text.strip()) if q]:
            found = self._ranked(query)
            if found:
                break
        best: dict[str, int] = {}
        for row in found:
            if self.source and row.get("source") not in (None, self.source):
                continue
            best.setdefault(str(row["session_id"]), int(row["id"]))
        return best

    def _ranked(self, query: str) -> list[dict[str, Any]]:
        """Message rows ranked by ``session_search``'s discovery policy.

        The SQLite archive has ``discover_messages`` (implicit AND, then the natural-language
        fallback); every archive has ``find_hits``, which runs the same lexical policy. No
        embedder is attached: dense similarity scores every session, so a filter would never
        narrow the list.
        """
        discover = getattr(self.store, "discover_messages", None)
        if discover is not None:
            rows: list[dict[str, Any]] = discover(query, limit=DISCOVERY_POOL, role_filter=ROLES)
            return rows
        sources = [self.source] if self.source else None
        hits = self.store.find_hits(
            query, role_filter=ROLES, source_filter=sources, limit=DISCOVERY_POOL
        )
        if hits is None and len(query.split()) >= 2:
            hits = self.store.find_hits(
                query,
                role_filter=ROLES,
                source_filter=sources,
                limit=DISCOVERY_POOL,
                any_terms=True,
            )
        return list(hits.rows) if hits is not None else []

    def opening(self, sid: str) -> str:
        """The first user message of a session (shown for an untitled one), read once."""
        if sid not in self._openings:
            try:
                self._openings[sid] = self.store.first_user_message(sid) or ""
            except Exception:  # only a label: a failed read must not break the list
                self._openings[sid] = ""
        return self._openings[sid]

    # ------------------------------------------------------------------ the preview
    def preview(self, row: Row) -> Preview:
        """The transcript around the row's hit, or the last messages of the session."""
        session = self.store.get_session(row.id) or row.session
        if row.hit is not None:
            view = self.store.get_messages_around(row.id, row.hit, WINDOW)
            window: Sequence[dict[str, Any]] = view.get("window") or []
            if window:
                # the counts are of the window: a full side means there may be more
                return Preview(
                    session,
                    list(window),
                    row.hit,
                    int(view.get("messages_before") or 0) >= WINDOW,
                    int(view.get("messages_after") or 0) >= WINDOW,
                )
        messages = self.store.tail_messages(row.id, TAIL)
        total = int(session.get("message_count") or len(messages))
        return Preview(session, messages, None, total > len(messages), False)

    # ------------------------------------------------------------------ changes
    def rename(self, sid: str, title: str) -> str | None:
        """Set the title (``""`` clears it); `ValueError` with the archive's reason."""
        result = self.store.set_title(sid, title)
        self.reload()
        return result

    def delete(self, sid: str) -> bool:
        """Delete the session and its messages."""
        done = self.store.delete_session(sid)
        self.reload()
        return done
