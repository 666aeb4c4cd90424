"""Both hermes-memory tiers on PostgreSQL (see the package README).

``PostgresSessionArchive`` is the session archive and ``PostgresMemoryStore`` the curated
MEMORY.md / USER.md store of one owner in a PostgreSQL database; ``memory_store`` and
``session_archive`` build them from ``config.yaml`` (the ``hermes_memory.memory_backends`` /
``hermes_memory.session_backends`` entry points name them), sharing one ``Database`` pool per
DSN. ``copy_archive`` copies a SQLite archive into PostgreSQL; ``backend_status`` reports the
tiers' state for ``hermes-memory doctor``; a server that cannot be reached raises
``ArchiveUnavailable``, whose messages pass DSNs through ``mask_dsn``.

This module's ``__all__`` is the package's public surface, with the test helpers of
``hermes_memory_postgres.testing``; the ``_``-prefixed modules and the ``archive`` rooms are
its implementation.
"""

from hermes_memory_postgres._connection import ArchiveUnavailable, Database, mask_dsn
from hermes_memory_postgres._factory import memory_store, session_archive
from hermes_memory_postgres._memory import PostgresMemoryStore
from hermes_memory_postgres._migrate import MigrationReport, copy_archive
from hermes_memory_postgres._sessions import PostgresSessionArchive
from hermes_memory_postgres._status import backend_status

__all__ = [
    "ArchiveUnavailable",
    "Database",
    "MigrationReport",
    "PostgresMemoryStore",
    "PostgresSessionArchive",
    "backend_status",
    "copy_archive",
    "mask_dsn",
    "memory_store",
    "session_archive",
]
