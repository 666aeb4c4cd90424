"""`SessionStore`: every message of every session in one SQLite file.

Public API (stable; importers and the CLI build on it)::

    store = SessionStore(path, *, busy_timeout_ms=5000, write_budget_s=60.0, read_budget_s=5.0,
                         journal_mode="wal", read_only=None)
        # HermesDatabaseError (a sqlite3.DatabaseError) when path is Hermes' own state.db

    # sessions
    store.create_session(session_id, *, source="cli", model=None, parent_session_id=None,
                         title=None, started_at=None) -> str   # idempotent (existing id: no-op)
    store.end_session(session_id, end_reason) -> bool          # first writer wins
    store.set_title(session_id, title) -> str | None           # sanitised; None clears
    store.get_session(session_id) -> dict | None               # every stored column
    store.resolve_session_id(id_or_unique_prefix) -> str | None
    store.list_sessions(*, source=None, exclude_sources=None, limit=None, offset=0,
                        order="started_desc") -> list[dict]
        # order: "started_desc" (newest first), "started_asc", or "last_active"
        # (COALESCE(last_activity_at, started_at) DESC); ties broken by id
    store.iter_sessions() -> Iterator[dict]                    # started_at ASC, id ASC
    store.delete_session(session_id) -> bool                   # children are orphaned
    store.prune(older_than_days) -> int                        # ended sessions only
    store.end_stale_sessions(older_than_hours) -> list[str]    # left open by a crash
    store.count_open_sessions(older_than_days=None) -> int
    store.lineage_root(session_id) -> str

    # messages
    store.append_message(session_id, role, content, *, tool_name=None, tool_calls=None,
                         tool_call_id=None, timestamp=None) -> int
    store.append_messages(session_id, messages: Iterable[Mapping]) -> list[int]
        # one transaction; keys role, content, tool_name, tool_calls, tool_call_id, timestamp
    store.import_session(session: Mapping, messages: Iterable[Mapping], *,
                         keep_ids=False, import_source=None, source_last_id=None) -> str
        # one transaction: the session row with all given columns (id, source, model, title,
        # parent_session_id, started_at, ended_at, end_reason, counters, ...) and its
        # messages in order with their timestamps; ValueError if the id already exists
    store.import_more(session_id, messages, *, import_source, source_last_id,
                      ended_at=None, end_reason=None) -> bool   # incremental imports
    store.import_state(source) -> (watermark, {session_id: last source message id})
    store.set_import_watermark(source, message_id, *, sessions=0, messages=0)
    store.forget_import_source(source)
    store.get_messages(session_id) -> list[dict]               # all stored columns, id order
    store.tail_messages(session_id, n) -> list[dict]            # the last n, id order
    store.get_messages_around(session_id, anchor_id, window) -> dict
    store.get_anchored_view(session_id, anchor_id, window=5, bookend=3,
                            keep_roles=("user", "assistant")) -> dict

    # search / maintenance
    store.search_messages(query, *, role_filter=None, source_filter=None,
                          exclude_sources=None, limit=20, offset=0, sort=None,
                          include_inactive=False, any_terms=False,
                          with_context=True) -> list[dict]
    store.stats() -> dict   # sessions, messages, db_size_bytes, text_bytes, journal_mode
    store.index_sizes() -> dict   # bytes per full-text index
    store.optimize()        # merge the full-text indexes (after a large import)
    store.close()

Message dicts use Hermes' column names: ``id, session_id, role, content, tool_call_id,
tool_calls, tool_name, timestamp, token_count, finish_reason, reasoning, active,
compacted``. `get_messages` returns ``tool_calls`` as stored (JSON text); the anchored views
return it decoded to a list. ``tool_calls`` may be given as a list/dict (stored as JSON) or
as already-encoded JSON text.

Every writer runs in ``BEGIN IMMEDIATE`` with a bounded retry (jittered backoff within
``write_budget_s``), so several processes can append at once without losing rows or
surfacing "database is locked". One store may be shared by threads (a lock serialises use).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from hermes_memory_sessions import hermesdb, schema
from hermes_memory_sessions.archive_vectors import ArchiveVectors
from hermes_memory_sessions.cjk import cjk_index_text
from hermes_memory_sessions.sqlite_reads import SqliteArchiveReads

__all__ = [
    "STALE_END_REASON",
    "TITLE_MAX_CHARS",
    "ArchiveReadOnly",
    "SessionStore",
    "sanitize_title",
]

#: ``end_reason`` written by `SessionStore.end_stale_sessions`.
STALE_END_REASON = "stale"


class ArchiveReadOnly(sqlite3.OperationalError):
    """A write was asked of an archive opened read-only (its file or directory is not
    writable); reads keep working."""


T = TypeVar("T")

#: Longest title accepted after sanitising.
TITLE_MAX_CHARS = 100
#: The archive's FTS5 tables.
FTS_TABLES = ("hm_fts_words", "hm_fts_tools", "hm_fts_cjk")
#: Messages written between two incremental index merges, and the pages merged each time.
MERGE_EVERY = 1000
MERGE_PAGES = 500

_MESSAGE_FIELDS = (
    "id",
    "session_id",
    "role",
    "content",
    "tool_call_id",
    "tool_calls",
    "tool_name",
    "timestamp",
    "token_count",
    "finish_reason",
    "reasoning",
    "active",
    "compacted",
    "effect_disposition",
    "reasoning_content",
    "reasoning_details",
    "codex_reasoning_items",
    "codex_message_items",
    "platform_message_id",
    "observed",
    "api_content",
)
#: Message columns a caller (or an importer) supplies: every stored field but the two keys.
MESSAGE_DATA_FIELDS = tuple(f for f in _MESSAGE_FIELDS if f not in ("id", "session_id"))
_INVISIBLE = {
    "\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u2060", "\ufeff", "\ufffc",
    "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",
    "\u2066", "\u2067", "\u2068", "\u2069",
}  # fmt: skip


#: Title provenance and its rank: an automatic title never replaces one of equal or higher
#: rank; a title with no recorded provenance counts as the user's.
TITLE_SOURCES: dict[str, int] = {
    "derived": 0,
    "branch_fallback": 0,
    "llm": 1,
    "branch": 1,
    "user": 2,
}
_NUMBERED_TITLE = re.compile(r"^(.*?) #(\d+)$")


def _next_title_in_lineage(conn: sqlite3.Connection, title: str) -> str:
    match = _NUMBERED_TITLE.match(title)
    base = match.group(1) if match else title
    escaped = base.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    taken = [
        str(r[0])
        for r in conn.execute(
            "SELECT title FROM sessions WHERE title = ? OR title LIKE ? ESCAPE '\\'",
            (base, f"{escaped} #%"),
        )
    ]
    if not taken:
        return base
    numbers = [1]
    for existing in taken:
        numbered = _NUMBERED_TITLE.match(existing)
        if numbered and numbered.group(1) == base:
            numbers.append(int(numbered.group(2)))
    return f"{base} #{max(numbers) + 1}"


def _is_compression_ancestor(conn: sqlite3.Connection, holder: str, session_id: str) -> bool:
    """Whether ``holder`` is reached from ``session_id`` through compression hops only."""
    current, seen = session_id, {session_id}
    for _ in range(1000):
        row = conn.execute(
            "SELECT p.id, p.end_reason FROM sessions c JOIN sessions p"
            " ON p.id = c.parent_session_id WHERE c.id = ?",
            (current,),
        ).fetchone()
        if row is None or row[1] != "compression" or row[0] in seen:
            return False
        if row[0] == holder:
            return True
        current = str(row[0])
        seen.add(current)
    return False


def sanitize_title(title: str | None) -> str | None:
    """Clean a session title; None for an empty result.

    Removes control characters (whitespace kept), zero-width / bidi / object-replacement
    code points and lone surrogates, collapses whitespace and trims. Raises ValueError when
    the result is longer than `TITLE_MAX_CHARS`.
    """
    if title is None:
        return None
    chars = []
    for ch in str(title):
        if ch in _INVISIBLE or 0xD800 <= ord(ch) <= 0xDFFF:
            continue
        if unicodedata.category(ch) == "Cc" and not ch.isspace():
            continue
        chars.append(ch)
    cleaned = " ".join("".join(chars).split())
    if not cleaned:
        return None
    if len(cleaned) > TITLE_MAX_CHARS:
        raise ValueError(f"Title too long ({len(cleaned)} chars, max {TITLE_MAX_CHARS})")
    return cleaned


def _encode_json(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _encode_content(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _count_tool_calls(encoded: str | None) -> int:
    if not encoded:
        return 0
    try:
        value = json.loads(encoded)
    except ValueError:
        return 1
    return len(value) if isinstance(value, list) else 1


def cjk_document(role: Any, content: Any, tool_calls: Any) -> str | None:
    """The CJK-index document of one message (None when it contains no CJK)."""
    text = content if isinstance(content, str) else ""
    if role == "tool":
        text = text[: schema.TOOL_INDEX_PREFIX]
    if isinstance(tool_calls, str) and tool_calls:
        text = f"{text}\n{tool_calls}"
    return cjk_index_text(text)


class SessionStore(SqliteArchiveReads, ArchiveVectors):
    """The session archive over one SQLite file (see the module docstring for the API).

    Args:
        path: database file; created with mode 0600 (parent directories too).
        busy_timeout_ms: SQLite busy timeout per attempt.
        write_budget_s: total time a write keeps retrying a locked database before it
            raises ``sqlite3.OperationalError``.
        read_budget_s: about the longest a read waits for a locked database (or for a write
            of this store in another thread) before it raises `schema.ArchiveBusy` (a
            ``sqlite3.OperationalError``); reads answer tools inside the agent's turn.
        journal_mode: ``"wal"`` (default; falls back to ``"delete"`` where WAL cannot
            work) or ``"delete"``. The mode in effect is `journal_mode` on the instance.
        read_only: ``True`` opens for reading only (nothing is created or written; writes
            raise `ArchiveReadOnly`); ``None`` (default) does so when the file exists and it or
            its directory is not writable (a read-only home), else opens for writing.
        embedder: an embedder (``hermes_memory_vectors.Embedder``) for hybrid recall: new
            messages are embedded by a background thread, ``discover_messages`` and
            ``session_search`` fuse dense similarity with the lexical ranking, and
            ``embed_pending()`` backfills (see `hermes_memory_sessions.vectors`). ``None``
            (default): lexical search only.
        embed_in_background: with an embedder, start the background embedding thread
            (``False``: only ``embed_pending`` embeds).

    Raises:
        hermesdb.HermesDatabaseError: ``path`` is Hermes Agent's own ``state.db`` (the archive
            is a file of its own; import Hermes' sessions with ``import_hermes_db``).
        sqlite3.OperationalError: a read-only archive too old to read, or not readable.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        busy_timeout_ms: int = 5000,
        write_budget_s: float = 60.0,
        read_budget_s: float = 5.0,
        journal_mode: str = "wal",
        read_only: bool | None = None,
        embedder: Any = None,
        embed_in_background: bool = True,
    ) -> None:
        self.path = Path(path).expanduser()
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
                with self._write() as conn:
                    schema.migrate(conn)
            if embedder is not None:
                self._attach_embedder(embedder, background=embed_in_background)
        except BaseException:
            self._conn.close()
            self._conn = None
            raise

    # ------------------------------------------------------------------ plumbing

    @property
    def conn(self) -> sqlite3.Connection:
        """The underlying connection (for read queries by `hermes_memory_sessions.search`)."""
        if self._conn is None:
            raise sqlite3.ProgrammingError("SessionStore is closed")
        return self._conn

    @contextlib.contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """Serialise a read against other threads using this store.

        :raises schema.ArchiveBusy: another thread's write held the store past the read budget.
        """
        if not self._lock.acquire(timeout=self._read_budget):
            raise schema.ArchiveBusy(
                f"the session archive is busy with a write (gave up after {self._read_budget:g} s)"
            )
        try:
            yield self.conn
        finally:
            self._lock.release()

    def read_with(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run ``fn(connection, *args, **kwargs)`` for a read, serialised against threads."""
        with self.read() as conn:
            return fn(conn, *args, **kwargs)

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
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
                self._drain_cjk(conn)
                self._commit(conn, deadline)
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            self._writes += 1
            if self._unmerged >= MERGE_EVERY:
                self._unmerged = 0
                self._merge_step(conn)
            if self._writes % 50 == 0 and self.journal_mode == "wal":
                with contextlib.suppress(sqlite3.OperationalError):
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def _merge_step(self, conn: sqlite3.Connection) -> None:
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

    def optimize(self) -> None:
        """Merge every full-text index into a single segment (fastest lookups).

        Worth running after a large import; takes seconds per 100 MB of index and holds the
        write lock meanwhile (other writers wait and retry).
        """
        for table in FTS_TABLES:
            with self._write() as conn:
                conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")  # noqa: S608

    @staticmethod
    def _commit(conn: sqlite3.Connection, deadline: float) -> None:
        while True:
            try:
                conn.execute("COMMIT")
                return
            except sqlite3.OperationalError as exc:
                if not _is_locked(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(_jitter(0.02, 0.15))

    @staticmethod
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
                            "INSERT INTO hm_fts_cjk(hm_fts_cjk, rowid, grams)"
                            " VALUES ('delete', ?, ?)",
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

    def close(self) -> None:
        """Checkpoint (passive) and close the connection; safe to call twice."""
        self._close_vectors()
        with self._lock:
            if self._conn is None:
                return
            if self.journal_mode == "wal" and not self.read_only:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            self._conn.close()
            self._conn = None
            if not self.read_only:
                schema.tighten_permissions(self.path)

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ sessions

    def create_session(
        self,
        session_id: str,
        *,
        source: str = "cli",
        model: str | None = None,
        parent_session_id: str | None = None,
        title: str | None = None,
        started_at: float | None = None,
    ) -> str:
        """Create a session row (no-op if ``session_id`` already exists); returns the id.

        ``title`` is sanitised and must be unique (ValueError otherwise). ``started_at``
        defaults to now (epoch seconds). A continuation of a titled session that compression
        ended gets the next numbered title of the lineage (``"x"`` → ``"x #2"``) unless a
        title is given, with the parent's title provenance.
        """
        session_id = _check_id(session_id)
        clean = sanitize_title(title)
        provenance = "user" if clean is not None else None
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                return session_id
            if clean is None and parent_session_id:
                parent = conn.execute(
                    "SELECT title, title_source, end_reason FROM sessions WHERE id = ?",
                    (parent_session_id,),
                ).fetchone()
                if parent and parent[0] and parent[2] == "compression":
                    clean = _next_title_in_lineage(conn, str(parent[0]))
                    provenance = parent[1] or "user"
            if clean is not None:
                self._check_title_free(conn, clean, session_id)
            conn.execute(
                "INSERT INTO sessions(id, source, model, parent_session_id, title, title_source,"
                " started_at, last_activity_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
                (
                    session_id,
                    source or "cli",
                    model,
                    parent_session_id or None,
                    clean,
                    provenance,
                    float(started_at) if started_at is not None else time.time(),
                ),
            )
        return session_id

    def get_next_title_in_lineage(self, title: str) -> str:
        """The title for the next continuation: ``"x"`` → ``"x #2"`` → ``"x #3"``.

        A trailing `` #N`` of ``title`` is dropped to find the base; the base itself is
        returned while no session uses it or a numbered form of it (the unnumbered title
        counts as #1).
        """
        with self.read() as conn:
            return _next_title_in_lineage(conn, title)

    @staticmethod
    def _check_title_free(conn: sqlite3.Connection, title: str, session_id: str) -> None:
        """Refuse a title in use, except by a compression ancestor: it moves to the heir."""
        row = conn.execute(
            "SELECT id FROM sessions WHERE title = ? AND id != ?", (title, session_id)
        ).fetchone()
        if row is None:
            return
        if _is_compression_ancestor(conn, str(row[0]), session_id):
            conn.execute("UPDATE sessions SET title = NULL WHERE id = ?", (row[0],))
            return
        raise ValueError(f"Title '{title}' is already in use by session {row[0]}")

    def end_session(self, session_id: str, end_reason: str) -> bool:
        """Mark a session ended; the first writer wins. True if this call ended it."""
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ?"
                " WHERE id = ? AND ended_at IS NULL",
                (time.time(), end_reason, session_id),
            )
            return cur.rowcount > 0

    def set_title(self, session_id: str, title: str | None, *, source: str = "user") -> str | None:
        """Set (or with None/blank, clear) a session's title; returns the title now stored.

        ``source`` is the title's provenance (`TITLE_SOURCES`): ``"user"`` always wins; an
        automatic title (``"derived"``, ``"llm"``, ``"branch"``, ``"branch_fallback"``) lands
        only on an untitled session or over a title of lower rank, so it never overwrites a
        user's (the stored title is returned unchanged then). A title held by a compression
        ancestor moves to this session (the ancestor's becomes NULL).

        Raises ValueError for an unknown session or provenance, a too-long title, or a
        title already in use by another conversation.
        """
        if source not in TITLE_SOURCES:
            raise ValueError(f"title source must be one of {sorted(TITLE_SOURCES)}")
        clean = sanitize_title(title)
        with self._write() as conn:
            row = conn.execute(
                "SELECT title, title_source FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                raise ValueError(f"session_id not found: {session_id}")
            held = TITLE_SOURCES.get(row[1] or "user", TITLE_SOURCES["user"])
            if source != "user" and row[0] is not None and held >= TITLE_SOURCES[source]:
                return str(row[0])
            if clean is not None:
                self._check_title_free(conn, clean, session_id)
            conn.execute(
                "UPDATE sessions SET title = ?, title_source = ? WHERE id = ?",
                (clean, source if clean is not None else None, session_id),
            )
        return clean

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """Every stored column of one session, or None."""
        with self.read() as conn:
            row = conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return dict(row) if row else None

    def resolve_session_id(self, id_or_prefix: str) -> str | None:
        """Full id for an exact id or a *unique* prefix; None when unknown or ambiguous.

        Raises ValueError for an id containing NUL or another control character (SQLite's
        ``LIKE`` would stop at a NUL and match a shorter prefix).
        """
        if not id_or_prefix:
            return None
        _check_id(id_or_prefix)
        with self.read() as conn:
            if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (id_or_prefix,)).fetchone():
                return id_or_prefix
            esc = id_or_prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            rows = conn.execute(
                "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 2", (esc + "%",)
            ).fetchall()
        return str(rows[0][0]) if len(rows) == 1 else None

    def list_sessions(
        self,
        *,
        source: str | None = None,
        exclude_sources: Sequence[str] | None = None,
        limit: int | None = None,
        offset: int = 0,
        order: str = "started_desc",
    ) -> list[dict[str, Any]]:
        """Sessions with every stored column plus ``last_active``.

        ``order``: ``"started_desc"`` (default, newest first), ``"started_asc"``, or
        ``"last_active"`` (most recently active first); ties are broken by id.
        """
        orders = {
            "started_desc": "started_at DESC, id DESC",
            "started_asc": "started_at ASC, id ASC",
            "last_active": "COALESCE(last_activity_at, started_at) DESC, id DESC",
        }
        if order not in orders:
            raise ValueError(f"order must be one of {sorted(orders)}")
        where: list[str] = []
        params: list[Any] = []
        if source:
            where.append("source = ?")
            params.append(source)
        if exclude_sources:
            where.append(f"source NOT IN ({','.join('?' * len(exclude_sources))})")
            params.extend(exclude_sources)
        sql = "SELECT *, COALESCE(last_activity_at, started_at) AS last_active FROM sessions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY {orders[order]} LIMIT ? OFFSET ?"
        params.extend([-1 if limit is None else int(limit), int(offset)])
        with self.read() as conn:
            return [dict(r) for r in conn.execute(sql, params).fetchall()]

    def iter_sessions(self) -> Iterator[dict[str, Any]]:
        """Every session (all columns), oldest first (started_at ASC, id ASC), in pages."""
        last: tuple[float, str] | None = None
        while True:
            with self.read() as conn:
                if last is None:
                    rows = conn.execute(
                        "SELECT * FROM sessions ORDER BY started_at, id LIMIT 500"
                    ).fetchall()
                else:
                    rows = conn.execute(
                        "SELECT * FROM sessions WHERE (started_at, id) > (?, ?) "
                        "ORDER BY started_at, id LIMIT 500",
                        last,
                    ).fetchall()
            if not rows:
                return
            for r in rows:
                yield dict(r)
            last = (rows[-1]["started_at"], rows[-1]["id"])

    def lineage_root(self, session_id: str) -> str:
        """Walk ``parent_session_id`` to the top (cycle-safe; stops at a missing row)."""
        seen = {session_id}
        current = session_id
        with self.read() as conn:
            while True:
                row = conn.execute(
                    "SELECT parent_session_id FROM sessions WHERE id = ?", (current,)
                ).fetchone()
                parent = row[0] if row else None
                if not parent or parent in seen:
                    return current
                if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (parent,)).fetchone():
                    return current
                seen.add(parent)
                current = parent

    def delete_session(self, session_id: str) -> bool:
        """Delete a session, its messages and their index rows; children become roots.

        Returns False when the session does not exist.
        """
        with self._write() as conn:
            return self._delete(conn, session_id)

    @staticmethod
    def _delete(conn: sqlite3.Connection, session_id: str) -> bool:
        if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
            return False
        conn.execute(
            "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?",
            (session_id,),
        )
        conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
        conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        return True

    def prune(self, older_than_days: float) -> int:
        """Delete *ended* sessions that started more than ``older_than_days`` ago.

        Live sessions are never pruned. Returns how many sessions were deleted.
        """
        days = float(older_than_days)
        if days < 0:
            raise ValueError("older_than_days must be >= 0")
        cutoff = time.time() - days * 86400
        with self._write() as conn:
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM sessions WHERE ended_at IS NOT NULL AND started_at < ?",
                    (cutoff,),
                ).fetchall()
            ]
            for sid in ids:
                self._delete(conn, sid)
        return len(ids)

    def end_stale_sessions(self, older_than_hours: float) -> list[str]:
        """End sessions still open whose last activity is more than ``older_than_hours`` ago.

        For sessions left open by a host that crashed or was killed: each gets ``ended_at`` =
        its last activity (its last message, else its start) and ``end_reason`` =
        `STALE_END_REASON`, so `prune` can delete it once it is old enough. Returns the ids
        ended, oldest activity first.
        """
        hours = float(older_than_hours)
        if not hours >= 0:
            raise ValueError("older_than_hours must be a number >= 0")
        cutoff = time.time() - hours * 3600
        with self._write() as conn:
            rows = conn.execute(
                "SELECT id, COALESCE(last_activity_at, started_at) AS at FROM sessions"
                " WHERE ended_at IS NULL AND COALESCE(last_activity_at, started_at) < ?"
                " ORDER BY at, id",
                (cutoff,),
            ).fetchall()
            for row in rows:
                conn.execute(
                    "UPDATE sessions SET ended_at = ?, end_reason = ?"
                    " WHERE id = ? AND ended_at IS NULL",
                    (row["at"], STALE_END_REASON, row["id"]),
                )
        return [str(r["id"]) for r in rows]

    def count_open_sessions(self, older_than_days: float | None = None) -> int:
        """Sessions not ended (optionally only those started more than N days ago): what
        `prune` leaves alone; `end_stale_sessions` ends those abandoned by a crash."""
        sql = "SELECT COUNT(*) FROM sessions WHERE ended_at IS NULL"
        params: list[Any] = []
        if older_than_days is not None:
            sql += " AND started_at < ?"
            params.append(time.time() - float(older_than_days) * 86400)
        with self.read() as conn:
            return int(conn.execute(sql, params).fetchone()[0])

    # ------------------------------------------------------------------ messages

    def append_message(
        self,
        session_id: str,
        role: str,
        content: Any,
        *,
        tool_name: str | None = None,
        tool_calls: Any = None,
        tool_call_id: str | None = None,
        timestamp: float | None = None,
    ) -> int:
        """Append one message; returns its id (globally increasing).

        Raises ValueError when the session does not exist or ``role`` is empty.
        """
        return self.append_messages(
            session_id,
            [
                {
                    "role": role,
                    "content": content,
                    "tool_name": tool_name,
                    "tool_calls": tool_calls,
                    "tool_call_id": tool_call_id,
                    "timestamp": timestamp,
                }
            ],
        )[0]

    def append_messages(self, session_id: str, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        """Append many messages to one session in a single transaction; returns their ids."""
        with self._write() as conn:
            if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                raise ValueError(f"session_id not found: {session_id}")
            ids = self._insert_messages(conn, session_id, messages)
            self._unmerged += len(ids)
        self._notify_vectors(ids)
        return ids

    @staticmethod
    def _insert_messages(
        conn: sqlite3.Connection,
        session_id: str,
        messages: Iterable[Mapping[str, Any]],
        *,
        keep_ids: bool = False,
    ) -> list[int]:
        ids: list[int] = []
        live = 0  # Hermes' counters describe the live (active) conversation only
        tool_calls_total = 0
        last_ts: float | None = None
        now = time.time()
        for m in messages:
            role = m.get("role")
            if not isinstance(role, str) or not role.strip():
                raise ValueError("message role must be a non-empty string")
            values: dict[str, Any] = {k: m.get(k) for k in MESSAGE_DATA_FIELDS if k in m}
            values["role"] = role
            values["content"] = _encode_content(m.get("content"))
            values["tool_calls"] = _encode_json(m.get("tool_calls"))
            ts = m.get("timestamp")
            values["timestamp"] = float(ts) if ts is not None else now
            if values.get("active") is None:
                values.pop("active", None)
            if values.get("compacted") is None:
                values.pop("compacted", None)
            if keep_ids:
                values["id"] = m["id"]
            cols = ["session_id", *values]
            cur = conn.execute(
                f"INSERT INTO messages({','.join(cols)}) VALUES ({','.join('?' * len(cols))})",  # noqa: S608
                [session_id, *values.values()],
            )
            ids.append(int(cur.lastrowid or 0))
            last_ts = values["timestamp"] if last_ts is None else max(last_ts, values["timestamp"])
            if values.get("active", 1) in (0, False):
                continue
            live += 1
            if role == "assistant":
                tool_calls_total += _count_tool_calls(values["tool_calls"])
        if ids:
            conn.execute(
                "UPDATE sessions SET message_count = COALESCE(message_count, 0) + ?,"
                " tool_call_count = COALESCE(tool_call_count, 0) + ?,"
                " last_activity_at = MAX(COALESCE(last_activity_at, 0), ?) WHERE id = ?",
                (live, tool_calls_total, last_ts, session_id),
            )
        return ids

    def import_session(
        self,
        session: Mapping[str, Any],
        messages: Iterable[Mapping[str, Any]],
        *,
        keep_ids: bool = False,
        import_source: str | None = None,
        source_last_id: int | None = None,
    ) -> str:
        """Insert one complete session (row + messages) in one transaction; returns its id.

        ``session`` may carry any ``sessions`` column (unknown keys are ignored);
        ``started_at`` defaults to the first message's timestamp (or now), ``source`` to
        ``"cli"``. ``message_count``/``tool_call_count`` default to what was inserted.
        Messages keep their order, timestamps and stored fields. Their ``id`` is reassigned
        unless ``keep_ids`` is true: then each message's ``id`` is kept (an id already in the
        archive is a ValueError and nothing is imported; later appends get larger ids).
        With ``import_source`` the session is recorded, in the same transaction, as created
        by an import of that source, ``source_last_id`` being the last source message id it
        holds (see `import_more`).
        Raises ValueError when the session id already exists or a title is taken.
        """
        sid = _check_id(session.get("id"))
        msgs = list(messages)
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchone():
                raise ValueError(f"session {sid!r} already exists in the archive")
            columns = schema_columns(conn, "sessions")
            row = {k: v for k, v in session.items() if k in columns}
            row["id"] = sid
            row["source"] = row.get("source") or "cli"
            if row.get("started_at") is None:
                first = next((m.get("timestamp") for m in msgs if m.get("timestamp")), None)
                row["started_at"] = float(first) if first is not None else time.time()
            if row.get("title") is not None:
                row["title"] = sanitize_title(row["title"])
                if row["title"] is not None:
                    self._check_title_free(conn, row["title"], sid)
            given_count = row.pop("message_count", None)
            given_tools = row.pop("tool_call_count", None)
            given_activity = row.pop("last_activity_at", None)
            conn.execute(
                f"INSERT INTO sessions({','.join(row)}) VALUES ({','.join('?' * len(row))})",  # noqa: S608
                list(row.values()),
            )
            if keep_ids:
                wanted = [m.get("id") for m in msgs]
                if any(not isinstance(i, int) or isinstance(i, bool) for i in wanted):
                    raise ValueError("keep_ids=True needs an integer 'id' on every message")
                if len(set(wanted)) != len(wanted):
                    raise ValueError("duplicate message ids in the imported session")
                for chunk in range(0, len(wanted), 500):
                    part = wanted[chunk : chunk + 500]
                    taken = conn.execute(
                        f"SELECT id FROM messages WHERE id IN ({','.join('?' * len(part))})",  # noqa: S608
                        part,
                    ).fetchone()
                    if taken:
                        raise ValueError(f"message id {taken[0]} already exists in the archive")
            self._insert_messages(conn, sid, msgs, keep_ids=keep_ids)
            self._unmerged += len(msgs)
            updates = {
                "message_count": given_count,
                "tool_call_count": given_tools,
                "last_activity_at": given_activity,
            }
            sets = {k: v for k, v in updates.items() if v is not None}
            if sets:
                conn.execute(
                    f"UPDATE sessions SET {', '.join(f'{k} = ?' for k in sets)} WHERE id = ?",  # noqa: S608
                    [*sets.values(), sid],
                )
            if import_source is not None:
                self._record_import(conn, import_source, sid, source_last_id)
        return sid

    @staticmethod
    def _record_import(
        conn: sqlite3.Connection, source: str, session_id: str, last_id: int | None
    ) -> None:
        conn.execute(
            "INSERT INTO hm_import_sessions(source, session_id, last_message_id) VALUES (?, ?, ?)"
            " ON CONFLICT(source, session_id) DO UPDATE SET"
            " last_message_id = MAX(last_message_id, excluded.last_message_id)",
            (source, session_id, int(last_id or 0)),
        )

    def import_more(
        self,
        session_id: str,
        messages: Iterable[Mapping[str, Any]],
        *,
        import_source: str,
        source_last_id: int,
        ended_at: float | None = None,
        end_reason: str | None = None,
    ) -> bool:
        """Append messages that an import source added to a session it created earlier.

        One transaction: the messages (as `append_messages`), the session's end when the
        source has ended it and the archive has not, and the new ``source_last_id``. Returns
        True when anything changed. ValueError when the session is not in the archive.
        """
        with self._write() as conn:
            if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                raise ValueError(f"session_id not found: {session_id}")
            ids = self._insert_messages(conn, session_id, messages)
            self._unmerged += len(ids)
            changed = bool(ids)
            if ended_at is not None:
                cur = conn.execute(
                    "UPDATE sessions SET ended_at = ?, end_reason = COALESCE(?, end_reason)"
                    " WHERE id = ? AND ended_at IS NULL",
                    (float(ended_at), end_reason, session_id),
                )
                changed = changed or cur.rowcount > 0
            self._record_import(conn, import_source, session_id, source_last_id)
        return changed

    def import_state(self, source: str) -> tuple[int, dict[str, int]]:
        """What earlier imports of ``source`` did: ``(watermark, {session_id: last source
        message id})`` (``(0, {})`` for a source never imported)."""
        with self.read() as conn:
            row = conn.execute(
                "SELECT last_message_id FROM hm_import_sources WHERE source = ?", (source,)
            ).fetchone()
            sessions = {
                str(r[0]): int(r[1])
                for r in conn.execute(
                    "SELECT i.session_id, i.last_message_id FROM hm_import_sessions i"
                    " JOIN sessions s ON s.id = i.session_id WHERE i.source = ?",
                    (source,),
                )
            }
        return (int(row[0]) if row else 0), sessions

    def set_import_watermark(
        self, source: str, message_id: int, *, sessions: int = 0, messages: int = 0
    ) -> None:
        """Record that every message of ``source`` up to ``message_id`` has been looked at."""
        with self._write() as conn:
            conn.execute(
                "INSERT INTO hm_import_sources(source, last_message_id, imported_at, sessions,"
                " messages) VALUES (?, ?, ?, ?, ?) ON CONFLICT(source) DO UPDATE SET"
                " last_message_id = excluded.last_message_id,"
                " imported_at = excluded.imported_at,"
                " sessions = hm_import_sources.sessions + excluded.sessions,"
                " messages = hm_import_sources.messages + excluded.messages",
                (source, int(message_id), time.time(), int(sessions), int(messages)),
            )

    def forget_import_source(self, source: str) -> None:
        """Drop the bookkeeping of ``source`` (its sessions stay; a re-import skips them)."""
        with self._write() as conn:
            conn.execute("DELETE FROM hm_import_sources WHERE source = ?", (source,))
            conn.execute("DELETE FROM hm_import_sessions WHERE source = ?", (source,))

    def get_messages(self, session_id: str) -> list[dict[str, Any]]:
        """Every message of a session with all stored columns, in id order."""
        with self.read() as conn:
            rows = conn.execute(
                "SELECT * FROM messages WHERE session_id = ? ORDER BY id", (session_id,)
            ).fetchall()
        return [dict(r) for r in rows]

    def tail_messages(self, session_id: str, n: int) -> list[dict[str, Any]]:
        """The last ``n`` messages of a session (all stored columns), in id order.

        Reads only those rows (``ORDER BY id DESC LIMIT n``), however long the session is.
        """
        if n <= 0:
            return []
        with self.read() as conn:
            rows = conn.execute(
                "SELECT * FROM messages WHERE session_id = ? ORDER BY id DESC LIMIT ?",
                (session_id, int(n)),
            ).fetchall()
        return [dict(r) for r in reversed(rows)]

    def get_messages_around(self, session_id: str, anchor_id: int, window: int) -> dict[str, Any]:
        """Up to ``window`` messages before and after an anchor, ascending by id.

        Returns ``{"window": [...], "messages_before": n, "messages_after": m}``; the window
        is empty when the anchor is not a message of ``session_id``. ``tool_calls`` is
        decoded to a list.
        """
        from hermes_memory_sessions.search import messages_around

        with self.read() as conn:
            return messages_around(conn, session_id, int(anchor_id), int(window))

    def get_anchored_view(
        self,
        session_id: str,
        anchor_id: int,
        window: int = 5,
        bookend: int = 3,
        keep_roles: Sequence[str] = ("user", "assistant"),
    ) -> dict[str, Any]:
        """`get_messages_around` filtered to ``keep_roles`` (anchor always kept) plus bookends."""
        from hermes_memory_sessions.search import anchored_view

        with self.read() as conn:
            return anchored_view(conn, session_id, int(anchor_id), window, bookend, keep_roles)

    def search_messages(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        """Full-text search; see `hermes_memory_sessions.search.search_messages`."""
        from hermes_memory_sessions.search import search_messages

        with self.read() as conn:
            return search_messages(conn, query, **kwargs)

    def stats(self) -> dict[str, Any]:
        """Counts and sizes: sessions, messages, db_size_bytes (file + WAL), text_bytes."""
        with self.read() as conn:
            sessions = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
            messages = conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
            text = conn.execute(
                "SELECT COALESCE(SUM(length(CAST(content AS BLOB))), 0) FROM messages"
            ).fetchone()[0]
            by_source = {
                str(r[0]): int(r[1])
                for r in conn.execute("SELECT source, COUNT(*) FROM sessions GROUP BY source")
            }
        size = 0
        for p in (self.path, Path(f"{self.path}-wal")):
            with contextlib.suppress(OSError):
                size += p.stat().st_size
        return {
            "sessions": int(sessions),
            "messages": int(messages),
            "db_size_bytes": size,
            "text_bytes": int(text),
            "by_source": by_source,
            "journal_mode": self.journal_mode,
            "path": str(self.path),
        }

    def index_sizes(self) -> dict[str, int]:
        """Bytes used by each full-text index (all its shadow tables), via ``dbstat``."""
        out: dict[str, int] = {}
        with self.read() as conn:
            try:
                rows = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
            except sqlite3.OperationalError:
                return out
        for name, size in rows:
            for prefix in ("hm_fts_words", "hm_fts_tools", "hm_fts_cjk", "hm_cjk_docs"):
                if str(name).startswith(prefix):
                    key = "hm_fts_cjk" if prefix == "hm_cjk_docs" else prefix
                    out[key] = out.get(key, 0) + int(size)
        return out


def schema_columns(conn: sqlite3.Connection, table: str) -> set[str]:
    """Column names of ``table``."""
    return {str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")}


def _check_id(session_id: Any) -> str:
    if not isinstance(session_id, str) or not session_id.strip():
        raise ValueError("session_id must be a non-empty string")
    bad = next((ch for ch in session_id if ch == "\x00" or unicodedata.category(ch) == "Cc"), None)
    if bad is not None:
        raise ValueError(
            f"session id {session_id!r} contains the control character U+{ord(bad):04X};"
            " session ids are printable text"
        )
    return session_id


def _jitter(low: float, high: float) -> float:
    """Backoff delay; not security sensitive."""
    return random.uniform(low, high)  # noqa: S311


def _is_locked(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text
