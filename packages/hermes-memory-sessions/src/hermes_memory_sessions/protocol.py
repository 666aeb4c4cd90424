"""`SessionArchive`: the store interface every caller of the session archive uses.

`session_search`, the sessions provider, the CLI, the MCP server (through the provider) and
the importers and exporters call only these methods, so any backend that implements them
works everywhere: `hermes_memory_sessions.SessionStore` (SQLite, the embedded default)
and ``hermes_memory_postgres.PostgresSessionArchive`` (PostgreSQL).

Rows are plain dicts with Hermes' column names (see `hermes_memory_sessions.storage._store`).
Timestamps are epoch seconds (float); message ids are integers that grow with insertion.

Write semantics shared by the backends: the recording methods (``append_message(s)``,
``create_session(title=…)``, ``set_title``) mask credentials in message text and titles
unless the archive was opened with ``scrub_secrets=False``; the import methods
(``import_session``, ``import_more``) store text as given.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from hermes_memory_sessions.search._lexical import Hits

__all__ = ["ArchiveUnreachable", "SessionArchive"]


class ArchiveUnreachable(RuntimeError):
    """An archive's backend could not be reached in time (a database server that is down).

    Raised by reads; an archive that raises it keeps its writes (it spools them) and applies
    them when the backend is back, so a caller may go on writing.
    """


@runtime_checkable
class SessionArchive(Protocol):
    """What a session archive backend provides (see the module docstring)."""

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
        """Create a session (no-op when it exists); returns its id. A title is sanitised and
        masked of credentials (unless ``scrub_secrets=False``)."""
        ...

    def end_session(self, session_id: str, end_reason: str) -> bool:
        """End a session; the first writer wins. True when this call ended it."""
        ...

    def set_title(self, session_id: str, title: str | None, *, source: str = "user") -> str | None:
        """Set or clear a title (sanitised, masked of credentials unless
        ``scrub_secrets=False``, unique); returns the stored title. ``source`` is
        its provenance: an automatic title never overwrites a user's; a title held by a
        compression ancestor moves to this session."""
        ...

    def get_next_title_in_lineage(self, title: str) -> str:
        """The title of the next continuation: ``"x"`` → ``"x #2"`` → ``"x #3"``."""
        ...

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """Every stored column of one session, or None."""
        ...

    def resolve_session_id(self, id_or_prefix: str) -> str | None:
        """The full id for an exact id or a unique prefix (None when unknown/ambiguous)."""
        ...

    def matching_session_ids(self, prefix: str, limit: int) -> list[str]:
        """Up to ``limit`` session ids starting with ``prefix``, in id order."""
        ...

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
        """Sessions (all columns plus ``last_active``) in the requested order; ``since`` /
        ``until`` (epoch seconds, inclusive) bound ``started_at``, ``roles`` keeps sessions
        with a message of one of those roles."""
        ...

    def iter_sessions(self) -> Iterator[dict[str, Any]]:
        """Every session, oldest first (``started_at``, then id)."""
        ...

    def delete_session(self, session_id: str) -> bool:
        """Delete a session and its messages (children become roots)."""
        ...

    def prune(self, older_than_days: float) -> int:
        """Delete ended sessions older than the given age; returns how many."""
        ...

    def end_stale_sessions(self, older_than_hours: float) -> list[str]:
        """End sessions left open whose last activity is older than the given age."""
        ...

    def count_open_sessions(self, older_than_days: float | None = None) -> int:
        """Sessions not ended (optionally only those older than N days)."""
        ...

    def lineage_root(self, session_id: str) -> str:
        """The top of a session's ``parent_session_id`` chain (cycle-safe)."""
        ...

    def compression_tip(self, session_id: str) -> str:
        """The latest continuation of a conversation that compression carried forward."""
        ...

    def session_by_title(self, title: str) -> str | None:
        """The session a title names: its latest ``"<title> #N"``, else the exact title."""
        ...

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
        """Append one message (masked as `append_messages`); returns its id."""
        ...

    def append_messages(self, session_id: str, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        """Append messages to one session in one transaction; returns their ids.

        Credentials in each message's free text (``content``, ``tool_calls``, reasoning,
        ``api_content``) are masked unless the archive has ``scrub_secrets=False``.
        """
        ...

    def import_session(
        self,
        session: Mapping[str, Any],
        messages: Iterable[Mapping[str, Any]],
        *,
        keep_ids: bool = False,
        import_source: str | None = None,
        source_last_id: int | None = None,
    ) -> str:
        """Insert one complete session with its messages in one transaction (text as given,
        never masked)."""
        ...

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
        ...

    def import_state(self, source: str) -> tuple[int, dict[str, int]]:
        """``(watermark, {session_id: last source message id})`` of earlier imports."""
        ...

    def set_import_watermark(
        self, source: str, message_id: int, *, sessions: int = 0, messages: int = 0
    ) -> None:
        """Record that every message of ``source`` up to ``message_id`` was looked at."""
        ...

    def forget_import_source(self, source: str) -> None:
        """Drop the bookkeeping of an import source (its sessions stay)."""
        ...

    def get_messages(self, session_id: str) -> list[dict[str, Any]]:
        """Every message of a session with all stored columns, in id order."""
        ...

    def tail_messages(self, session_id: str, n: int) -> list[dict[str, Any]]:
        """The last ``n`` messages of a session, in id order."""
        ...

    def live_messages(self, session_id: str) -> list[dict[str, Any]]:
        """The live conversation (``active = 1``), ascending, ``tool_calls`` decoded."""
        ...

    def rewind_messages(self, session_id: str, message_ids: Sequence[int]) -> int:
        """Mark live messages of a session as undone (``active = 0, compacted = 0``, as
        Hermes marks rewound rows: search, browse and resume skip them); the session's live
        counters follow and ``rewind_count`` grows. Returns how many were live."""
        ...

    def reopen_session(self, session_id: str) -> bool:
        """Clear the end (``ended_at``, ``end_reason``) of a session a host resumes; True if
        it was ended."""
        ...

    def message_session(self, message_id: int) -> str | None:
        """The session a message belongs to, or None."""
        ...

    def first_user_message(self, session_id: str) -> str | None:
        """The content of the first non-empty user message of a session, or None."""
        ...

    def get_messages_around(self, session_id: str, anchor_id: int, window: int) -> dict[str, Any]:
        """``{"window", "messages_before", "messages_after"}`` around an anchor."""
        ...

    def get_anchored_view(
        self,
        session_id: str,
        anchor_id: int,
        window: int = 5,
        bookend: int = 3,
        keep_roles: Sequence[str] = ("user", "assistant"),
    ) -> dict[str, Any]:
        """The scroll window filtered to ``keep_roles`` plus bookends."""
        ...

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
        since: float | None = None,
        until: float | None = None,
    ) -> Hits | None:
        """Matching rows by the discovery policy, without snippets (None: no match);
        ``since``/``until`` (epoch seconds, inclusive) bound message timestamps."""
        ...

    def hit_snippet(self, hits: Hits, message_id: int) -> str:
        """The ``>>>term<<<`` snippet of one row of ``hits``."""
        ...

    def search_messages(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        """Full-text search with snippets and context; never raises for bad syntax."""
        ...

    # ------------------------------------------------------------------ maintenance
    def stats(self) -> dict[str, Any]:
        """Counts and sizes (``sessions``, ``messages``, ``text_bytes``, ...)."""
        ...

    def index_sizes(self) -> dict[str, int]:
        """Bytes used by each full-text index."""
        ...

    def close(self) -> None:
        """Release the connection(s); safe to call twice."""
        ...
