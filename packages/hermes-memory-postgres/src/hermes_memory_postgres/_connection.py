"""The connection pool, bounded retries and DSN handling shared by both tiers."""

from __future__ import annotations

import logging
import random
import re
import threading
import time
import unicodedata
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from hermes_memory_postgres import _schema as schema
from hermes_memory_sessions.protocol import ArchiveUnreachable

__all__ = [
    "DSN_ENV",
    "ArchiveUnavailable",
    "Database",
    "check_owner",
    "mask_dsn",
]

logger = logging.getLogger(__name__)
T = TypeVar("T")

#: Environment variable read when ``postgres.dsn`` is not set in ``config.yaml``.
DSN_ENV = "HERMES_MEMORY_PG_DSN"
#: Longest owner key accepted.
OWNER_MAX_CHARS = 200


class ArchiveUnavailable(ArchiveUnreachable):
    """The database could not be reached within the operation's time budget (a
    `hermes_memory_sessions.protocol.ArchiveUnreachable`, so callers of either backend can
    tell an unreachable server from a real error)."""


def mask_dsn(dsn: str) -> str:
    """``dsn`` with its password replaced by ``***`` (URL or ``key=value`` form)."""
    if "://" in dsn:
        try:
            parts = urlsplit(dsn)
        except ValueError:
            return "<unparseable DSN>"
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, host = netloc.rpartition("@")
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}:***@{host}" if ":" in userinfo else f"{user}@{host}"
        query = re.sub(r"(?i)(password=)[^&]*", r"\1***", parts.query)
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    try:
        conninfo_to_dict(dsn)
    except psycopg.Error:
        return "<unparseable DSN>"  # libpq could not split it: any piece may be the password
    return re.sub(r"(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", r"\1***", dsn)


def check_owner(owner: Any) -> str:
    """Validate an owner key: printable text, at most `OWNER_MAX_CHARS` characters."""
    if not isinstance(owner, str) or not owner.strip():
        raise ValueError("postgres.owner must be a non-empty string (the tenant key)")
    if len(owner) > OWNER_MAX_CHARS:
        raise ValueError(f"postgres.owner is longer than {OWNER_MAX_CHARS} characters")
    bad = next((c for c in owner if unicodedata.category(c) in ("Cc", "Cf", "Cs")), None)
    if bad is not None:
        raise ValueError(
            f"postgres.owner contains the invisible or control character U+{ord(bad):04X}"
        )
    return owner


def _transient(exc: BaseException) -> bool:
    """A failure worth retrying: the connection or the server went away, or a deadlock."""
    if isinstance(exc, PoolTimeout | psycopg.OperationalError | psycopg.InterfaceError):
        return True
    return isinstance(exc, psycopg.errors.DeadlockDetected | psycopg.errors.SerializationFailure)


def _options(dsn: str, extra: str) -> str:
    """The DSN's own ``options`` (a search_path, say) followed by ``extra``: libpq takes one
    ``options`` value, and a keyword argument would replace the DSN's."""
    try:
        given = conninfo_to_dict(dsn).get("options")
    except psycopg.Error:
        given = None
    return f"{given} {extra}" if given else extra


class Database:
    """A small connection pool to one PostgreSQL database, with bounded retries.

    :param dsn: a libpq connection string or URL (never logged with its password).
    :param min_size: pool bounds, with ``max_size`` (connections are opened on demand).
    :param max_size: see ``min_size``.
    :param connect_timeout: seconds to wait for one connection attempt.
    :param statement_timeout_ms: server-side bound on one statement.
    :param migrate: apply the schema migrations on first use.
    """

    def __init__(
        self,
        dsn: str,
        *,
        min_size: int = 0,
        max_size: int = 4,
        connect_timeout: float = 3.0,
        statement_timeout_ms: int = 30_000,
        migrate: bool = True,
    ) -> None:
        if not isinstance(dsn, str) or not dsn.strip():
            raise ValueError(f"no PostgreSQL DSN: set postgres.dsn in config.yaml or {DSN_ENV}")
        self.dsn = dsn
        self.masked_dsn = mask_dsn(dsn)
        self._connect_timeout = connect_timeout
        self._migrate = migrate
        self._schema_ready = False
        self._schema_lock = threading.Lock()
        self._pool = ConnectionPool(
            dsn,
            min_size=min_size,
            max_size=max_size,
            open=True,
            timeout=connect_timeout + 1.0,
            kwargs={
                "connect_timeout": max(1, int(connect_timeout)),
                "options": _options(dsn, f"-c statement_timeout={int(statement_timeout_ms)}"),
                "application_name": "hermes-memory",
            },
            check=ConnectionPool.check_connection,
            name="hermes-memory",
        )

    def __repr__(self) -> str:
        return f"Database({self.masked_dsn!r})"

    def close(self) -> None:
        """Close every pooled connection."""
        self._pool.close()

    def _ensure_schema(self, timeout: float) -> None:
        if self._schema_ready or not self._migrate:
            return
        with self._schema_lock:
            if not self._ready():
                with self._pool.connection(timeout=timeout) as conn:
                    schema.migrate(conn)
                self._schema_ready = True

    def _ready(self) -> bool:
        return self._schema_ready

    def schema_version(self) -> int:
        """The schema version the database holds (0 when never initialised)."""
        with self._pool.connection(timeout=self._connect_timeout + 1.0) as conn:
            return schema.current_version(conn)

    def vacuum(self, table: str) -> None:
        """``VACUUM (ANALYZE) table``, which PostgreSQL refuses inside a transaction: on a
        pooled connection switched to autocommit for it, without the statement bound (a
        freshly loaded table takes seconds), and handed back as it was taken."""
        if not table.isidentifier():
            raise ValueError(f"not a table name: {table!r}")
        self._ensure_schema(self._connect_timeout + 1.0)
        with self._pool.connection(timeout=self._connect_timeout + 1.0) as conn:
            conn.autocommit = True
            try:
                conn.execute("SET statement_timeout = 0")
                conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(sql.Identifier(table)))
            finally:
                conn.execute("RESET statement_timeout")
                conn.autocommit = False

    def run(self, fn: Callable[[psycopg.Connection[Any]], T], *, budget: float = 10.0) -> T:
        """``fn(conn)`` in one transaction (rows as dicts), retried on a lost connection,
        a restarting server, a deadlock or a serialization failure until ``budget`` seconds
        have passed; then `ArchiveUnavailable`. Other errors propagate at once.

        ``fn`` must be safe to run again after a failed attempt (its transaction was rolled
        back; a write keyed by an operation key is applied at most once).
        """
        deadline = time.monotonic() + max(0.0, budget)
        attempt = 0
        while True:
            attempt += 1
            wait = max(0.1, min(self._connect_timeout + 1.0, deadline - time.monotonic()))
            try:
                self._ensure_schema(wait)
                with self._pool.connection(timeout=wait) as conn:
                    dconn: Any = conn
                    dconn.row_factory = dict_row
                    with conn.transaction():
                        return fn(conn)
            except Exception as exc:
                if not _transient(exc):
                    raise
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ArchiveUnavailable(
                        f"PostgreSQL at {self.masked_dsn} is unreachable ({_one_line(exc)})"
                    ) from exc
                delay = min(left, random.uniform(0.05, 0.2) * min(attempt, 8))  # noqa: S311
                logger.debug("postgres: retrying after %s (attempt %d)", _one_line(exc), attempt)
                time.sleep(delay)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]
