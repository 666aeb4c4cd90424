"""The connection pool, bounded retries and DSN handling shared by both tiers."""

from __future__ import annotations

import contextlib
import logging
import random
import re
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import TransactionStatus
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
        #: This thread's pinned connection (`pinned`), read by `run` with ``pinned_ok``.
        self._local = threading.local()
        #: Connections taken from the pool so far by `run` and `pinned` (each costs a
        #: liveness round trip).
        self.checkouts = 0
        self._checkout_lock = threading.Lock()
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

    @contextlib.contextmanager
    def pinned(self, budget: float = 5.0) -> Iterator[None]:
        """Within this block, this thread's reads (`run` with ``pinned_ok``) share one
        pooled connection in autocommit: one checkout (one liveness round trip) and no
        ``BEGIN``/``COMMIT`` per read. A discovery makes about seventeen reads; each would
        otherwise check a connection out and run its own transaction. Under PostgreSQL's
        default READ COMMITTED isolation every statement takes a fresh snapshot inside a
        transaction too, so reads see what they saw before. Nested blocks reuse the
        outer connection. When no connection can be had, or the pinned one fails, the
        reads fall back to their own checkouts (with their retries)."""
        if getattr(self._local, "conn", None) is not None or getattr(self._local, "busy", False):
            yield
            return
        self._local.busy = True
        self._local.memo = {}
        conn: psycopg.Connection[Any] | None = None
        try:
            try:
                self._ensure_schema(self._connect_timeout + 1.0)
                conn = self._pool.getconn(timeout=max(0.1, min(budget, self._connect_timeout)))
                self._count_checkout()
                conn.autocommit = True
                dconn: Any = conn
                dconn.row_factory = dict_row
                self._local.conn = conn
            except Exception as exc:
                if not _transient(exc):
                    raise
                if conn is not None:
                    self._pool.putconn(conn)
                    conn = None
            yield
        finally:
            held = getattr(self._local, "conn", None)  # None when it broke and was unpinned
            self._local.conn = None
            self._local.busy = False
            self._local.memo = None
            if held is not None:
                self._release(held)

    def pinned_memo(self) -> dict[tuple[Any, ...], Any] | None:
        """A dict that lives as long as this thread's `pinned` block (None outside one):
        where the archive keeps rows it read in the block to answer them again without a
        round trip (a session's row, a hit's text). Cleared by every write in the block."""
        memo: dict[tuple[Any, ...], Any] | None = getattr(self._local, "memo", None)
        return memo

    def _count_checkout(self) -> None:
        with self._checkout_lock:
            self.checkouts += 1

    def _release(self, conn: psycopg.Connection[Any]) -> None:
        """Hand a pinned connection back to the pool as it was taken (not autocommit)."""
        with contextlib.suppress(Exception):  # a broken one: the pool discards it
            conn.autocommit = False
        self._pool.putconn(conn)

    def _pinned_run(self, fn: Callable[[psycopg.Connection[Any]], T]) -> tuple[bool, T | None]:
        """``(True, fn(conn))`` on this thread's pinned connection; ``(False, None)`` when
        there is none or it broke (then it is unpinned: later reads check out their own)."""
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if conn is None:
            return False, None
        try:
            return True, fn(conn)
        except Exception as exc:
            if not _transient(exc):
                if conn.info.transaction_status == TransactionStatus.IDLE:
                    raise
                self._unpin(conn)  # left inside a transaction: not reused
                raise
            self._unpin(conn)
            logger.debug("postgres: pinned connection failed (%s)", _one_line(exc))
            return False, None

    def _unpin(self, conn: psycopg.Connection[Any]) -> None:
        self._local.conn = None
        self._release(conn)

    def run(
        self,
        fn: Callable[[psycopg.Connection[Any]], T],
        *,
        budget: float = 10.0,
        pinned_ok: bool = False,
    ) -> T:
        """``fn(conn)`` in one transaction (rows as dicts), retried on a lost connection,
        a restarting server, a deadlock or a serialization failure until ``budget`` seconds
        have passed; then `ArchiveUnavailable`. Other errors propagate at once.

        ``fn`` must be safe to run again after a failed attempt (its transaction was rolled
        back; a write keyed by an operation key is applied at most once). With
        ``pinned_ok`` (reads only) and a `pinned` connection on this thread, ``fn`` runs
        there, in autocommit.
        """
        if pinned_ok:
            done, value = self._pinned_run(fn)
            if done:
                return value  # type: ignore[return-value]
        deadline = time.monotonic() + max(0.0, budget)
        attempt = 0
        while True:
            attempt += 1
            wait = max(0.1, min(self._connect_timeout + 1.0, deadline - time.monotonic()))
            try:
                self._ensure_schema(wait)
                with self._pool.connection(timeout=wait) as conn:
                    self._count_checkout()
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
