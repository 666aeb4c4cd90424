"""`SessionStore`: every message of every session in one SQLite file.

Public API (stable; importers and the CLI build on it)::

    store = SessionStore(path, *, busy_timeout_ms=5000, write_budget_s=60.0, read_budget_s=5.0,
                         journal_mode="wal", read_only=None, scrub_secrets=True)
        # HermesDatabaseError (a sqlite3.DatabaseError) when path is Hermes' own state.db

    # sessions
    store.create_session(session_id, *, source="cli", model=None, parent_session_id=None,
                         title=None, started_at=None) -> str   # idempotent (existing id: no-op)
    store.end_session(session_id, end_reason) -> bool          # first writer wins
    store.set_title(session_id, title) -> str | None           # sanitised, masked; None clears
    store.get_session(session_id) -> dict | None               # every stored column
    store.resolve_session_id(id_or_unique_prefix) -> str | None
    store.list_sessions(*, source=None, exclude_sources=None, limit=None, offset=0,
                        order="started_desc") -> list[dict]
        # order: "started_desc" (newest first), "started_asc", or "last_active"
        # (COALESCE(last_activity_at, started_at) DESC); ties broken by id
    store.iter_sessions() -> Iterator[dict]                    # started_at ASC, id ASC
    store.delete_session(session_id) -> bool                   # children are orphaned
    store.prune(older_than_days) -> int                        # ended sessions only
    store.end_stale_sessions(older_than_hours) -> list[str]    # left open by a crash
    store.count_open_sessions(older_than_days=None) -> int
    store.lineage_root(session_id) -> str

    # messages
    store.append_message(session_id, role, content, *, tool_name=None, tool_calls=None,
                         tool_call_id=None, timestamp=None) -> int
    store.append_messages(session_id, messages: Iterable[Mapping]) -> list[int]
        # one transaction; keys role, content, tool_name, tool_calls, tool_call_id, timestamp
        # credentials in the text masked (scrub_secrets); imports below keep text as given
    store.import_session(session: Mapping, messages: Iterable[Mapping], *,
                         keep_ids=False, import_source=None, source_last_id=None) -> str
        # one transaction: the session row with all given columns (id, source, model, title,
        # parent_session_id, started_at, ended_at, end_reason, counters, ...) and its
        # messages in order with their timestamps; ValueError if the id already exists
    store.import_more(session_id, messages, *, import_source, source_last_id,
                      ended_at=None, end_reason=None) -> bool   # incremental imports
    store.import_state(source) -> (watermark, {session_id: last source message id})
    store.set_import_watermark(source, message_id, *, sessions=0, messages=0)
    store.forget_import_source(source)
    store.get_messages(session_id) -> list[dict]               # all stored columns, id order
    store.tail_messages(session_id, n) -> list[dict]            # the last n, id order
    store.get_messages_around(session_id, anchor_id, window) -> dict
    store.get_anchored_view(session_id, anchor_id, window=5, bookend=3,
                            keep_roles=("user", "assistant")) -> dict
    store.rewind_messages(session_id, message_ids) -> int   # /undo: rows marked not live
    store.reopen_session(session_id) -> bool                # resume: the end is cleared

    # search / maintenance
    store.search_messages(query, *, role_filter=None, source_filter=None,
                          exclude_sources=None, limit=20, offset=0, sort=None,
                          include_inactive=False, any_terms=False,
                          with_context=True) -> list[dict]
    store.stats() -> dict   # sessions, messages, db_size_bytes, text_bytes, journal_mode
    store.index_sizes() -> dict   # bytes per full-text index
    store.optimize()        # merge the full-text indexes (after a large import)
    store.close()

Message dicts use Hermes' column names: ``id, session_id, role, content, tool_call_id,
tool_calls, tool_name, timestamp, token_count, finish_reason, reasoning, active,
compacted``. `get_messages` returns ``tool_calls`` as stored (JSON text); the anchored views
return it decoded to a list. ``tool_calls`` may be given as a list/dict (stored as JSON) or
as already-encoded JSON text.

With ``scrub_secrets`` on (the default) the recording API — ``append_message(s)``,
``create_session(title=…)``, ``set_title`` — masks credentials (API keys, passwords,
tokens: `hermes_memory_core.scrub_secrets`) in message text and titles before they are
stored, so a host that records through the store directly keeps no secret in the archive.
Imports (``import_session``, ``import_more``) store text as given: the Hermes importer
masks what it reads itself, and a JSONL export must round-trip exactly. The ``sessions``
provider opens its store with ``scrub_secrets=False``: the `MemoryManager` has masked
everything it hands over (its own ``scrub_secrets`` decides).

Every writer runs in ``BEGIN IMMEDIATE`` with a bounded retry (jittered backoff within
``write_budget_s``), so several processes can append at once without losing rows or
surfacing "database is locked". One store may be shared by threads (a lock serialises use).

The class is assembled from parts with one job each, one level deep: the connection and its
write transaction (`archive_connection`, composed), recording (`archive_writes`), imports
(`archive_imports`), plain reads (`archive_browse`), titles and lineage (`archive_titles`),
upkeep (`archive_maintenance`), the protocol's search reads (`sqlite_reads`) and vectors
(`archive_vectors`). Why parts mixed in rather than objects held: the API above is one
object shared with the PostgreSQL backend, and holding parts would need every signature
written twice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_memory_sessions.search._shaping import NUMBERED_TITLE
from hermes_memory_sessions.storage._browse import ArchiveBrowse
from hermes_memory_sessions.storage._connection import (
    ArchiveConnection,
    ArchiveReadOnly,
    cjk_document,
)
from hermes_memory_sessions.storage._imports import ArchiveImports
from hermes_memory_sessions.storage._maintenance import STALE_END_REASON, ArchiveMaintenance
from hermes_memory_sessions.storage._message_rows import (
    MESSAGE_DATA_FIELDS,
    MESSAGE_FIELDS,
    check_id,
    count_tool_calls,
    encode_content,
    encode_json,
    schema_columns,
)
from hermes_memory_sessions.storage._reads import SqliteArchiveReads
from hermes_memory_sessions.storage._rewind import ArchiveRewind
from hermes_memory_sessions.storage._titles import (
    TITLE_MAX_CHARS,
    TITLE_SOURCES,
    ArchiveTitles,
    sanitize_title,
)
from hermes_memory_sessions.storage._writes import ArchiveWrites
from hermes_memory_sessions.vectors._archive import ArchiveVectors

__all__ = [
    "MESSAGE_DATA_FIELDS",
    "STALE_END_REASON",
    "TITLE_MAX_CHARS",
    "TITLE_SOURCES",
    "ArchiveReadOnly",
    "SessionStore",
    "cjk_document",
    "sanitize_title",
    "schema_columns",
]

# Kept importable here under their historical names: the PostgreSQL backend imports them
# from this module.
_MESSAGE_FIELDS = MESSAGE_FIELDS
_NUMBERED_TITLE = NUMBERED_TITLE
_check_id = check_id
_count_tool_calls = count_tool_calls
_encode_content = encode_content
_encode_json = encode_json


class SessionStore(
    ArchiveWrites,
    ArchiveRewind,
    ArchiveImports,
    ArchiveBrowse,
    ArchiveTitles,
    ArchiveMaintenance,
    SqliteArchiveReads,
    ArchiveVectors,
):
    """The session archive over one SQLite file (see the module docstring for the API).

    :param path: database file; created with mode 0600 (parent directories too).
    :param busy_timeout_ms: SQLite busy timeout per attempt.
    :param write_budget_s: total time a write keeps retrying a locked database before it
        raises ``sqlite3.OperationalError``.
    :param read_budget_s: about the longest a read waits for a locked database (or for a write
        of this store in another thread) before it raises `schema.ArchiveBusy` (a
        ``sqlite3.OperationalError``); reads answer tools inside the agent's turn.
    :param journal_mode: ``"wal"`` (default; falls back to ``"delete"`` where WAL cannot
        work) or ``"delete"``. The mode in effect is `journal_mode` on the instance.
    :param read_only: ``True`` opens for reading only (nothing is created or written; writes
        raise `ArchiveReadOnly`); ``None`` (default) does so when the file exists and it or
        its directory is not writable (a read-only home), else opens for writing.
    :param embedder: an embedder (``hermes_memory_vectors.Embedder``) for hybrid recall: new
        messages are embedded by a background thread, ``discover_messages`` and
        ``session_search`` fuse dense similarity with the lexical ranking, and
        ``embed_pending()`` backfills (see `hermes_memory_sessions.vectors._index`). ``None``
        (default): lexical search only.
    :param embed_in_background: with an embedder, start the background embedding thread
        (``False``: only ``embed_pending`` embeds).
    :param scrub_secrets: mask credentials (`hermes_memory_core.scrub_secrets`) in what the
        recording API stores: each message's free text in ``append_message`` /
        ``append_messages`` (``content``, ``tool_calls``, ``reasoning``,
        ``reasoning_content``, ``api_content``; never role, ids, timestamps or
        ``tool_name``) and the title of ``create_session`` / ``set_title``. Default on;
        ``False`` stores text as given (for a caller that masked it already, such as the
        ``sessions`` provider behind a `MemoryManager`). Imports never mask. The setting is
        `scrub_secrets` on the instance.

    :raises hermesdb.HermesDatabaseError: ``path`` is Hermes Agent's own ``state.db`` (the
        archive is a file of its own; import Hermes' sessions with ``import_hermes_db``).
    :raises sqlite3.OperationalError: a read-only archive too old to read, or not readable.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        busy_timeout_ms: int = 5000,
        write_budget_s: float = 60.0,
        read_budget_s: float = 5.0,
        journal_mode: str = "wal",
        read_only: bool | None = None,
        embedder: Any = None,
        embed_in_background: bool = True,
        scrub_secrets: bool = True,
    ) -> None:
        self.path = Path(path).expanduser()
        self.scrub_secrets = scrub_secrets
        self._db = ArchiveConnection(
            self.path,
            busy_timeout_ms=busy_timeout_ms,
            write_budget_s=write_budget_s,
            read_budget_s=read_budget_s,
            journal_mode=journal_mode,
            read_only=read_only,
        )
        if embedder is not None:
            try:
                self._attach_embedder(embedder, background=embed_in_background)
            except BaseException:
                self._db.close_now()
                raise

    @property
    def read_only(self) -> bool:
        """Whether the archive was opened for reading only (writes raise `ArchiveReadOnly`)."""
        return self._db.read_only

    @property
    def journal_mode(self) -> str:
        """The journal mode in effect (``"wal"``, or ``"delete"`` where WAL cannot work)."""
        return self._db.journal_mode

    def close(self) -> None:
        """Checkpoint (passive) and close the connection; safe to call twice."""
        self._close_vectors()
        self._db.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
