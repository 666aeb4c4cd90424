"""`SessionStore`: every message of every session in one SQLite file.

Its methods are the `hermes_memory_sessions.protocol.SessionArchive` protocol (shared with
the PostgreSQL backend; ``docs/reference/api.md`` lists them) plus what only SQLite has
(``index_sizes``, ``optimize``, the vector index of ``embedder=``). Opening Hermes' own
``state.db`` raises `HermesDatabaseError` (a ``sqlite3.DatabaseError``).

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
write transaction (`_connection`, composed), recording (`_writes`), imports (`_imports`),
plain reads (`_browse`), titles and lineage (`_titles`), upkeep (`_maintenance`), the
protocol's search reads (`_reads`), undo (`_rewind`) and vectors
(`hermes_memory_sessions.vectors`). Why parts mixed in rather than objects held: the API is
one object shared with the PostgreSQL backend, and holding parts would need every signature
written twice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_memory_sessions.storage._browse import ArchiveBrowse
from hermes_memory_sessions.storage._connection import ArchiveConnection
from hermes_memory_sessions.storage._imports import ArchiveImports
from hermes_memory_sessions.storage._maintenance import ArchiveMaintenance
from hermes_memory_sessions.storage._reads import SqliteArchiveReads
from hermes_memory_sessions.storage._rewind import ArchiveRewind
from hermes_memory_sessions.storage._titles import ArchiveTitles
from hermes_memory_sessions.storage._writes import ArchiveWrites
from hermes_memory_sessions.vectors._archive import ArchiveVectors

__all__ = ["SessionStore"]


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
    """The session archive over one SQLite file (see the module docstring).

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
    :param fast_embedder: a second, fast embedder (``StaticEmbedder``): it embeds the whole
        archive at once while ``embedder`` (the quality model) catches up newest first;
        each message is searched with the best vector it has (see
        `hermes_memory_sessions.vectors._tiers`). Alone (no ``embedder``) it is the only
        model.
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
        fast_embedder: Any = None,
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
        if embedder is None:
            embedder, fast_embedder = fast_embedder, None
        if embedder is not None:
            try:
                self._attach_embedder(embedder, background=embed_in_background, fast=fast_embedder)
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
