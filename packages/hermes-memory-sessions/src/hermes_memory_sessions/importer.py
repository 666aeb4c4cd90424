"""Import an existing Hermes Agent ``state.db`` into a :class:`SessionStore` archive.

The source database is opened strictly read-only and is never modified: no ``-wal``,
``-shm`` or ``-journal`` file is created next to it. Both on-disk generations of Hermes are
understood — the v0.15 layout with inline FTS5 tables (schema versions 11-22) and the
v23+ layout with external-content FTS5 tables — as well as older databases without any
full-text index. Only the ``sessions`` and ``messages`` tables are read; the archive builds its
own indexes.

Typical use::

    from hermes_memory_sessions.importer import import_hermes_db
    from hermes_memory_sessions.store import SessionStore

    store = SessionStore("archive.db")
    report = import_hermes_db("~/.hermes/state.db", store, progress=print)
    print(report.summary())
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from hermes_memory_sessions.store import MESSAGE_DATA_FIELDS

if TYPE_CHECKING:
    from hermes_memory_sessions.store import SessionStore

__all__ = [
    "MESSAGE_FIELDS",
    "SESSION_RECOMPUTED",
    "HermesImportError",
    "ImportReport",
    "ProgressCallback",
    "detect_layout",
    "import_hermes_db",
    "open_source_readonly",
]

ProgressCallback = Callable[[int, int], None]
"""``progress(done, total)``: called with the number of messages processed so far."""

#: Session columns never copied: the archive recomputes them from the imported messages.
SESSION_RECOMPUTED: frozenset[str] = frozenset({"message_count", "tool_call_count"})

#: Message columns copied from the source when present (the archive's compatible subset).
MESSAGE_FIELDS: tuple[str, ...] = MESSAGE_DATA_FIELDS

_SQLITE_MAGIC = b"SQLite format 3\x00"
_BATCH = 1000
_REQUIRED_SESSION_COLUMNS = frozenset({"id", "started_at"})
_REQUIRED_MESSAGE_COLUMNS = frozenset({"id", "session_id", "role", "content", "timestamp"})


class HermesImportError(ValueError):
    """The source cannot be imported (missing, not SQLite, not a Hermes database, damaged).

    The message is written for the user and names the file; no traceback is needed to act on it.
    """


@dataclass
class ImportReport:
    """What an import did.

    Attributes:
        source: the file that was read.
        layout: ``"hermes-l1"`` (inline FTS5, schema 11-22), ``"hermes-v23"`` (external-content
            FTS5), ``"hermes-nofts"`` (no full-text tables) or ``"jsonl"``.
        schema_version: the source's ``schema_version`` row, if any.
        sessions_total: sessions found in the source.
        sessions_imported: sessions written to the archive.
        messages_imported: messages written to the archive.
        sessions_skipped: ids already present in the archive and therefore left untouched.
        messages_skipped: messages belonging to ``sessions_skipped``.
        messages_excluded: source rows deliberately not imported: v23+ ``display_kind='hidden'``
            rows, which Hermes never shows or searches. (Rewound and compacted rows *are*
            imported, with their ``active``/``compacted`` flags, so search treats them as
            Hermes does.)
        warnings: human-readable notes (dropped lineage links, renamed titles, ...).
        read_mode: how the source was opened (``"ro"``, ``"immutable"`` or ``"snapshot"``).
    """

    source: str
    layout: str
    schema_version: int | None = None
    sessions_total: int = 0
    sessions_imported: int = 0
    messages_imported: int = 0
    sessions_skipped: list[str] = field(default_factory=list)
    messages_skipped: int = 0
    messages_excluded: int = 0
    warnings: list[str] = field(default_factory=list)
    read_mode: str = ""

    def as_dict(self) -> dict[str, Any]:
        """Return the report as a JSON-serialisable dict."""
        return {
            "source": self.source,
            "layout": self.layout,
            "schema_version": self.schema_version,
            "sessions_total": self.sessions_total,
            "sessions_imported": self.sessions_imported,
            "messages_imported": self.messages_imported,
            "sessions_skipped": list(self.sessions_skipped),
            "messages_skipped": self.messages_skipped,
            "messages_excluded": self.messages_excluded,
            "warnings": list(self.warnings),
            "read_mode": self.read_mode,
        }

    def summary(self) -> str:
        """One line for a terminal, e.g. ``imported 12 sessions (3,401 messages); ...``."""
        text = (
            f"imported {self.sessions_imported} sessions ({self.messages_imported:,} messages)"
            f" from {self.source}"
        )
        if self.sessions_skipped:
            text += (
                f"; skipped {len(self.sessions_skipped)} already in the archive"
                f" ({self.messages_skipped:,} messages)"
            )
        if self.messages_excluded:
            text += f"; left out {self.messages_excluded:,} hidden messages"
        if self.warnings:
            text += f"; {len(self.warnings)} warning(s)"
        return text


# --------------------------------------------------------------------------- opening the source


class _Source:
    """A read-only connection to the source plus whatever must be cleaned up afterwards."""

    def __init__(self, conn: sqlite3.Connection, mode: str, tmpdir: str | None) -> None:
        self.conn = conn
        self.mode = mode
        self._tmpdir = tmpdir

    def close(self) -> None:
        self.conn.close()
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None


def _uri(path: Path, *, immutable: bool) -> str:
    uri = "file:" + quote(str(path)) + "?mode=ro"
    return uri + "&immutable=1" if immutable else uri


def _probe(conn: sqlite3.Connection) -> None:
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()


def _snapshot(path: Path) -> _Source:
    """Copy the database and its journal/WAL into a private temp dir and open the copy."""
    tmpdir = tempfile.mkdtemp(prefix="hermes-import-")
    try:
        os.chmod(tmpdir, 0o700)
        copy = Path(tmpdir) / "state.db"
        shutil.copyfile(path, copy)
        for suffix in ("-wal", "-journal"):
            side = Path(str(path) + suffix)
            if side.exists():
                shutil.copyfile(side, Path(str(copy) + suffix))
        conn = sqlite3.connect(str(copy), isolation_level=None)
        _probe(conn)  # recovers the WAL / rolls back a hot journal inside tmpdir only
    except BaseException:
        shutil.rmtree(tmpdir, ignore_errors=True)
        raise
    return _Source(conn, "snapshot", tmpdir)


def open_source_readonly(path: str | os.PathLike[str]) -> tuple[sqlite3.Connection, str]:
    """Open ``path`` read-only without creating any file next to it.

    Returns the connection and the mode used. The caller owns the connection. Prefer
    :func:`import_hermes_db`, which also removes any private snapshot it had to make.
    """
    src = _open(Path(path))
    # The snapshot directory would leak with this API; make a stable in-memory copy instead.
    if src.mode == "snapshot":
        mem = sqlite3.connect(":memory:")
        src.conn.backup(mem)
        src.close()
        return mem, "snapshot"
    return src.conn, src.mode


def _open(path: Path) -> _Source:
    """Open ``path`` strictly read-only.

    * rollback-journal database: ``mode=ro`` (SQLite creates nothing for a reader);
    * WAL database with a live ``-wal`` and ``-shm`` (Hermes is running): ``mode=ro``, sharing
      the existing sidecars, so committed but un-checkpointed messages are seen;
    * WAL database without a ``-wal`` (Hermes is closed): ``immutable=1``; a plain ``mode=ro``
      reader would create ``-wal``/``-shm`` files and leave them behind;
    * anything else (a ``-wal`` without ``-shm`` after a crash, a hot rollback journal, a
      read-only directory where SQLite cannot open the sidecars): copy the files into a private
      temporary directory and read the copy.
    """
    path = path.expanduser()
    if not path.exists():
        raise HermesImportError(f"{path}: no such file")
    if not path.is_file():
        raise HermesImportError(f"{path}: not a regular file")
    try:
        with path.open("rb") as fh:
            header = fh.read(100)
    except OSError as exc:
        raise HermesImportError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
        raise HermesImportError(f"{path} is not a SQLite database, so not a Hermes state.db")
    path = path.resolve()
    wal_mode = header[18] == 2 or header[19] == 2
    wal = Path(str(path) + "-wal")
    shm = Path(str(path) + "-shm")
    journal = Path(str(path) + "-journal")

    if wal_mode:
        plan = ("ro" if shm.exists() else "snapshot") if wal.exists() else "immutable"
    else:
        hot = journal.exists() and journal.stat().st_size > 0
        plan = "snapshot" if hot else "ro"

    try:
        if plan != "snapshot":
            conn = sqlite3.connect(
                _uri(path, immutable=plan == "immutable"), uri=True, isolation_level=None
            )
            try:
                _probe(conn)
            except sqlite3.OperationalError:
                conn.close()
                plan = "snapshot"
            else:
                return _Source(conn, plan, None)
        return _snapshot(path)
    except sqlite3.DatabaseError as exc:
        raise HermesImportError(f"{path}: the database is damaged or unreadable ({exc})") from exc
    except OSError as exc:
        raise HermesImportError(f"{path}: cannot be read ({exc.strerror or exc})") from exc


# --------------------------------------------------------------------------- layout


@dataclass(frozen=True)
class _Layout:
    name: str
    schema_version: int | None
    session_columns: frozenset[str]
    message_columns: frozenset[str]


def _columns(conn: sqlite3.Connection, table: str) -> frozenset[str]:
    return frozenset(str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})"))


def detect_layout(conn: sqlite3.Connection, *, name: str = "source") -> _Layout:
    """Recognise a Hermes ``state.db`` and tell which FTS generation it uses.

    Raises :class:`HermesImportError` when ``sessions``/``messages`` or their key columns are
    missing. The layout is taken from the ``messages_fts`` DDL (an inline table means the
    v0.15 layout even when ``schema_version`` says 23+, because Hermes made the v23 rewrite
    opt-in); ``schema_version`` is reported as found.
    """
    try:
        objects = {
            str(row[0]): str(row[1] or "")
            for row in conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
            )
        }
    except sqlite3.DatabaseError as exc:
        raise HermesImportError(f"{name}: cannot read the schema ({exc})") from exc
    missing = [t for t in ("sessions", "messages") if t not in objects]
    if missing:
        raise HermesImportError(
            f"{name} is not a Hermes state.db: no {' or '.join(repr(t) for t in missing)} table"
        )
    session_columns = _columns(conn, "sessions")
    message_columns = _columns(conn, "messages")
    for table, have, need in (
        ("sessions", session_columns, _REQUIRED_SESSION_COLUMNS),
        ("messages", message_columns, _REQUIRED_MESSAGE_COLUMNS),
    ):
        lacking = sorted(need - have)
        if lacking:
            raise HermesImportError(
                f"{name} is not a Hermes state.db: table {table!r} lacks column(s) "
                + ", ".join(lacking)
            )
    version: int | None = None
    if "schema_version" in objects:
        try:
            row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
        except sqlite3.DatabaseError:
            row = None
        if row is not None and isinstance(row[0], int):
            version = row[0]
    fts = objects.get("messages_fts", "").lower().replace(" ", "")
    if not fts:
        layout = "hermes-nofts"
    elif "content=" in fts and "content=''" not in fts:
        layout = "hermes-v23"
    else:
        layout = "hermes-l1"
    return _Layout(layout, version, session_columns, message_columns)


# --------------------------------------------------------------------------- reading


def _message_filter(cols: frozenset[str]) -> str:
    """SQL predicate selecting the rows to import (v23+ hidden UI rows excluded)."""
    clauses = []
    if "display_kind" in cols:
        clauses.append("coalesce(display_kind, '') <> 'hidden'")
    return " AND ".join(clauses) if clauses else "1"


class _SessionMessages:
    """Re-iterable, batched reader of one session's messages in id order."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        session_id: str,
        fields: tuple[str, ...],
        where: str,
        on_batch: Callable[[int], None],
    ) -> None:
        self._conn = conn
        self._session_id = session_id
        self._fields = fields
        self._sql = (
            f"SELECT {', '.join(fields)} FROM messages"  # noqa: S608 (whitelisted names)
            f" WHERE session_id = ? AND {where} ORDER BY id"
        )
        self._on_batch = on_batch
        self.count = 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        self.count = 0
        cur = self._conn.execute(self._sql, (self._session_id,))
        try:
            while True:
                rows = cur.fetchmany(_BATCH)
                if not rows:
                    return
                for row in rows:
                    self.count += 1
                    yield dict(zip(self._fields, row, strict=True))
                self._on_batch(len(rows))
        finally:
            cur.close()


