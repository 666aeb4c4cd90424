"""`ArchiveConnection`: the SQLite connection of one session archive and its lifecycle.

Opening (read-only detection, schema migration), the thread lock, and the write
transaction: ``BEGIN IMMEDIATE`` with bounded, jittered retry on a locked database, the
CJK-index work queued by the triggers applied inside the same transaction, incremental
full-text index merges every `MERGE_EVERY` messages and periodic WAL checkpoints.
`SessionStore` composes one; every other part of the store reads and writes through it.
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from hermes_memory_sessions.search._cjk import cjk_index_text
from hermes_memory_sessions.storage import _hermesdb as hermesdb
from hermes_memory_sessions.storage import _schema as schema

__all__ = [
    "FTS_TABLES",
    "MERGE_EVERY",
    "MERGE_PAGES",
    "ArchiveConnection",
    "ArchiveReadOnly",
    "SqliteArchiveBase",
    "cjk_document",
]

#: The archive's FTS5 tables.
FTS_TABLES = ("hm_fts_words", "hm_fts_stems", "hm_fts_tools", "hm_fts_cjk")
#: Messages written between two incremental index merges, and the pages merged each time.
MERGE_EVERY = 1000
MERGE_PAGES = 500

T = TypeVar("T")


class ArchiveReadOnly(sqlite3.OperationalError):
    """A write was asked of an archive opened read-only (its file or directory is not
    writable); reads keep working."""


def cjk_document(role: Any, content: Any, tool_calls: Any) -> str | None:
    """The CJK-index document of one message (None when it contains no CJK): the indexed
    prefix of its text (`TOOL_INDEX_PREFIX` of tool output, `MESSAGE_INDEX_PREFIX` of any
    other content and of tool calls), as the word indexes."""
    text = content if isinstance(content, str) else ""
    limit = schema.TOOL_INDEX_PREFIX if role == "tool" else schema.MESSAGE_INDEX_PREFIX
    text = text[:limit]
    if isinstance(tool_calls, str) and tool_calls:
        text = f"{text}\n{tool_calls[: schema.MESSAGE_INDEX_PREFIX]}"
    return cjk_index_text(text)


class ArchiveConnection:
    """One open archive file: see the module docstring; arguments as `SessionStore`'s.

    :raises hermesdb.HermesDatabaseError: ``path`` is Hermes Agent's own ``state.db``.
    :raises sqlite3.OperationalError: a read-only archive too old to read, or not readable.
    """

    def __init__(
        self,
        path: Path,
        *,
        busy_timeout_ms: int,
        write_budget_s: float,
        read_budget_s: float,
        journal_mode: str,
        read_only: bool | None,
    ) -> None:
        self.path = path
        self._budget = write_budget_s
        self._read_budget = read_budget_s
        self._lock = threading.RLock()
        self._writes = 0
        self._unmerged = 0  # messages written since the last incremental index merge
        hermesdb.check_not_hermes(self.path)
        if read_only is None:
            read_only = self.path.exists() and not (
                os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK)
            )
        self.read_only = bool(read_only)
        if self.read_only:
            conn = schema.connect_readonly(self.path, busy_timeout_ms=busy_timeout_ms)
            self.journal_mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
        else:
            conn, self.journal_mode = schema.connect(
                self.path, busy_timeout_ms=busy_timeout_ms, journal_mode=journal_mode
            )
        conn.row_factory = sqlite3.Row
        if isinstance(conn, schema.RetryingConnection):
            conn.read_budget_s = read_budget_s
        self._conn: sqlite3.Connection | None = conn
        try:
            if self.read_only:
                version = schema.current_version(conn)
                if version < schema.READABLE_VERSION:
                    raise sqlite3.OperationalError(
                        f"{self.path} is read-only and is not a hermes-memory archive this "
                        "version can read (it would need to be initialised or upgraded)"
                    )
            else:
                with self.write() as conn:
                    schema.migrate(conn)
        except BaseException:
            self.close_now()
            raise

    @property
    def conn(self) -> sqlite3.Connection:
        """The underlying connection; ``sqlite3.ProgrammingError`` once closed."""
        if self._conn is None:
            raise sqlite3.ProgrammingError("SessionStore is closed")
        return self._conn

    @property
    def closed(self) -> bool:
        """Whether `close` has run (or opening failed)."""
        return self._conn is None

    @contextlib.contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """Serialise a read against other threads using this connection.

        :raises schema.ArchiveBusy: another thread's write held it past the read budget.
        """
        if not self._lock.acquire(timeout=self._read_budget):
            raise schema.ArchiveBusy(
                f"the session archive is busy with a write (gave up after {self._read_budget:g} s)"
            )
        try:
            yield self.conn
        finally:
            self._lock.release()

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` with bounded, jittered retry on a locked database."""
        with self._lock:
            conn = self.conn
            if self.read_only:
                raise ArchiveReadOnly(
                    f"the session archive {self.path} is open read-only (its file or directory"
                    " is not writable): nothing can be recorded or changed"
                )
            deadline = time.monotonic() + self._budget
            start = time.monotonic()
            while True:
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    break
                except sqlite3.OperationalError as exc:
                    if not _is_locked(exc) or time.monotonic() >= deadline:
                        raise
                    elapsed = time.monotonic() - start
                    time.sleep(_jitter(0.02, 0.15) if elapsed < 2 else _jitter(0.25, 1.0))
            try:
                yield conn
                _drain_cjk(conn)
                _commit(conn, deadline)
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            self._writes += 1
            if self._unmerged >= MERGE_EVERY:
                self._unmerged = 0
                _merge_step(conn)
            if self._writes % 50 == 0 and self.journal_mode == "wal":
                with contextlib.suppress(sqlite3.OperationalError):
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def messages_written(self, count: int) -> None:
        """Count messages written by the current transaction toward the next index merge."""
        self._unmerged += count

    def optimize(self) -> None:
        """Merge every full-text index into a single segment (see `SessionStore.optimize`)."""
        for table in FTS_TABLES:
            with self.write() as conn:
                conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")  # noqa: S608

    def close(self) -> None:
        """Checkpoint (passive) and close; safe to call twice."""
        with self._lock:
            if self._conn is None:
                return
            if self.journal_mode == "wal" and not self.read_only:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            self.close_now()
            if not self.read_only:
                schema.tighten_permissions(self.path)

    def close_now(self) -> None:
        """Close without a checkpoint (an archive that failed to open)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _merge_step(conn: sqlite3.Connection) -> None:
    """A bounded incremental merge of every full-text index (best effort).

    Many small segments make each FTS5 lookup touch many b-trees (a snippet lookup is
    ~20x slower on an unmerged index of a million rows), so every `MERGE_EVERY` written
    messages each index gets `MERGE_PAGES` pages of merge work, in its own short write.
    """
    for table in FTS_TABLES:
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(
                f"INSERT INTO {table}({table}, rank) VALUES ('merge', ?)",  # noqa: S608
                (MERGE_PAGES,),
            )
            conn.execute("COMMIT")
        except sqlite3.OperationalError:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            return


def _commit(conn: sqlite3.Connection, deadline: float) -> None:
    while True:
        try:
            conn.execute("COMMIT")
            return
        except sqlite3.OperationalError as exc:
            if not _is_locked(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(_jitter(0.02, 0.15))


def _drain_cjk(conn: sqlite3.Connection) -> None:
    """Apply queued CJK-index work (written by the triggers) inside this transaction."""
    rows = conn.execute(
        "SELECT seq, op, id, role, content, tool_calls FROM hm_cjk_pending ORDER BY seq"
    ).fetchall()
    if not rows:
        return
    for row in rows:
        mid = row["id"]
        indexed = conn.execute("SELECT 1 FROM hm_cjk_docs WHERE id = ?", (mid,)).fetchone()
        if row["op"] == "d":
            if indexed:
                doc = cjk_document(row["role"], row["content"], row["tool_calls"])
                if doc is not None:
                    conn.execute(
                        "INSERT INTO hm_fts_cjk(hm_fts_cjk, rowid, grams) VALUES ('delete', ?, ?)",
                        (mid, doc),
                    )
                conn.execute("DELETE FROM hm_cjk_docs WHERE id = ?", (mid,))
            continue
        if indexed:
            continue
        msg = conn.execute(
            "SELECT role, content, tool_calls FROM messages WHERE id = ?", (mid,)
        ).fetchone()
        if msg is None:
            continue
        doc = cjk_document(msg["role"], msg["content"], msg["tool_calls"])
        if doc is None:
            continue
        conn.execute("INSERT INTO hm_fts_cjk(rowid, grams) VALUES (?, ?)", (mid, doc))
        conn.execute("INSERT INTO hm_cjk_docs(id) VALUES (?)", (mid,))
    conn.execute("DELETE FROM hm_cjk_pending WHERE seq <= ?", (rows[-1]["seq"],))


def _jitter(low: float, high: float) -> float:
    """Backoff delay; not security sensitive."""
    return random.uniform(low, high)  # noqa: S311


def _is_locked(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class SqliteArchiveBase:
    """What every part of `SessionStore` builds on: its `ArchiveConnection` and the read and
    write entry points over it (the parts are mixed into `SessionStore`, one level deep)."""

    path: Path
    _db: ArchiveConnection

    @property
    def conn(self) -> sqlite3.Connection:
        """The underlying connection (for the read queries of the search package)."""
        return self._db.conn

    @property
    def closed(self) -> bool:
        """Whether the store has been closed."""
        return self._db.closed

    def read(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """Serialise a read against other threads using this store.

        :raises schema.ArchiveBusy: another thread's write held the store past the read budget.
        """
        return self._db.read()

    def read_with(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run ``fn(connection, *args, **kwargs)`` for a read, serialised against threads."""
        with self._db.read() as conn:
            return fn(conn, *args, **kwargs)

    def _write(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` with bounded, jittered retry on a locked database."""
        return self._db.write()
