"""Move an archive that an earlier hermes-memory release kept *inside* Hermes' ``state.db``
out into our own file, and remove every object of ours from Hermes' database.

Release 0.1 defaulted ``sessions.db_path`` to ``<home>/state.db``: opening the archive
added our full-text tables, views, triggers and an index (28 ``hm_*`` objects plus
``idx_sessions_last_active``) and a ``state_meta`` row to Hermes' own file. This is never
undone silently. `migrate_out` does it on request (``hermes-memory sessions migrate-out``):

1. writes a backup of the whole file, ``state.db.hermes-memory-backup-<UTC timestamp>``
   (SQLite's online backup, so a running Hermes is copied consistently), mode 0600;
2. imports every session and message from that backup into our archive (the ordinary
   incremental import, remembered under the original file's name, so a later
   ``sessions import --from-hermes state.db`` continues from there);
3. in one transaction, drops our triggers, full-text tables (with their shadow tables),
   views, bookkeeping tables and ``idx_sessions_last_active``, and deletes our
   ``state_meta`` row.

Hermes' own tables and rows are not touched: ``sessions``, ``messages``, ``messages_fts*``,
``schema_version`` and the rest read back identical. Two things stay, on purpose: columns
the earlier release added to Hermes' tables (``active``, ``compacted``, ``title_source``,
``last_activity_at``) are part of Hermes' own current schema, which adds them itself; and
indexes with Hermes' own names and definitions (``idx_messages_session_id``, ...).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory_sessions.importers._hermes import (
    ImportReport,
    ProgressCallback,
    import_hermes_db,
)
from hermes_memory_sessions.storage._hermesdb import inspect_database, our_objects
from hermes_memory_sessions.storage._schema import META_SCHEMA_KEY

if TYPE_CHECKING:
    from hermes_memory_sessions.storage._store import SessionStore

__all__ = ["BACKUP_INFIX", "MigrateOutError", "MigrateOutReport", "backup_path", "migrate_out"]

#: Backups are named ``<file>`` + BACKUP_INFIX + ``<YYYYmmddTHHMMSSZ>``.
BACKUP_INFIX = ".hermes-memory-backup-"


class MigrateOutError(ValueError):
    """Nothing to migrate, or the migration could not be done (message says which)."""


@dataclass
class MigrateOutReport:
    """What `migrate_out` did.

    :ivar source: Hermes' database.
    :ivar backup: the backup written before anything changed.
    :ivar archive: our archive the sessions went to.
    :ivar dropped: ``"type name"`` of every object removed from ``source``.
    :ivar imported: the import of the backup into the archive.
    """

    source: str
    backup: str
    archive: str
    dropped: list[str] = field(default_factory=list)
    imported: ImportReport | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "source": self.source,
            "backup": self.backup,
            "archive": self.archive,
            "dropped": list(self.dropped),
            "imported": self.imported.as_dict() if self.imported else None,
        }

    def summary(self) -> str:
        """One line for a terminal."""
        imported = self.imported
        moved = (
            f"{imported.sessions_imported} sessions ({imported.messages_imported:,} messages)"
            if imported
            else "no sessions"
        )
        return (
            f"moved {moved} into {self.archive} and removed {len(self.dropped)} hermes-memory"
            f" objects from {self.source}; backup of the file before: {self.backup}"
        )


def backup_path(source: Path, now: float | None = None) -> Path:
    """A not-yet-existing backup name beside ``source``."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if now is None else now))
    candidate = source.with_name(f"{source.name}{BACKUP_INFIX}{stamp}")
    n = 1
    while candidate.exists():
        n += 1
        candidate = source.with_name(f"{source.name}{BACKUP_INFIX}{stamp}-{n}")
    return candidate


def _backup(conn: sqlite3.Connection, target: Path) -> None:
    fd = os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.close(fd)
    dst = sqlite3.connect(str(target))
    try:
        conn.backup(dst)
        dst.execute("PRAGMA journal_mode = DELETE")  # a standalone file, no sidecars needed
    finally:
        dst.close()


def _drop_order(objects: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """Triggers, then virtual tables (their shadow tables go with them), then the rest."""
    virtual = {
        n for t, n, sql in objects if t == "table" and sql.upper().startswith("CREATE VIRTUAL")
    }
    shadows = {
        n for t, n, _ in objects if t == "table" and any(n.startswith(v + "_") for v in virtual)
    }
    rank = {"trigger": 0, "table": 2, "view": 3, "index": 4}
    out = []
    for t, n, _ in objects:
        if n in shadows:
            continue
        out.append((rank[t] - (1 if n in virtual else 0), t, n))
    return [(t, n) for _, t, n in sorted(out)]


def migrate_out(
    state_db: str | os.PathLike[str],
    store: SessionStore,
    *,
    progress: ProgressCallback | None = None,
    busy_timeout_ms: int = 30_000,
) -> MigrateOutReport:
    """Move the archive an earlier release kept inside ``state_db`` into ``store``.

    See the module docstring for the steps. Raises `MigrateOutError` when ``state_db``
    holds nothing of ours (nothing is written then) and
    `HermesImportError` when it cannot be read; if the import
    fails nothing is dropped (the backup stays). Safe to run again after an interruption.
    """
    path = Path(state_db).expanduser()
    info = inspect_database(path)
    if info.kind != "legacy":
        why = {
            "missing": "no such file",
            "hermes": "it holds nothing of hermes-memory's: nothing to migrate",
            "archive": "it is an archive of ours, not Hermes' database",
        }.get(info.kind, info.detail or info.kind)
        raise MigrateOutError(f"{path}: {why}")
    if store.path.resolve() == path.resolve():
        raise MigrateOutError(f"{path}: the destination archive must be another file")
    source = path.resolve()
    conn = sqlite3.connect(str(source), isolation_level=None, timeout=busy_timeout_ms / 1000)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        target = backup_path(source)
        _backup(conn, target)
        report = MigrateOutReport(str(source), str(target), str(store.path))
        report.imported = import_hermes_db(target, store, progress=progress, source_key=str(source))
        conn.execute("BEGIN IMMEDIATE")
        try:
            names = {n for _t, n in our_objects(conn)}
            rows = conn.execute(
                "SELECT type, name, COALESCE(sql, '') FROM sqlite_master"
            ).fetchall()
            objects = [(str(t), str(n), str(sql)) for t, n, sql in rows if n in names]
            for kind, name in _drop_order(objects):
                quoted = '"' + name.replace('"', '""') + '"'
                conn.execute(f"DROP {kind.upper()} IF EXISTS {quoted}")
            report.dropped = [f"{kind} {name}" for kind, name, _sql in objects]
            with contextlib.suppress(sqlite3.OperationalError):  # no state_meta: nothing to do
                conn.execute("DELETE FROM state_meta WHERE key = ?", (META_SCHEMA_KEY,))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        left = our_objects(conn)
        if left:
            raise MigrateOutError(
                f"{source}: {len(left)} objects could not be removed ({left[0][1]}, ...)"
            )
    finally:
        conn.close()
    return report