def _session_order(conn: sqlite3.Connection) -> list[tuple[str, str | None]]:
    """All (id, parent_session_id) pairs, parents before children, else by start time."""
    has_parent = "parent_session_id" in _columns(conn, "sessions")
    parent_sql = "parent_session_id" if has_parent else "NULL"
    rows = conn.execute(f"SELECT id, {parent_sql} FROM sessions ORDER BY started_at, id").fetchall()  # noqa: S608
    ids = {str(r[0]) for r in rows}
    children: dict[str, list[tuple[str, str | None]]] = {}
    roots: list[tuple[str, str | None]] = []
    for sid, parent in rows:
        item = (str(sid), None if parent is None else str(parent))
        if item[1] is not None and item[1] in ids and item[1] != item[0]:
            children.setdefault(item[1], []).append(item)
        else:
            roots.append(item)
    ordered: list[tuple[str, str | None]] = []
    seen: set[str] = set()
    stack = list(reversed(roots))
    while stack:
        item = stack.pop()
        if item[0] in seen:
            continue
        seen.add(item[0])
        ordered.append(item)
        stack.extend(reversed(children.get(item[0], [])))
    # Members of a parent cycle are reachable from no root: append them in start order.
    ordered.extend((str(s), p) for s, p in rows if str(s) not in seen)
    return ordered


