"""Import Hermes Agent's ``state.db`` into a :class:`SessionStore` archive, incrementally.

Hermes' database is another program's file. It is opened strictly read-only and is never
modified: no ``-wal``, ``-shm`` or ``-journal`` file is created next to it (see
`open_source_readonly` for how). Both on-disk generations of Hermes are understood (the
v0.15 layout with inline FTS5 tables, schema versions 11-22, and the v23+ layout with
external-content FTS5 tables) as well as older databases without any full-text index. Only
the real ``sessions`` and ``messages`` tables are read (a view of that name is refused), every
statement runs under a time budget, and the archive builds its own indexes.

**Incremental.** The archive remembers, per source file, which sessions an import created
and the last source message id copied into each (``hm_import_sessions``), plus the highest
source message id seen (``hm_import_sources``, the watermark). A re-run copies what is new:
sessions added since, and messages appended since to sessions an earlier run imported
(Hermes' message ids only grow). A session the archive already had for another reason
(recorded live by the sessions provider, imported from another file) is never doubled: it
is skipped and reported.

**Bad rows.** A row with an odd value (a BLOB or a number where text belongs, a NULL role,
an unusable timestamp) is repaired when the meaning is clear (UTF-8 bytes decoded, a number
written as text, a missing timestamp taken from the previous message; each noted in
``warnings``) or left out with a line in ``errors`` naming the session and message;
the rest imports.

Typical use::

    from hermes_memory_sessions.importers._hermes import import_hermes_db
    from hermes_memory_sessions.storage._store import SessionStore

    store = SessionStore("~/.hermes/hermes-memory/sessions.db")
    report = import_hermes_db("~/.hermes/state.db", store, progress=print)
    print(report.summary())
"""

from __future__ import annotations

import math
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory_sessions.storage._hermesdb import TimeBudget, file_stamp
from hermes_memory_sessions.storage._message_rows import scrub_messages
from hermes_memory_sessions.storage._store import MESSAGE_DATA_FIELDS

if TYPE_CHECKING:
    from hermes_memory_sessions.protocol import SessionArchive

