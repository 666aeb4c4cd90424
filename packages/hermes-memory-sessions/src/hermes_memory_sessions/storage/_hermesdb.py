"""Hermes Agent's ``state.db`` is another program's database: recognise it, read it safely.

Our archive lives in a file of its own (``sessions.db_path``, default
``<home>/hermes-memory/sessions.db``). Hermes' ``state.db`` shares table names with it
(``sessions``, ``messages``, ``schema_version``, ``state_meta``), so this module tells the two
apart and never writes to Hermes' file:

* `open_readonly(path)` opens any SQLite file for reading without creating, changing or
  leaving anything next to it (no ``-wal``/``-shm``/``-journal``): ``immutable=1`` when no
  writer is attached (no ``-wal`` file), plain ``mode=ro`` sharing the writer's ``-wal``/``-shm``
  when one is. The connection has a time budget (a progress handler) so a crafted file can
  never hang a reader.
* `inspect_database(path)` classifies a file: our archive, a Hermes ``state.db``, a Hermes
  ``state.db`` that an earlier hermes-memory release filled with its own objects (the
  *legacy* case), something else, or nothing.
* `legacy_archive_notice(home)` is the one-line notice read commands print for the legacy
  case; `hermes_memory_sessions.importers._migrate_out.migrate_out` fixes it.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

__all__ = [
    "HERMES_ONLY_TABLES",
    "OUR_INDEXES",
    "OUR_TABLES",
    "DatabaseInfo",
    "HermesDatabaseError",
    "TimeBudget",
    "inspect_database",
    "legacy_archive_notice",
    "open_readonly",
    "our_objects",
]

#: Tables both programs define; everything else in an archive of ours starts with ``hm_``.
OUR_TABLES = frozenset({"sessions", "messages", "schema_version", "state_meta"})
#: Indexes an earlier release added to Hermes' file that Hermes itself never defines.
#: (Our other indexes have the names and definitions of Hermes' own, so they are left alone.)
OUR_INDEXES = frozenset({"idx_sessions_last_active"})
#: Tables only Hermes creates (any one of them marks a file as Hermes').
HERMES_ONLY_TABLES = frozenset(
    {
        "messages_fts",
        "messages_fts_trigram",
        "system_prompts",
        "session_model_usage",
        "gateway_routing",
    }
)
_META_KEY = "hermes_memory_schema_version"  # = schema.META_SCHEMA_KEY (no import cycle)
_SQLITE_MAGIC = b"SQLite format 3\x00"


class HermesDatabaseError(sqlite3.DatabaseError):
    """The file is Hermes Agent's own ``state.db``: we never open it as our archive.

    A ``sqlite3.DatabaseError`` so that every caller that already reports "cannot open the
    session archive" reports this too; the message says what to do instead.
    """


class TimeBudget:
    """A per-operation time limit enforced by SQLite's progress handler.

    ``arm()`` before an operation; if it runs past ``seconds`` SQLite interrupts it with
    ``sqlite3.OperationalError("interrupted")``. Guards readers of files we did not write
    (a view over an endless recursive CTE, a huge crafted table) from hanging.
    """

    def __init__(self, conn: sqlite3.Connection, seconds: float) -> None:
        self.seconds = seconds
        self._deadline = time.monotonic() + seconds
        conn.set_progress_handler(self._check, 10_000)

    def arm(self, seconds: float | None = None) -> None:
        """Restart the clock (``seconds`` overrides the default once)."""
        self._deadline = time.monotonic() + (self.seconds if seconds is None else seconds)

    def _check(self) -> int:
        return 1 if time.monotonic() > self._deadline else 0


def _uri(path: Path, *, immutable: bool) -> str:
    uri = "file:" + quote(str(path)) + "?mode=ro"
    return uri + "&immutable=1" if immutable else uri


def open_readonly(
    path: Path, *, budget_s: float = 30.0
) -> tuple[sqlite3.Connection, str, TimeBudget]:
    """Open ``path`` read-only without leaving any file beside it.

    Returns ``(connection, mode, budget)``: mode ``"immutable"`` (no ``-wal`` present: nobody
    has the file open for writing, so SQLite is told not to look for sidecars or take locks)
    or ``"ro"`` (a ``-wal`` and ``-shm`` exist: a writer is attached, and we read through its
    sidecars like any WAL reader). A ``-wal`` without ``-shm`` (a crash) or a hot rollback
    journal cannot be read without recovery, which would write: ``sqlite3.OperationalError``
    (the importer copies such files to a private snapshot instead).

    ``immutable=1`` trusts that nobody writes meanwhile; callers that read for long compare
    `file_stamp` before and after (see the importer) and start again in ``"ro"`` mode when a
    writer appeared.
    """
    path = Path(path)
    wal = Path(f"{path}-wal")
    shm = Path(f"{path}-shm")
    journal = Path(f"{path}-journal")
    if wal.exists():
        if not shm.exists():
            raise sqlite3.OperationalError(f"{path}: a -wal file without -shm needs recovery")
        mode = "ro"
    else:
        if journal.exists() and journal.stat().st_size > 0:
            raise sqlite3.OperationalError(f"{path}: a hot rollback journal needs recovery")
        mode = "immutable"
    conn = sqlite3.connect(
        _uri(path, immutable=mode == "immutable"),
        uri=True,
        isolation_level=None,
        check_same_thread=False,
    )
    budget = TimeBudget(conn, budget_s)
    return conn, mode, budget


def file_stamp(path: Path) -> tuple[int, int, bool]:
    """(size, mtime_ns, has -wal) of a database: changes when a writer touched it."""
    try:
        st = path.stat()
    except OSError:
        return (-1, -1, False)
    return (st.st_size, st.st_mtime_ns, Path(f"{path}-wal").exists())


def our_objects(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """``(type, name)`` of every object of ours in the schema: ``hm_*`` tables, views,
    triggers and indexes, plus `OUR_INDEXES` (FTS5 shadow tables included)."""
    rows = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE name LIKE 'hm\\_%' ESCAPE '\\'"
        " OR type = 'index'"
    ).fetchall()
    return [(str(t), str(n)) for t, n in rows if str(n).startswith("hm_") or n in OUR_INDEXES]


@dataclass(frozen=True)
class DatabaseInfo:
    """What `inspect_database` found.

    :ivar path: the file inspected.
    :ivar kind: ``"missing"`` (no file, or an empty one), ``"archive"`` (ours), ``"hermes"``
        (Hermes' ``state.db``, nothing of ours inside), ``"legacy"`` (Hermes' ``state.db``
        holding objects an earlier hermes-memory release added), ``"other"`` (SQLite but
        neither) or ``"unreadable"`` (not SQLite, damaged, or busy being rewritten).
    :ivar objects: our objects found (``(type, name)``), for ``"legacy"`` and ``"archive"``.
    :ivar detail: why the file got its kind (for messages).
    """

    path: Path
    kind: str
    objects: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    detail: str = ""


def inspect_database(path: str | Path) -> DatabaseInfo:
    """Classify ``path`` by reading its schema read-only (no sidecar files are created)."""
    p = Path(path).expanduser()
    try:
        if not p.exists() or p.stat().st_size == 0:
            return DatabaseInfo(p, "missing")
        with p.open("rb") as fh:
            header = fh.read(16)
    except OSError as exc:
        return DatabaseInfo(p, "unreadable", detail=str(exc.strerror or exc))
    if header != _SQLITE_MAGIC:
        return DatabaseInfo(p, "unreadable", detail="not a SQLite database")
    try:
        conn, _mode, _budget = open_readonly(p, budget_s=10.0)
    except sqlite3.Error as exc:
        return DatabaseInfo(p, "unreadable", detail=str(exc))
    try:
        tables = {
            str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        objects = tuple(our_objects(conn))
        marker = False
        if "state_meta" in tables:
            with contextlib.suppress(sqlite3.Error):
                marker = (
                    conn.execute("SELECT 1 FROM state_meta WHERE key = ?", (_META_KEY,)).fetchone()
                    is not None
                )
    except sqlite3.Error as exc:
        return DatabaseInfo(p, "unreadable", detail=str(exc))
    finally:
        conn.close()
    foreign = {t for t in tables if t not in OUR_TABLES and not t.startswith(("hm_", "sqlite_"))}
    ours = marker or bool(objects)
    if not {"sessions", "messages"} <= tables:
        if ours:
            return DatabaseInfo(p, "archive", objects, "an archive of ours (no tables yet)")
        return DatabaseInfo(p, "other", detail="no 'sessions'/'messages' tables")
    hermes = bool(foreign) or not ours
    if hermes and ours:
        return DatabaseInfo(
            p, "legacy", objects, f"Hermes' state.db with {len(objects)} objects of ours inside"
        )
    if hermes:
        named = ", ".join(sorted(foreign & HERMES_ONLY_TABLES) or sorted(foreign)[:3])
        why = f"has Hermes' tables ({named})" if foreign else "has no hermes-memory marker"
        return DatabaseInfo(p, "hermes", (), why)
    return DatabaseInfo(p, "archive", objects)


def check_not_hermes(path: Path) -> None:
    """Raise `HermesDatabaseError` when ``path`` is Hermes' ``state.db`` (with or without
    objects of ours in it). Anything else (our archive, a new or unreadable file) passes:
    opening it reports its own errors."""
    info = inspect_database(path)
    if info.kind == "hermes":
        raise HermesDatabaseError(
            f"{path} is Hermes Agent's own database ({info.detail}), not a hermes-memory "
            "archive; it is never written to. Point sessions.db_path at a file of our own "
            "(or remove the setting) and copy Hermes' sessions with "
            f"'hermes-memory sessions import --from-hermes {path}'"
        )
    if info.kind == "legacy":
        raise HermesDatabaseError(
            f"{path} is Hermes Agent's own database, and an earlier hermes-memory release "
            "stored its archive inside it; move that out with "
            f"'hermes-memory sessions migrate-out --from-hermes {path}', then remove "
            "sessions.db_path from config.yaml (or point it at a file of our own)"
        )


def legacy_archive_notice(home: str | Path) -> str | None:
    """One line for read commands when ``<home>/state.db`` holds an earlier archive of ours.

    None otherwise. Reads the file's schema read-only; changes nothing.
    """
    state = Path(home).expanduser() / "state.db"
    info = inspect_database(state)
    if info.kind != "legacy":
        return None
    return (
        f"note: {state} (Hermes' own database) still holds {len(info.objects)} objects an "
        "earlier hermes-memory release added; move them into our own archive with "
        f"'hermes-memory sessions migrate-out --from-hermes {state}'"
    )


@contextlib.contextmanager
def readonly(path: Path, *, budget_s: float = 30.0) -> Iterator[sqlite3.Connection]:
    """`open_readonly` as a context manager (closes the connection)."""
    conn, _mode, _budget = open_readonly(path, budget_s=budget_s)
    try:
        yield conn
    finally:
        conn.close()