def _is_title_conflict(exc: ValueError) -> bool:
    return "already in use" in str(exc)


def _free_title(base: str, attempt: int) -> str:
    suffix = " (imported)" if attempt == 1 else f" (imported {attempt})"
    return base[: 100 - len(suffix)].rstrip() + suffix


# --------------------------------------------------------------------------- import
# SQL below is built only from the fixed column whitelists and _message_filter(): no user text.


def import_hermes_db(
    source_path: str | os.PathLike[str],
    store: SessionStore,
    *,
    progress: ProgressCallback | None = None,
    skip_existing: bool = True,
) -> ImportReport:
    """Import every session and message of a Hermes ``state.db`` into ``store``.

    Args:
        source_path: the Hermes database (``~`` is expanded), e.g. ``~/.hermes/state.db``.
            It is only ever read; see :func:`open_source_readonly` for how.
        store: the destination archive.
        progress: optional ``progress(done, total)`` callback, ``total`` being the number of
            messages to process; called once at the start, after every batch of 1,000 messages
            and at the end.
        skip_existing: sessions whose id is already in the archive are left untouched and
            listed in :attr:`ImportReport.sessions_skipped` (so re-running an import only adds
            what is new). With ``False`` the import refuses to start if any id exists.

    Sessions keep their id, title, lineage, source, model, start/end times, end reason and
    every other column the archive knows (token and cost counters, ``model_config``, the
    system prompt — resolved from v25+ ``system_prompts`` — ...); message and tool-call
    counts are recomputed. Messages keep role, content, tool fields, timestamps, reasoning,
    ``active``/``compacted`` flags and order (new archive message ids are assigned in the
    original order). Each session is written in one transaction, parents before children;
    messages are read from the source in batches of 1,000, so reading uses constant memory.

    Raises:
        HermesImportError: the file is missing, not SQLite, not a Hermes database, or damaged
            (sessions committed before the damage was hit stay imported; re-run after repair).
        ValueError: ``skip_existing=False`` and some session ids already exist.
    """
    path = Path(source_path).expanduser()
    src = _open(path)
    try:
        return _import(src, path, store, progress, skip_existing)
    except sqlite3.DatabaseError as exc:
        raise HermesImportError(f"{path}: the database is damaged or unreadable ({exc})") from exc
    finally:
        src.close()


