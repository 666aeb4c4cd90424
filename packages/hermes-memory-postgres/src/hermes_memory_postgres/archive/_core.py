"""`ArchiveCore`: one owner's connection to the database, bounded retries and the spool.

Every other part of the archive builds on it: reads and writes go through `_read` and
`_write` (bounded retry within a time budget, then `ArchiveUnavailable`), and the agent's
turn writes through `_durable`, which applies a write exactly once: now, or later from the
local spool when the server is unreachable.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import psycopg

from hermes_memory_postgres._connection import ArchiveUnavailable, Database, check_owner
from hermes_memory_postgres._spool import Spool

__all__ = ["ArchiveCore"]

T = TypeVar("T")


class ArchiveCore:
    """The plumbing of `PostgresSessionArchive` (see there for the arguments)."""

    def __init__(
        self,
        dsn: str | None = None,
        *,
        owner: str,
        database: Database | None = None,
        spool_dir: str | Path | None = None,
        write_budget_s: float = 5.0,
        read_budget_s: float = 5.0,
        scrub_secrets: bool = True,
    ) -> None:
        self.owner = check_owner(owner)
        #: Whether the turn writes (``append_message(s)``, titles) mask credentials.
        self.scrub_secrets = scrub_secrets
        self.db = database if database is not None else Database(dsn or "")
        self._owns_db = database is None
        self._write_budget = write_budget_s
        self._read_budget = read_budget_s
        #: Sessions this process created, answered from memory while the server is away.
        self._known: dict[str, dict[str, Any]] = {}
        self._lock = threading.RLock()
        self._closed = False
        self.spool = Spool(Path(spool_dir), f"sessions-{self.owner}") if spool_dir else None
        self.path = None  # no local file: the ``profile`` argument never maps to this archive

    def _read(self, fn: Callable[[psycopg.Connection[Any]], T]) -> T:
        if self._closed:
            raise RuntimeError("PostgresSessionArchive is closed")
        return self.db.run(fn, budget=self._read_budget, pinned_ok=True)

    def pinned_reads(self) -> contextlib.AbstractContextManager[None]:
        """A block whose reads on this thread share one pooled connection (one checkout,
        no transaction per read; `Database.pinned`). ``session_search`` runs in one, so a
        discovery checks one connection out instead of one per read. Within the block a
        session row or a hit's text read once is answered again from memory (`_memo`);
        a write through this archive forgets them. Meant for one short operation."""
        if self._closed:
            raise RuntimeError("PostgresSessionArchive is closed")
        return self.db.pinned(self._read_budget)

    def _write(self, fn: Callable[[psycopg.Connection[Any]], T]) -> T:
        if self._closed:
            raise RuntimeError("PostgresSessionArchive is closed")
        memo = self.db.pinned_memo()
        if memo:
            memo.clear()  # what a pinned block read may be what this write changes
        return self.db.run(fn, budget=self._write_budget)

    def _memo(self) -> dict[tuple[Any, ...], Any] | None:
        """Rows read in this thread's `pinned_reads` block, keyed ``(owner, kind, key)``
        (None outside a block)."""
        return self.db.pinned_memo()

    def close(self) -> None:
        """Release the pool (when this archive opened it); safe to call twice."""
        if self._closed:
            return
        self._closed = True
        if self._owns_db:
            self.db.close()

    # ------------------------------------------------------------------ spool

    def _applied(self, conn: psycopg.Connection[Any], op_key: str | None) -> bool:
        """Record ``op_key`` as applied in this transaction; True if it already was."""
        if op_key is None:
            return False
        cur = conn.execute(
            "INSERT INTO hm_applied_ops(owner, op_key, applied_at) VALUES (%s, %s, %s)"
            " ON CONFLICT DO NOTHING",
            (self.owner, op_key, time.time()),
        )
        return cur.rowcount == 0

    def _apply_op(self, conn: psycopg.Connection[Any], kind: str, payload: dict[str, Any]) -> Any:
        """Run one turn write (``create``/``append``/``end``) in ``conn``'s transaction."""
        raise NotImplementedError  # pragma: no cover - TurnWrites provides it

    def _apply(
        self, conn: psycopg.Connection[Any], op_key: str, kind: str, payload: dict[str, Any]
    ) -> Any:
        if self._applied(conn, op_key):
            return None
        return self._apply_op(conn, kind, payload)

    def _durable(self, kind: str, payload: dict[str, Any]) -> Any:
        """Apply one turn write exactly once: now, or later from the spool.

        Returns the operation's result, or None when it was spooled.
        """
        op_key = uuid.uuid4().hex
        with self._lock:
            if self.spool is not None and self.spool.pending():
                try:
                    self.replay_spool()
                except ArchiveUnavailable:
                    self.spool.append(op_key, kind, payload)
                    return None
            try:
                return self._write(lambda conn: self._apply(conn, op_key, kind, payload))
            except ArchiveUnavailable:
                if self.spool is None:
                    raise
                self.spool.append(op_key, kind, payload)
                return None

    def replay_spool(self) -> int:
        """Apply the spooled writes in order (each exactly once); returns how many.

        Raises `ArchiveUnavailable` when the server is still unreachable (what was not
        applied stays in the spool).
        """
        if self.spool is None:
            return 0
        with self._lock:
            return self.spool.replay(
                lambda key, kind, payload: self._write(
                    lambda conn: self._apply(conn, key, kind, payload)
                )
            )

    def spool_state(self) -> dict[str, Any]:
        """``{"pending": n, "path": ...}`` of the local spool (None path: no spool)."""
        if self.spool is None:
            return {"pending": 0, "path": None}
        return {"pending": self.spool.pending(), "path": str(self.spool.path)}
