"""`PostgresSessionArchive`: the session archive on PostgreSQL, one owner's rows.

It implements `hermes_memory_sessions.protocol.SessionArchive`, so ``session_search``, the
sessions provider, the CLI and the MCP server work on it unchanged. Differences from the
SQLite `SessionStore` that a caller can see:

* every row belongs to ``owner``; no method reads or writes another owner's rows;
* message ids come from one sequence of the database (they grow with insertion, unique per
  owner); ``import_session(keep_ids=True)`` keeps given ids (a round trip is exact);
* search runs on two ``tsvector`` columns made in Python (`hermes_memory_postgres._text`):
  words (case-folded, diacritics removed) and CJK one- and two-character tokens; the query
  sanitiser, implicit AND, natural-language fallback and snippets are the SQLite archive's;
* writes of the agent's turns (``create_session``, ``append_messages``, ``end_session``)
  survive an unreachable server: after a bounded retry they go to a local spool file
  (`hermes_memory_postgres._spool.Spool`) that is replayed in order, exactly once, when the
  server answers again.

Like `SessionStore`, the recording API masks credentials in message text and titles by
default (``scrub_secrets``); imports keep text as given.

The class is assembled from parts with one job each (`hermes_memory_postgres.archive`):
turn writes and titles, imports, reads and discovery, and hybrid recall (`attach_embedder`:
vectors stored in PostgreSQL, searched like the SQLite archive's, fused by the same code).
"""

from __future__ import annotations

from hermes_memory_postgres.archive._hybrid import ArchiveHybrid
from hermes_memory_postgres.archive._ingest import BulkIngest
from hermes_memory_postgres.archive._reads import ArchiveReads
from hermes_memory_postgres.archive._rewind import ArchiveRewind
from hermes_memory_postgres.archive._search import ArchiveSearch

__all__ = ["PostgresSessionArchive"]


class PostgresSessionArchive(ArchiveHybrid, BulkIngest, ArchiveReads, ArchiveSearch, ArchiveRewind):
    """The session archive of one owner in a PostgreSQL database.

    :param dsn: libpq connection string or URL (or pass ``database``).
    :param owner: the tenant key; every row read or written belongs to it.
    :param database: a shared `Database` (pool) instead of ``dsn``.
    :param spool_dir: folder of the local spool that keeps turns while the server is
        unreachable (None: writes raise `ArchiveUnavailable` instead).
    :param write_budget_s: how long a write retries before it is spooled (or raises).
    :param read_budget_s: how long a read retries before it raises `ArchiveUnavailable`.
    :param scrub_secrets: mask credentials (`hermes_memory_core.scrub_secrets`) in what the
        turn writes store: each message's free text in ``append_message`` /
        ``append_messages`` (``content``, ``tool_calls``, ``reasoning``,
        ``reasoning_content``, ``api_content``; never role, ids, timestamps or
        ``tool_name``; masked before a write is spooled) and the title of
        ``create_session`` / ``set_title``. Default on; ``False`` stores text as given (the
        ``sessions`` provider, whose `MemoryManager` masked it already). Imports
        (``import_session``, ``import_more``, ``bulk_import*``) never mask. The setting is
        `scrub_secrets` on the instance.
    """

    def __repr__(self) -> str:
        return f"PostgresSessionArchive(owner={self.owner!r}, {self.db.masked_dsn})"

    def __enter__(self) -> PostgresSessionArchive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