def _import(
    src: _Source,
    path: Path,
    store: SessionStore,
    progress: ProgressCallback | None,
    skip_existing: bool,
) -> ImportReport:
    conn = src.conn
    layout = detect_layout(conn, name=str(path))
    report = ImportReport(
        source=str(path), layout=layout.name, schema_version=layout.schema_version
    )
    report.read_mode = src.mode
    session_fields = tuple(sorted(layout.session_columns - SESSION_RECOMPUTED))
    message_fields = tuple(f for f in MESSAGE_FIELDS if f in layout.message_columns)
    where = _message_filter(layout.message_columns)

    prompts = bool(
        conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'system_prompts'"
        ).fetchone()
    )
    order = _session_order(conn)
    report.sessions_total = len(order)
    total = int(conn.execute(f"SELECT count(*) FROM messages WHERE {where}").fetchone()[0])  # noqa: S608
    every = int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
    report.messages_excluded = every - total

    existing = [sid for sid, _ in order if store.get_session(sid) is not None]
    if existing and not skip_existing:
        raise ValueError(
            f"{len(existing)} session(s) already exist in the archive (first: {existing[0]!r});"
            " pass skip_existing=True to import only the others"
        )
    skip = set(existing)

    done = 0

    def tick(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(min(done, total), total)

    if progress is not None:
        progress(0, total)

    select_session = f"SELECT {', '.join(session_fields)} FROM sessions WHERE id = ?"  # noqa: S608
    count_sql = f"SELECT count(*) FROM messages WHERE session_id = ? AND {where}"  # noqa: S608
    for sid, parent in order:
        if sid in skip:
            n = int(conn.execute(count_sql, (sid,)).fetchone()[0])
            report.sessions_skipped.append(sid)
            report.messages_skipped += n
            tick(n)
            continue
        row = conn.execute(select_session, (sid,)).fetchone()
        session: dict[str, Any] = dict(zip(session_fields, row, strict=True))
        session["id"] = sid
        if not session.get("source"):
            session["source"] = "cli"
        if parent is not None and store.get_session(parent) is None:
            report.warnings.append(
                f"session {sid}: parent {parent} is in neither the source nor the archive"
                " (link kept; lineage stops there)"
            )
        if not session.get("system_prompt") and session.get("system_prompt_hash") and prompts:
            found = conn.execute(
                "SELECT prompt FROM system_prompts WHERE hash = ?",
                (session["system_prompt_hash"],),
            ).fetchone()
            if found is not None:
                session["system_prompt"] = found[0]
        # progress is reported per batch from inside the reader; roll it back on retry
        start_done = done
        messages = _SessionMessages(conn, sid, message_fields, where, tick)
        attempt = 0
        original_title = session.get("title")
        while True:
            try:
                store.import_session(session, messages)
                break
            except ValueError as exc:
                if not (original_title and _is_title_conflict(exc)) or attempt >= 20:
                    raise
                attempt += 1
                done = start_done
                session["title"] = _free_title(str(original_title), attempt)
        if attempt:
            report.warnings.append(
                f"session {sid}: title {original_title!r} is already used in the archive;"
                f" imported as {session['title']!r}"
            )
        report.sessions_imported += 1
        report.messages_imported += messages.count
    if progress is not None and done != total:
        progress(total, total)
    return report
