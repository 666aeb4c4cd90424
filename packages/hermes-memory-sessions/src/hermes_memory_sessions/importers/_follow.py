"""One history: notice, or follow, the Hermes ``state.db`` that sits in the same home.

A user switching from Hermes Agent has their history in ``<home>/state.db`` while our
archive starts empty. Two things keep that from going unnoticed:

* `pending_hermes_import(home, store)` looks (read-only, time-bounded) at ``state.db`` and
  tells how many of its sessions the archive lacks and whether sessions imported earlier
  have new messages. Read commands and ``doctor`` turn that into one line with the command.
* `follow_hermes(home, store)` runs the incremental import (the importer's watermarks: only
  what is new is read) under a total time budget, serialised between processes by a lock
  file, so that ``sessions.follow_hermes: true`` keeps the archive in step. It is what the
  sessions provider runs in the background when it starts, and the CLI before a read.

Hermes' file is only ever opened read-only (``mode=ro`` / ``immutable=1``, no sidecar files,
see `hermes_memory_sessions.storage._hermesdb`); nothing here writes to it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_memory_core.kit import make_private_dirs
from hermes_memory_sessions.storage._hermesdb import inspect_database, open_readonly

if TYPE_CHECKING:
    from hermes_memory_sessions.importers._hermes import ImportReport
    from hermes_memory_sessions.protocol import SessionArchive

__all__ = [
    "CHECK_BUDGET_S",
    "CLI_FOLLOW_BUDGET_S",
    "PROVIDER_FOLLOW_BUDGET_S",
    "PendingImport",
    "follow_hermes",
    "hermes_state_path",
    "pending_hermes_import",
]

logger = logging.getLogger(__name__)

#: Longest `pending_hermes_import` spends comparing the two files.
CHECK_BUDGET_S = 1.0
#: Import budget before a CLI read (the rest follows on the next run).
CLI_FOLLOW_BUDGET_S = 5.0
#: Import budget of the provider's background run at start-up.
PROVIDER_FOLLOW_BUDGET_S = 60.0
_LOCK_NAME = ".follow-hermes.lock"


def hermes_state_path(home: str | os.PathLike[str]) -> Path:
    """Hermes Agent's database in ``home``: ``<home>/state.db``."""
    return Path(home).expanduser() / "state.db"


@dataclass(frozen=True)
class PendingImport:
    """What `pending_hermes_import` found.

    :ivar state_db: Hermes' database.
    :ivar sessions_total: sessions in it.
    :ivar missing: of those, sessions the archive does not have (a lower bound when
        ``complete`` is false).
    :ivar updated: sessions imported earlier that have new messages in ``state.db``.
    :ivar complete: the comparison finished within its time budget.
    """

    state_db: Path
    sessions_total: int
    missing: int
    updated: int
    complete: bool = True

    @property
    def behind(self) -> bool:
        """True when an import would bring something in."""
        return self.missing > 0 or self.updated > 0


def _source_key(path: Path) -> str:
    # the key `import_hermes_db` remembers a file under (its resolved path)
    return str(path.resolve())


def pending_hermes_import(
    home: str | os.PathLike[str],
    store: SessionArchive | None,
    *,
    budget_s: float = CHECK_BUDGET_S,
) -> PendingImport | None:
    """Compare ``<home>/state.db`` with the archive (``None``: no archive yet).

    Returns None when there is no Hermes database there (or it cannot be read without
    writing, e.g. a crash left a ``-wal`` without ``-shm``). Reads ``state.db`` read-only.
    """
    state = hermes_state_path(home)
    if inspect_database(state).kind != "hermes":
        return None
    deadline = time.monotonic() + budget_s
    try:
        conn, _mode, _budget = open_readonly(state, budget_s=budget_s)
    except sqlite3.Error:
        return None
    try:
        ids = [
            str(r[0])
            for r in conn.execute("SELECT id FROM sessions ORDER BY started_at DESC, id DESC")
            if isinstance(r[0], str)
        ]
        high_row = conn.execute("SELECT max(id) FROM messages").fetchone()
        high = high_row[0] if high_row and isinstance(high_row[0], int) else 0
        watermark, owned = (0, {}) if store is None else store.import_state(_source_key(state))
        updated = 0
        if owned and high > watermark:
            updated = sum(
                1
                for sid, newest in conn.execute(
                    "SELECT session_id, max(id) FROM messages WHERE id > ? GROUP BY session_id",
                    (min(watermark, *owned.values()),),
                )
                if sid in owned and isinstance(newest, int) and newest > owned[sid]
            )
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    missing = 0
    complete = True
    for sid in ids:
        if store is None:
            missing = len(ids)
            break
        if time.monotonic() > deadline:
            complete = False
            break
        if sid in owned:
            continue
        if store.get_session(sid) is None:
            missing += 1
    return PendingImport(state, len(ids), missing, updated, complete)


@contextlib.contextmanager
def _exclusive(lock_dir: Path) -> Iterator[bool]:
    """A non-blocking inter-process lock: yields False when another process holds it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: the importer's checks still hold
        yield True
        return
    try:
        make_private_dirs(lock_dir)  # parents too: mkdir(parents=True) leaves them 0755
        fd = os.open(lock_dir / _LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def follow_hermes(
    home: str | os.PathLike[str],
    store: SessionArchive,
    *,
    time_budget_s: float = CLI_FOLLOW_BUDGET_S,
    lock_dir: str | os.PathLike[str] | None = None,
) -> ImportReport | None:
    """Import what is new in ``<home>/state.db`` into ``store``, within ``time_budget_s``.

    Returns the import report, or None when there is no Hermes database in the home,
    nothing is new in it (the quick `pending_hermes_import` comparison: no import runs), or
    another process is following it right now (its run covers this one). Import errors
    are logged, never raised: following is best effort and must not stop a command or a
    turn. ``lock_dir`` is where the lock file lives (default: the home's
    ``hermes-memory`` folder).

    A session that Hermes ended without adding a message is brought up to date by the next
    run that has something to copy (or by ``sessions import --from-hermes``).
    """
    from hermes_memory_sessions.importers._hermes import HermesImportError, import_hermes_db

    state = hermes_state_path(home)
    if inspect_database(state).kind != "hermes":
        return None
    pending = pending_hermes_import(home, store)
    if pending is not None and pending.complete and not pending.behind:
        return None  # nothing new: skip the import's per-session pass
    where = Path(lock_dir) if lock_dir is not None else Path(home).expanduser() / "hermes-memory"
    with _exclusive(where) as mine:
        if not mine:
            return None
        try:
            return import_hermes_db(state, store, time_budget_s=time_budget_s)
        except (HermesImportError, ValueError, sqlite3.Error, OSError) as exc:
            logger.warning("following %s failed: %s", state, exc)
            return None