__all__ = [
    "MESSAGE_FIELDS",
    "SESSION_RECOMPUTED",
    "STEP_BUDGET_S",
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

#: Longest any one read of the source may take (a statement, or one batch of rows) before it
#: is interrupted: a crafted file must never hang the import.
STEP_BUDGET_S = 60.0
#: At most this many error lines are kept in a report (the count is always exact).
MAX_ERRORS_KEPT = 200

_SQLITE_MAGIC = b"SQLite format 3\x00"
_BATCH = 1000
_REQUIRED_SESSION_COLUMNS = frozenset({"id", "started_at"})
_REQUIRED_MESSAGE_COLUMNS = frozenset({"id", "session_id", "role", "content", "timestamp"})
_TEXT_MESSAGE_FIELDS = ("content", "tool_call_id", "tool_calls", "tool_name", "finish_reason")
_TEXT_MESSAGE_FIELDS_ALL = (*_TEXT_MESSAGE_FIELDS, "reasoning")
_INT_MESSAGE_FIELDS = ("token_count", "active", "compacted")
_NUMERIC_SESSION_FIELDS = frozenset(
    {
        "started_at",
        "ended_at",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "reasoning_tokens",
        "estimated_cost_usd",
        "actual_cost_usd",
        "api_call_count",
        "last_activity_at",
    }
)
_RESTARTS = 3


class HermesImportError(ValueError):
    """The source cannot be imported (missing, not SQLite, not a Hermes database, damaged).

    The message is written for the user and names the file; no traceback is needed to act on it.
    """


class _SourceChanged(Exception):
    """A writer touched a file we were reading with ``immutable=1``: read it again."""


@dataclass
class ImportReport:
    """What an import did.

    :ivar source: the file that was read.
    :ivar layout: ``"hermes-l1"`` (inline FTS5, schema 11-22), ``"hermes-v23"`` (external-content
        FTS5), ``"hermes-nofts"`` (no full-text tables) or ``"jsonl"``.
    :ivar schema_version: the source's ``schema_version`` row, if any.
    :ivar sessions_total: sessions found in the source.
    :ivar sessions_imported: sessions written to the archive for the first time.
    :ivar messages_imported: messages written to the archive (new sessions and appended ones).
    :ivar sessions_updated: sessions imported by an earlier run that received new messages (or
        their end) from this one.
    :ivar sessions_skipped: ids already in the archive that this run left untouched (nothing new
        in them, or the archive has them from elsewhere).
    :ivar messages_skipped: source messages not written because the archive already has them.
    :ivar messages_excluded: source rows deliberately not imported: v23+ ``display_kind='hidden'``
        rows, which Hermes never shows or searches. (Rewound and compacted rows *are*
        imported, with their ``active``/``compacted`` flags, so search treats them as
        Hermes does.)
    :ivar sessions_failed: sessions left out because of bad data (see ``errors``).
    :ivar messages_failed: messages left out because of bad data (see ``errors``).
    :ivar messages_masked: imported messages whose text had credentials masked (the archive
        feeds prompts, so secrets never enter it).
    :ivar errors: one line per left-out row (the first `MAX_ERRORS_KEPT`).
    :ivar warnings: human-readable notes (repaired values, dropped lineage links, renamed
        titles, ...).
    :ivar read_mode: how the source was opened (``"ro"``, ``"immutable"`` or ``"snapshot"``).
    :ivar watermark: the highest source message id this archive has now seen from the file.
    :ivar incomplete: the run stopped at a session boundary because its ``time_budget_s``
        ran out; the next run continues (what was committed stays, nothing is doubled).
    """

    source: str
    layout: str
    schema_version: int | None = None
    sessions_total: int = 0
    sessions_imported: int = 0
    messages_imported: int = 0
    sessions_updated: int = 0
    sessions_skipped: list[str] = field(default_factory=list)
    messages_skipped: int = 0
    messages_excluded: int = 0
    sessions_failed: int = 0
    messages_failed: int = 0
    messages_masked: int = 0
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    read_mode: str = ""
    watermark: int = 0
    incomplete: bool = False

    def error(self, text: str) -> None:
        """Record one left-out row (kept up to `MAX_ERRORS_KEPT` lines)."""
        if len(self.errors) < MAX_ERRORS_KEPT:
            self.errors.append(text)

    def add_messages(self, messages: _SessionMessages) -> None:
        """Count what one session's messages came to (imported, failed, masked) and keep
        their repairs and errors."""
        self.messages_imported += messages.count
        self.messages_failed += messages.failed
        self.messages_masked += messages.masked
        self.warnings.extend(messages.repairs)
        for line in messages.errors:
            self.error(line)

    def as_dict(self) -> dict[str, Any]:
        """Return the report as a JSON-serialisable dict."""
        return {
            "source": self.source,
            "layout": self.layout,
            "schema_version": self.schema_version,
            "sessions_total": self.sessions_total,
            "sessions_imported": self.sessions_imported,
            "messages_imported": self.messages_imported,
            "sessions_updated": self.sessions_updated,
            "sessions_skipped": list(self.sessions_skipped),
            "messages_skipped": self.messages_skipped,
            "messages_excluded": self.messages_excluded,
            "sessions_failed": self.sessions_failed,
            "messages_failed": self.messages_failed,
            "messages_masked": self.messages_masked,
            "errors": list(self.errors),
            "warnings": list(self.warnings),
            "read_mode": self.read_mode,
            "watermark": self.watermark,
            "incomplete": self.incomplete,
        }

    def summary(self) -> str:
        """One line for a terminal, e.g. ``imported 12 sessions (3,401 messages); ...``."""
        text = (
            f"imported {self.sessions_imported} sessions ({self.messages_imported:,} messages)"
            f" from {self.source}"
        )
        if self.sessions_updated:
            text += f"; {self.sessions_updated} earlier imported sessions had new messages"
        if self.sessions_skipped:
            text += (
                f"; skipped {len(self.sessions_skipped)} already in the archive"
                f" ({self.messages_skipped:,} messages)"
            )
        if self.messages_excluded:
            text += f"; left out {self.messages_excluded:,} hidden messages"
        if self.sessions_failed or self.messages_failed:
            text += (
                f"; {self.sessions_failed} sessions and {self.messages_failed:,} messages"
                " not imported because of bad data"
            )
        if self.messages_masked:
            text += f"; credentials masked in {self.messages_masked:,} messages"
        if self.warnings:
            text += f"; {len(self.warnings)} warning(s)"
        if self.incomplete:
            text += "; stopped at its time budget (the next run continues)"
        return text


# --------------------------------------------------------------------------- opening the source


class _Source:
    """A read-only connection to the source plus whatever must be cleaned up afterwards."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        mode: str,
        tmpdir: str | None,
        path: Path,
        budget_s: float,
    ) -> None:
        self.conn = conn
        self.mode = mode
        self._tmpdir = tmpdir
        self.path = path
        self.stamp = file_stamp(path)
        self.budget = TimeBudget(conn, budget_s)

    def check_unchanged(self) -> None:
        """With ``immutable=1`` nothing guards against a writer: compare the file's stamp."""
        if self.mode == "immutable" and file_stamp(self.path) != self.stamp:
            raise _SourceChanged(str(self.path))

    def close(self) -> None:
        self.conn.close()
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None


def _uri(path: Path, *, immutable: bool) -> str:
    from urllib.parse import quote

    uri = "file:" + quote(str(path)) + "?mode=ro"
    return uri + "&immutable=1" if immutable else uri


def _probe(conn: sqlite3.Connection) -> None:
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()


def _snapshot(path: Path, budget_s: float) -> _Source:
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
        conn = sqlite3.connect(str(copy), isolation_level=None, check_same_thread=False)
        _probe(conn)  # recovers the WAL / rolls back a hot journal inside tmpdir only
    except BaseException:
        shutil.rmtree(tmpdir, ignore_errors=True)
        raise
    return _Source(conn, "snapshot", tmpdir, path, budget_s)


def open_source_readonly(path: str | os.PathLike[str]) -> tuple[sqlite3.Connection, str]:
    """Open ``path`` read-only without creating any file next to it.

    Returns the connection and the mode used. The caller owns the connection. Prefer
    :func:`import_hermes_db`, which also removes any private snapshot it had to make.
    """
    src = _open(Path(path), STEP_BUDGET_S)
    # The snapshot directory would leak with this API; make a stable in-memory copy instead.
    if src.mode == "snapshot":
        mem = sqlite3.connect(":memory:")
        src.conn.backup(mem)
        src.close()
        return mem, "snapshot"
    return src.conn, src.mode


def _open(path: Path, budget_s: float, *, avoid_immutable: bool = False) -> _Source:
    """Open ``path`` strictly read-only.

    * rollback-journal database: ``mode=ro`` (SQLite creates nothing for a reader and takes
      the ordinary shared lock, so a concurrent writer's commit is never half-seen);
    * WAL database with a live ``-wal`` and ``-shm`` (Hermes is running): ``mode=ro``, a
      normal WAL reader sharing the existing sidecars, so committed but un-checkpointed
      messages are seen and no torn state is read;
    * WAL database without a ``-wal`` (Hermes is closed): ``immutable=1``, because a plain
      ``mode=ro`` reader would create ``-wal``/``-shm`` files and leave them behind. Immutable
      reads take no locks, so the import compares the file's size, mtime and the appearance
      of a ``-wal`` before committing each session; if Hermes started meanwhile, that
      session is rolled back and the import starts again in ``mode=ro`` (incremental, so
      nothing is doubled);
    * anything else (a ``-wal`` without ``-shm`` after a crash, a hot rollback journal, a
      read-only directory where SQLite cannot open the sidecars, a writer that keeps
      appearing): copy the files into a private temporary directory and read the copy.
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
        if wal.exists():
            plan = "ro" if shm.exists() else "snapshot"
        else:
            plan = "snapshot" if avoid_immutable else "immutable"
    else:
        hot = journal.exists() and journal.stat().st_size > 0
        plan = "snapshot" if hot else "ro"

    try:
        if plan != "snapshot":
            conn = sqlite3.connect(
                _uri(path, immutable=plan == "immutable"),
                uri=True,
                isolation_level=None,
                check_same_thread=False,
            )
            try:
                _probe(conn)
            except sqlite3.OperationalError:
                conn.close()
                plan = "snapshot"
            else:
                return _Source(conn, plan, None, path, budget_s)
        return _snapshot(path, budget_s)
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

    Raises :class:`HermesImportError` when the ``sessions``/``messages`` *tables* (a view of
    that name does not count) or their key columns are missing. The layout is taken from the
    ``messages_fts`` DDL (an inline table means the v0.15 layout even when ``schema_version``
    says 23+, because Hermes made the v23 rewrite opt-in); ``schema_version`` is reported as
    found.
    """
    try:
        objects = {
            str(row[0]): (str(row[1]), str(row[2] or ""))
            for row in conn.execute(
                "SELECT name, type, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
            )
        }
    except sqlite3.DatabaseError as exc:
        raise HermesImportError(f"{name}: cannot read the schema ({exc})") from exc
    missing = [t for t in ("sessions", "messages") if t not in objects]
    if missing:
        raise HermesImportError(
            f"{name} is not a Hermes state.db: no {' or '.join(repr(t) for t in missing)} table"
        )
    views = [t for t in ("sessions", "messages") if objects[t][0] != "table"]
    if views:
        raise HermesImportError(
            f"{name} is not a Hermes state.db: {' and '.join(repr(t) for t in views)}"
            f" is a {objects[views[0]][0]}, not a table"
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
    if objects.get("schema_version", ("",))[0] == "table":
        try:
            row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
        except sqlite3.DatabaseError:
            row = None
        if row is not None and isinstance(row[0], int):
            version = row[0]
    fts = objects.get("messages_fts", ("", ""))[1].lower().replace(" ", "")
    if not fts:
        layout = "hermes-nofts"
    elif "content=" in fts and "content=''" not in fts:
        layout = "hermes-v23"
    else:
        layout = "hermes-l1"
    return _Layout(layout, version, session_columns, message_columns)


# --------------------------------------------------------------------------- cleaning rows


def _as_text(value: Any) -> tuple[str | None, str | None]:
    """(text, problem): str as is; UTF-8 bytes decoded; numbers written out; else a problem."""
    if value is None or isinstance(value, str):
        return value, None
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8"), None
        except UnicodeDecodeError:
            return None, f"is binary data ({len(value):,} bytes) that is not UTF-8 text"
    if isinstance(value, (int, float)):
        return str(value), None
    return None, f"has an unsupported type {type(value).__name__}"


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, (str, bytes)):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _clean_id(value: Any) -> tuple[str | None, str | None]:
    """A usable session id, or why not."""
    if isinstance(value, bytes):
        text, problem = _as_text(value)
        if problem:
            return None, f"its id {problem}"
        value = text
    if not isinstance(value, str) or not value.strip():
        return None, f"its id is {type(value).__name__} {value!r}, not text"
    bad = next((c for c in value if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        return None, f"its id {value!r} contains the control character U+{ord(bad):04X}"
    return value, None


def _clean_session(row: dict[str, Any], sid: str) -> tuple[dict[str, Any], list[str]]:
    """The session row with unusable values dropped (each noted in the returned list)."""
    notes: list[str] = []
    out: dict[str, Any] = {"id": sid}
    for key, value in row.items():
        if key == "id" or value is None:
            continue
        if key in _NUMERIC_SESSION_FIELDS:
            number = _as_number(value)
            if number is None:
                notes.append(f"{key} {type(value).__name__} is not a number (left empty)")
                continue
            out[key] = int(number) if key.endswith(("_tokens", "_count")) else number
            continue
        if isinstance(value, (int, float)) and key.endswith(("_tokens", "_count")):
            out[key] = value
            continue
        text, problem = _as_text(value)
        if problem:
            notes.append(f"{key} {problem} (left empty)")
            continue
        out[key] = text
    return out, notes


def _clean_message(
    row: dict[str, Any], previous_ts: float | None
) -> tuple[dict[str, Any] | None, list[str], str | None]:
    """(message, repairs, error): the message ready for the archive, or the reason it is not."""
    repairs: list[str] = []
    role, problem = _as_text(row.get("role"))
    if problem or not role or not role.strip():
        what = problem or ("is empty" if role is not None else "is missing (NULL)")
        return None, repairs, f"its role {what}"
    msg: dict[str, Any] = {"role": role}
    for key in _TEXT_MESSAGE_FIELDS_ALL:
        if key not in row:
            continue
        value = row[key]
        text, problem = _as_text(value)
        if problem:
            if key == "content":
                return None, repairs, f"its content {problem}"
            repairs.append(f"{key} {problem} (left empty)")
        elif value is not None and not isinstance(value, str):
            repairs.append(f"{key} was {type(value).__name__}, kept as text")
        msg[key] = text
    for key in _INT_MESSAGE_FIELDS:
        if key not in row or row[key] is None:
            continue
        number = _as_number(row[key])
        if number is None or number != int(number):
            repairs.append(f"{key} {type(row[key]).__name__} is not an integer (left empty)")
            continue
        msg[key] = int(number)
    ts = _as_number(row.get("timestamp"))
    if ts is None:
        if previous_ts is None:
            return None, repairs, "its timestamp is missing or not a number"
        repairs.append("timestamp missing or not a number: the previous message's was used")
        ts = previous_ts
    msg["timestamp"] = ts
    return msg, repairs, None


# --------------------------------------------------------------------------- reading


def _message_filter(cols: frozenset[str]) -> str:
    """SQL predicate selecting the rows to import (v23+ hidden UI rows excluded)."""
    clauses = []
    if "display_kind" in cols:
        clauses.append("coalesce(display_kind, '') <> 'hidden'")
    return " AND ".join(clauses) if clauses else "1"


class _SessionMessages:
    """Re-iterable, batched reader of one session's messages (ids in ``(after, upto]``).

    Bad rows are reported and left out; the source's stamp is checked once the last row was
    read (inside the archive's transaction, so a torn read is never committed).
    """

    def __init__(
        self,
        src: _Source,
        session_id: Any,
        fields: tuple[str, ...],
        where: str,
        after: int,
        upto: int,
        on_batch: Callable[[int], None],
        report: ImportReport,
    ) -> None:
        self._src = src
        self._session_id = session_id
        self._fields = ("id", *fields)
        self._sql = (
            f"SELECT {', '.join(self._fields)} FROM messages"  # noqa: S608 (whitelisted names)
            f" WHERE session_id = ? AND id > ? AND id <= ? AND {where} ORDER BY id"
        )
        self._after = after
        self._upto = upto
        self._on_batch = on_batch
        self._report = report
        self.count = 0
        self.failed = 0
        self.masked = 0
        self.last_id = after
        self.errors: list[str] = []
        self.repairs: list[str] = []

    def __iter__(self) -> Iterator[dict[str, Any]]:
        self.count = self.failed = self.masked = 0
        self.last_id = self._after
        self.errors, self.repairs = [], []
        previous_ts: float | None = None
        self._src.budget.arm()
        cur = self._src.conn.execute(self._sql, (self._session_id, self._after, self._upto))
        try:
            while True:
                self._src.budget.arm()
                rows = cur.fetchmany(_BATCH)
                if not rows:
                    break
                for raw in rows:
                    row = dict(zip(self._fields, raw, strict=True))
                    source_id = row.pop("id")
                    if isinstance(source_id, int):
                        self.last_id = max(self.last_id, source_id)
                    msg, repairs, error = _clean_message(row, previous_ts)
                    where = f"session {self._session_id}, message {source_id}"
                    self.repairs.extend(f"{where}: {r}" for r in repairs)
                    if msg is None:
                        self.failed += 1
                        self.errors.append(f"{where}: not imported: {error}")
                        continue
                    previous_ts = msg["timestamp"]
                    self.count += 1
                    if _mask_secrets(msg):
                        self.masked += 1
                    yield msg
                self._on_batch(len(rows))
        finally:
            cur.close()
        self._src.check_unchanged()


def _mask_secrets(msg: dict[str, Any]) -> bool:
    """Mask credentials in a message's text fields in place; True when something changed.

    Another program's history enters the archive here, and the archive feeds prompts
    (``session_search``), so it gets the same scrubbing as live turns: the archives' own
    (`message_rows.scrub_messages`, which also reads tool calls stored as JSON text).
    """
    masked = scrub_messages([msg])[0]
    if masked is msg:
        return False
    msg.update(masked)
    return True


def _mask_title(title: str) -> str:
    """``title`` with credentials masked (`hermes_memory_core.scrub_secrets`)."""
    from hermes_memory_core import scrub_secrets  # the rule set loads on first use

    masked = scrub_secrets(title)
    return masked if isinstance(masked, str) else title


def _session_order(conn: sqlite3.Connection) -> list[tuple[Any, Any]]:
    """All (id, parent_session_id) pairs, parents before children, else by start time."""
    has_parent = "parent_session_id" in _columns(conn, "sessions")
    parent_sql = "parent_session_id" if has_parent else "NULL"
    rows = conn.execute(f"SELECT id, {parent_sql} FROM sessions ORDER BY started_at, id").fetchall()  # noqa: S608
    ids = {r[0] for r in rows}
    children: dict[Any, list[tuple[Any, Any]]] = {}
    roots: list[tuple[Any, Any]] = []
    for sid, parent in rows:
        if parent is not None and parent in ids and parent != sid:
            children.setdefault(parent, []).append((sid, parent))
        else:
            roots.append((sid, parent))
    ordered: list[tuple[Any, Any]] = []
    seen: set[Any] = set()
    stack = list(reversed(roots))
    while stack:
        item = stack.pop()
        if item[0] in seen:
            continue
        seen.add(item[0])
        ordered.append(item)
        stack.extend(reversed(children.get(item[0], [])))
    # Members of a parent cycle are reachable from no root: append them in start order.
    ordered.extend((s, p) for s, p in rows if s not in seen)
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
    store: SessionArchive,
    *,
    progress: ProgressCallback | None = None,
    skip_existing: bool = True,
    source_key: str | None = None,
    step_budget_s: float = STEP_BUDGET_S,
    time_budget_s: float | None = None,
) -> ImportReport:
    """Import what is new in a Hermes ``state.db`` into ``store`` (all of it the first time).

    :param source_path: the Hermes database (``~`` is expanded), e.g. ``~/.hermes/state.db``.
        It is only ever read; see :func:`open_source_readonly` for how.
    :param store: the destination archive.
    :param progress: optional ``progress(done, total)`` callback, ``total`` being the number of
        source messages this run looks at; called once at the start, after every batch of
        1,000 messages and at the end.
    :param skip_existing: sessions whose id is already in the archive (and were not created by
        an earlier import of this file) are left untouched and listed in
        :attr:`ImportReport.sessions_skipped`. With ``False`` the import refuses to start
        if any such id exists.
    :param source_key: the name under which the archive remembers this source for the next
        run (default: the file's resolved path). Give the original's key when importing
        a copy of it.
    :param step_budget_s: longest any single read of the source may take.
    :param time_budget_s: stop starting new sessions once the run has taken this long (the
        session in progress finishes); the report says ``incomplete`` and the watermark is
        not advanced, so the next run picks up the rest. None: no limit.

    Sessions keep their id, title, lineage, source, model, start/end times, end reason and
    every other column the archive knows (token and cost counters, ``model_config``, the
    system prompt — resolved from v25+ ``system_prompts`` — ...); message and tool-call
    counts are recomputed. Messages keep role, content, tool fields, timestamps, reasoning,
    ``active``/``compacted`` flags and order. Each session is written in one transaction,
    parents before children; messages are read in batches of 1,000 (constant memory).

    :raises HermesImportError: the file is missing, not SQLite, not a Hermes database, damaged,
        or a read ran past ``step_budget_s`` (sessions committed before that stay imported
        and are not imported twice by the next run).
    :raises ValueError: ``skip_existing=False`` and some session ids already exist.
    """
    path = Path(source_path).expanduser()
    key = source_key or str(path.resolve() if path.exists() else path)
    avoid_immutable = False
    restarted = 0
    deadline = None if time_budget_s is None else time.monotonic() + time_budget_s
    for _attempt in range(_RESTARTS + 1):
        src = _open(path, step_budget_s, avoid_immutable=avoid_immutable)
        try:
            report = _import(src, path, key, store, progress, skip_existing, deadline)
            if restarted:
                report.warnings.insert(
                    0,
                    f"the file changed while it was read without locks (Hermes started?);"
                    f" read again ({report.read_mode}); sessions committed before that are"
                    " counted as skipped",
                )
            return report
        except _SourceChanged:
            restarted += 1
            # A writer appeared while we read without locks: start again (what was committed
            # stays and is not repeated). If it keeps happening, read a private snapshot.
            avoid_immutable = _attempt >= _RESTARTS - 1
            continue
        except sqlite3.OperationalError as exc:
            if "interrupted" in str(exc):
                raise HermesImportError(
                    f"{path}: a read of the source took longer than {step_budget_s:g} s and"
                    " was stopped (a crafted or enormous table?); what was imported before"
                    " stays"
                ) from exc
            raise HermesImportError(f"{path}: cannot be read ({exc})") from exc
        except sqlite3.DatabaseError as exc:
            raise HermesImportError(
                f"{path}: the database is damaged or unreadable ({exc})"
            ) from exc
        finally:
            src.close()
    raise HermesImportError(f"{path}: the file kept changing while it was read")  # unreachable


def _import(
    src: _Source,
    path: Path,
    key: str,
    store: SessionArchive,
    progress: ProgressCallback | None,
    skip_existing: bool,
    deadline: float | None = None,
) -> ImportReport:
    conn = src.conn
    src.budget.arm()
    layout = detect_layout(conn, name=str(path))
    report = ImportReport(
        source=str(path), layout=layout.name, schema_version=layout.schema_version
    )
    report.read_mode = src.mode
    session_fields = tuple(sorted(layout.session_columns - SESSION_RECOMPUTED - {"id"}))
    message_fields = tuple(f for f in MESSAGE_FIELDS if f in layout.message_columns)
    where = _message_filter(layout.message_columns)

    # One upper bound for the whole run: a consistent cut of an append-only id sequence.
    src.budget.arm()
    high = conn.execute("SELECT max(id) FROM messages").fetchone()[0]
    high = high if isinstance(high, int) else 0
    watermark, owned = store.import_state(key)
    if watermark > high:
        report.warnings.append(
            f"the source's newest message id ({high}) is below what an earlier import saw"
            f" ({watermark}): it is a different or rebuilt file; importing it as new"
            " (sessions the archive already has are skipped)"
        )
        store.forget_import_source(key)
        watermark, owned = 0, {}

    prompts = bool(
        conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'system_prompts'"
        ).fetchone()
    )
    src.budget.arm()
    order = _session_order(conn)
    report.sessions_total = len(order)

    def counts_up_to_high(after: int | None) -> dict[Any, int]:
        """Messages per session that the import takes, ids ``<= high`` (and ``> after``)."""
        bounds, params = (
            ("id <= ?", [high]) if after is None else ("id > ? AND id <= ?", [after, high])
        )
        src.budget.arm()
        return {
            r[0]: int(r[1])
            for r in conn.execute(
                f"SELECT session_id, count(*) FROM messages WHERE {bounds} AND {where}"  # noqa: S608
                " GROUP BY session_id",
                params,
            )
        }

    per_session = counts_up_to_high(None)
    fresh = counts_up_to_high(watermark)
    total = sum(fresh.values())
    if watermark == 0:
        src.budget.arm()
        every = int(
            conn.execute("SELECT count(*) FROM messages WHERE id <= ?", (high,)).fetchone()[0]
        )
        report.messages_excluded = every - sum(per_session.values())

    existing = [
        sid
        for sid, _ in order
        if sid not in owned and isinstance(sid, str) and store.get_session(sid)
    ]
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

    select_session = f"SELECT {', '.join(('id', *session_fields))} FROM sessions WHERE id = ?"  # noqa: S608
    for raw_sid, parent in order:
        if deadline is not None and time.monotonic() > deadline:
            report.incomplete = True  # the watermark stays: the next run continues here
            break
        sid, problem = _clean_id(raw_sid)
        if sid is None:
            report.sessions_failed += 1
            report.messages_failed += per_session.get(raw_sid, 0)
            report.error(
                f"session {raw_sid!r}: not imported ({per_session.get(raw_sid, 0)} messages):"
                f" {problem}"
            )
            tick(fresh.get(raw_sid, 0))
            continue
        if sid in skip:
            report.sessions_skipped.append(sid)
            report.messages_skipped += per_session.get(raw_sid, 0)
            tick(fresh.get(raw_sid, 0))
            continue
        if sid in owned:
            _append_new(
                src,
                store,
                key,
                raw_sid,
                sid,
                owned[sid],
                high,
                select_session,
                session_fields,
                message_fields,
                where,
                report,
                per_session,
                tick,
            )
            continue
        src.budget.arm()
        row = conn.execute(select_session, (raw_sid,)).fetchone()
        session, notes = _clean_session(dict(zip(("id", *session_fields), row, strict=True)), sid)
        report.warnings.extend(f"session {sid}: {n}" for n in notes)
        if not session.get("source"):
            session["source"] = "cli"
        parent_id = parent if isinstance(parent, str) else None
        if (
            parent_id is not None
            and parent_id not in {s for s, _ in order}
            and (store.get_session(parent_id) is None)
        ):
            report.warnings.append(
                f"session {sid}: parent {parent_id} is in neither the source nor the archive"
                " (link kept; lineage stops there)"
            )
        if not session.get("system_prompt") and session.get("system_prompt_hash") and prompts:
            src.budget.arm()
            found = conn.execute(
                "SELECT prompt FROM system_prompts WHERE hash = ?",
                (session["system_prompt_hash"],),
            ).fetchone()
            if found is not None and isinstance(found[0], str):
                session["system_prompt"] = found[0]
        # progress is reported per batch from inside the reader; roll it back on retry
        start_done = done
        messages = _SessionMessages(src, raw_sid, message_fields, where, 0, high, tick, report)
        attempt = 0
        if isinstance(session.get("title"), str):
            # Titles are shown to the model (browse) like messages: masked the same way.
            session["title"] = _mask_title(session["title"])
        original_title = session.get("title")
        try:
            while True:
                try:
                    store.import_session(session, messages, import_source=key, source_last_id=high)
                    break
                except ValueError as exc:
                    if not (original_title and _is_title_conflict(exc)) or attempt >= 20:
                        raise
                    attempt += 1
                    done = start_done
                    session["title"] = _free_title(str(original_title), attempt)
        except ValueError as exc:
            report.sessions_failed += 1
            report.messages_failed += per_session.get(raw_sid, 0)
            report.error(f"session {sid}: not imported: {exc}")
            continue
        if attempt:
            report.warnings.append(
                f"session {sid}: title {original_title!r} is already used in the archive;"
                f" imported as {session['title']!r}"
            )
        report.sessions_imported += 1
        report.add_messages(messages)
    if report.incomplete:
        report.watermark = watermark
        return report
    store.set_import_watermark(
        key, high, sessions=report.sessions_imported, messages=report.messages_imported
    )
    report.watermark = high
    if progress is not None and done != total:
        progress(total, total)
    return report


def _append_new(
    src: _Source,
    store: SessionArchive,
    key: str,
    raw_sid: Any,
    sid: str,
    last_id: int,
    high: int,
    select_session: str,
    session_fields: tuple[str, ...],
    message_fields: tuple[str, ...],
    where: str,
    report: ImportReport,
    per_session: dict[Any, int],
    tick: Callable[[int], None],
) -> None:
    """A session an earlier run imported: append its newer messages and record its end."""
    src.budget.arm()
    row = src.conn.execute(select_session, (raw_sid,)).fetchone()
    end: dict[str, Any] = {}
    if row is not None:
        current, _notes = _clean_session(dict(zip(("id", *session_fields), row, strict=True)), sid)
        end = {k: current[k] for k in ("ended_at", "end_reason") if current.get(k) is not None}
    messages = _SessionMessages(src, raw_sid, message_fields, where, last_id, high, tick, report)
    changed = store.import_more(sid, messages, import_source=key, source_last_id=high, **end)
    report.add_messages(messages)
    already = per_session.get(raw_sid, 0) - messages.count - messages.failed
    if changed:
        report.sessions_updated += 1
        report.messages_skipped += max(already, 0)
    else:
        report.sessions_skipped.append(sid)
        report.messages_skipped += max(already, 0)
