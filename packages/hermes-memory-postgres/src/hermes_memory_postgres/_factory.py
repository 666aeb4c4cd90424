"""Build the PostgreSQL tiers from a parsed ``config.yaml`` (used by the providers and CLI).

``postgres.dsn`` (else ``HERMES_MEMORY_PG_DSN``) and ``postgres.owner`` are read here; one
connection pool per DSN is shared by every tier of the process.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_memory_postgres._connection import DSN_ENV, Database, check_owner
from hermes_memory_postgres._memory import PostgresMemoryStore
from hermes_memory_postgres._sessions import PostgresSessionArchive

__all__ = ["memory_store", "postgres_settings", "session_archive", "shared_database"]

_POOLS: dict[str, Database] = {}
_POOLS_LOCK = threading.Lock()


def postgres_settings(config: Mapping[str, Any] | None) -> tuple[str, str]:
    """``(dsn, owner)`` from the ``postgres:`` section of a raw config mapping.

    Raises ValueError naming the missing key (the DSN is never part of a message).
    """
    section = (config or {}).get("postgres") or {}
    if not isinstance(section, Mapping):
        raise ValueError("postgres must be a mapping in config.yaml")
    dsn = section.get("dsn") or os.environ.get(DSN_ENV, "").strip()
    if not isinstance(dsn, str) or not dsn.strip():
        raise ValueError(f"a backend is 'postgres' but no DSN is set (postgres.dsn or {DSN_ENV})")
    owner = section.get("owner")
    if owner is None:
        raise ValueError("a backend is 'postgres' but postgres.owner (the tenant key) is not set")
    return dsn.strip(), check_owner(owner)


def shared_database(dsn: str) -> Database:
    """The process-wide pool for ``dsn`` (created on first use)."""
    with _POOLS_LOCK:
        db = _POOLS.get(dsn)
        if db is None:
            db = _POOLS[dsn] = Database(dsn)
        return db


def session_archive(
    config: Mapping[str, Any] | None, home: Path | None, **kwargs: Any
) -> PostgresSessionArchive:
    """The session archive of this home's owner; turns are spooled under
    ``<home>/hermes-memory/pg-spool`` while the server is unreachable (``kwargs``:
    `PostgresSessionArchive` options, e.g. ``scrub_secrets``)."""
    dsn, owner = postgres_settings(config)
    home = home or Path(os.environ.get("HERMES_HOME") or "~/.hermes").expanduser()
    return PostgresSessionArchive(
        owner=owner,
        database=shared_database(dsn),
        spool_dir=home / "hermes-memory" / "pg-spool",
        **kwargs,
    )


def memory_store(config: Mapping[str, Any] | None, **kwargs: Any) -> PostgresMemoryStore:
    """The curated store of this home's owner (``kwargs``: `MemoryStore` options)."""
    dsn, owner = postgres_settings(config)
    return PostgresMemoryStore(owner=owner, database=shared_database(dsn), **kwargs)
