"""Schema, connection setup and versioned migrations of the session archive.

Tables and columns are a compatible subset of Hermes Agent's ``state.db`` (``sessions``,
``messages``, ``schema_version``, ``state_meta``), so Hermes' sessions import column for
column and Hermes could read ours. The archive is always a file of its own: Hermes'
``state.db`` is never opened as an archive (`_hermesdb`). Every object
that is ours alone carries an ``hm_`` prefix (an earlier release did put them inside Hermes'
file; `hermes_memory_sessions.importers.migrate_out` moves such an archive out):

* ``hm_fts_words`` — FTS5 ``unicode61`` (diacritics folded), *external content* over the
  view ``hm_fts_words_src`` (no second copy of the text), kept in sync by triggers. Columns
  ``content, tool_name, tool_calls``; every message except tool output, content and tool
  calls each up to `MESSAGE_INDEX_PREFIX` characters.
* ``hm_fts_stems`` — the word index again, stemmed (FTS5 ``porter``), over the same view
  and kept in sync the same way (schema 6): hybrid discovery's natural-language fallback
  searches it, so a word's inflected forms count as one term.
* ``hm_fts_tools`` — the same for ``role='tool'`` rows, indexed only up to
  `TOOL_INDEX_PREFIX` characters. Kept apart so that bulky tool output neither inflates the
  document frequencies BM25 must count for ordinary searches nor crowds their candidates.
* ``hm_fts_cjk`` — contentless FTS5 fed with unigram + bigram text of CJK runs
  (`hermes_memory_sessions.search._cjk`). Triggers record every change of a row that contains CJK
  in ``hm_cjk_pending`` (ids of inserts, old text of deletes); the store drains that queue in
  the same transaction, and also on open, so even rows written by another program are indexed.

Our own schema version lives in ``state_meta`` under `META_SCHEMA_KEY` (``schema_version``
keeps whatever number it has when the file came from Hermes; a new file gets ours).
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_memory_core.kit import make_private_dirs
from hermes_memory_sessions.search._cjk import CJK_GLOB, CJK_INDEX_GLOB
from hermes_memory_sessions.search._cjk_text import fold_version

__all__ = [
    "MESSAGE_INDEX_PREFIX",
    "META_SCHEMA_KEY",
    "SCHEMA_VERSION",
    "TOOL_INDEX_PREFIX",
    "ArchiveBusy",
    "connect",
    "connect_readonly",
    "migrate",
]

#: Current hermes-memory schema version (see `MIGRATIONS`).
SCHEMA_VERSION = 6
#: ``state_meta`` key that holds our schema version.
META_SCHEMA_KEY = "hermes_memory_schema_version"
#: Characters of a ``role='tool'`` message that are indexed (the rest is stored, not indexed).
TOOL_INDEX_PREFIX = 8192
#: Characters of any other message's content, and of any message's tool calls, that are
#: indexed (the rest is stored, not indexed): one pasted log cannot make every search over its
#: words slow, nor one append index a quarter of a megabyte.
MESSAGE_INDEX_PREFIX = 32768

_SESSION_COLUMNS = """
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    user_id TEXT,
    model TEXT,
    model_config TEXT,
    system_prompt TEXT,
    parent_session_id TEXT,
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0,
    cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0,
    reasoning_tokens INTEGER DEFAULT 0,
    billing_provider TEXT,
    billing_base_url TEXT,
    billing_mode TEXT,
    estimated_cost_usd REAL,
    actual_cost_usd REAL,
    cost_status TEXT,
    cost_source TEXT,
    pricing_version TEXT,
    title TEXT,
    api_call_count INTEGER DEFAULT 0,
    title_source TEXT,
    last_activity_at REAL,
    session_key TEXT,
    chat_id TEXT,
    chat_type TEXT,
    thread_id TEXT,
    display_name TEXT,
    origin_json TEXT,
    expiry_finalized INTEGER DEFAULT 0,
    cwd TEXT,
    git_branch TEXT,
    git_repo_root TEXT,
    handoff_state TEXT,
    handoff_platform TEXT,
    handoff_error TEXT,
    compression_failure_cooldown_until REAL,
    compression_failure_error TEXT,
    compression_fallback_streak INTEGER NOT NULL DEFAULT 0,
    profile_name TEXT,
    rewind_count INTEGER NOT NULL DEFAULT 0,
    archived INTEGER NOT NULL DEFAULT 0
"""

_MESSAGE_COLUMNS = """
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    timestamp REAL NOT NULL,
    token_count INTEGER,
    finish_reason TEXT,
    reasoning TEXT,
    active INTEGER NOT NULL DEFAULT 1,
    compacted INTEGER NOT NULL DEFAULT 0,
    effect_disposition TEXT,
    reasoning_content TEXT,
    reasoning_details TEXT,
    codex_reasoning_items TEXT,
    codex_message_items TEXT,
    platform_message_id TEXT,
    observed INTEGER DEFAULT 0,
    api_content TEXT
"""

_CORE_DDL = f"""
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS state_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS sessions ({_SESSION_COLUMNS});
CREATE TABLE IF NOT EXISTS messages ({_MESSAGE_COLUMNS});
"""

_INDEX_DDL = """
CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source);
CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp);
CREATE INDEX IF NOT EXISTS idx_messages_session_id ON messages(session_id, id);
CREATE INDEX IF NOT EXISTS idx_sessions_last_active
    ON sessions(COALESCE(last_activity_at, started_at) DESC);
"""

_P = TOOL_INDEX_PREFIX
_M = MESSAGE_INDEX_PREFIX


def _indexed(column: str) -> str:
    """SQL for the indexed part of a text column: the first `MESSAGE_INDEX_PREFIX`
    characters. Text of at most that many bytes is taken whole, because SQLite's ``substr``
    (like ``length``) stops at a NUL character; longer text is cut by ``substr``, at the
    first NUL at the latest, so it never indexes more."""
    return (
        f"CASE WHEN length(CAST({column} AS BLOB)) > {_M}"
        f" THEN substr({column}, 1, {_M}) ELSE {column} END"
    )


_WORDS_VIEW_DDL = f"""
CREATE VIEW IF NOT EXISTS hm_fts_words_src AS
    SELECT id, {_indexed("content")} AS content, tool_name,
           {_indexed("tool_calls")} AS tool_calls
    FROM messages WHERE role <> 'tool';
"""  # noqa: S608
_WORDS_TRIGGERS_DDL = f"""
CREATE TRIGGER IF NOT EXISTS hm_fts_words_ai AFTER INSERT ON messages
WHEN new.role <> 'tool'
BEGIN
    INSERT INTO hm_fts_words(rowid, content, tool_name, tool_calls)
    VALUES (new.id, {_indexed("new.content")}, new.tool_name, {_indexed("new.tool_calls")});
END;
CREATE TRIGGER IF NOT EXISTS hm_fts_words_ad AFTER DELETE ON messages
WHEN old.role <> 'tool'
BEGIN
    INSERT INTO hm_fts_words(hm_fts_words, rowid, content, tool_name, tool_calls)
    VALUES ('delete', old.id, {_indexed("old.content")}, old.tool_name,
            {_indexed("old.tool_calls")});
END;
CREATE TRIGGER IF NOT EXISTS hm_fts_words_au
AFTER UPDATE OF content, tool_name, tool_calls, role ON messages
WHEN old.content IS NOT new.content OR old.tool_name IS NOT new.tool_name
     OR old.tool_calls IS NOT new.tool_calls OR old.role IS NOT new.role
BEGIN
    INSERT INTO hm_fts_words(hm_fts_words, rowid, content, tool_name, tool_calls)
    SELECT 'delete', old.id, {_indexed("old.content")}, old.tool_name,
           {_indexed("old.tool_calls")}
    WHERE old.role <> 'tool';
    INSERT INTO hm_fts_words(rowid, content, tool_name, tool_calls)
    SELECT new.id, {_indexed("new.content")}, new.tool_name, {_indexed("new.tool_calls")}
    WHERE new.role <> 'tool';
END;
"""  # noqa: S608
_WORDS_SYNC_DDL = _WORDS_VIEW_DDL + _WORDS_TRIGGERS_DDL

#: The word index stemmed (schema 6): FTS5's ``porter`` stemmer over the same view, kept in
#: sync by the same triggers. Hybrid discovery's natural-language fallback searches it, so
#: "paint" finds "painting" and "painted", all forms of a word one term for BM25.
_STEMS_DDL = """
CREATE VIRTUAL TABLE IF NOT EXISTS hm_fts_stems USING fts5(
    content, tool_name, tool_calls,
    content='hm_fts_words_src', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
""" + _WORDS_TRIGGERS_DDL.replace("hm_fts_words", "hm_fts_stems")


_FTS_DDL = (
    """
CREATE VIRTUAL TABLE IF NOT EXISTS hm_fts_words USING fts5(
    content, tool_name, tool_calls,
    content='hm_fts_words_src', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2'
);
"""  # noqa: S608
    + _WORDS_SYNC_DDL
    + f"""
CREATE VIEW IF NOT EXISTS hm_fts_tools_src AS
    SELECT id, substr(content, 1, {_P}) AS content, tool_name, tool_calls
    FROM messages WHERE role = 'tool';
CREATE VIRTUAL TABLE IF NOT EXISTS hm_fts_tools USING fts5(
    content, tool_name, tool_calls,
    content='hm_fts_tools_src', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS hm_fts_tools_ai AFTER INSERT ON messages
WHEN new.role = 'tool'
BEGIN
    INSERT INTO hm_fts_tools(rowid, content, tool_name, tool_calls)
    VALUES (new.id, substr(new.content, 1, {_P}), new.tool_name, new.tool_calls);
END;
CREATE TRIGGER IF NOT EXISTS hm_fts_tools_ad AFTER DELETE ON messages
WHEN old.role = 'tool'
BEGIN
    INSERT INTO hm_fts_tools(hm_fts_tools, rowid, content, tool_name, tool_calls)
    VALUES ('delete', old.id, substr(old.content, 1, {_P}), old.tool_name, old.tool_calls);
END;
CREATE TRIGGER IF NOT EXISTS hm_fts_tools_au
AFTER UPDATE OF content, tool_name, tool_calls, role ON messages
WHEN old.content IS NOT new.content OR old.tool_name IS NOT new.tool_name
     OR old.tool_calls IS NOT new.tool_calls OR old.role IS NOT new.role
BEGIN
    INSERT INTO hm_fts_tools(hm_fts_tools, rowid, content, tool_name, tool_calls)
    SELECT 'delete', old.id, substr(old.content, 1, {_P}), old.tool_name, old.tool_calls
    WHERE old.role = 'tool';
    INSERT INTO hm_fts_tools(rowid, content, tool_name, tool_calls)
    SELECT new.id, substr(new.content, 1, {_P}), new.tool_name, new.tool_calls
    WHERE new.role = 'tool';
END;
"""  # noqa: S608
    + f"""
CREATE VIRTUAL TABLE IF NOT EXISTS hm_fts_cjk USING fts5(
    grams, content='', tokenize='unicode61 remove_diacritics 2'
);
-- Queue of CJK-index work. op 'i': index message `id`; op 'd': remove the document derived
-- from (role, content, tool_calls) of a deleted/updated row.
CREATE TABLE IF NOT EXISTS hm_cjk_pending (
    seq INTEGER PRIMARY KEY,
    op TEXT NOT NULL,
    id INTEGER NOT NULL,
    role TEXT,
    content TEXT,
    tool_calls TEXT
);
-- Ids whose document is currently in hm_fts_cjk (needed to delete exactly what was added).
CREATE TABLE IF NOT EXISTS hm_cjk_docs (id INTEGER PRIMARY KEY);
CREATE TRIGGER IF NOT EXISTS hm_fts_cjk_ai AFTER INSERT ON messages
WHEN new.content GLOB '{CJK_GLOB}' OR new.tool_calls GLOB '{CJK_GLOB}'
BEGIN
    INSERT INTO hm_cjk_pending(op, id) VALUES ('i', new.id);
END;
CREATE TRIGGER IF NOT EXISTS hm_fts_cjk_ad AFTER DELETE ON messages
WHEN old.content GLOB '{CJK_GLOB}' OR old.tool_calls GLOB '{CJK_GLOB}'
BEGIN
    INSERT INTO hm_cjk_pending(op, id, role, content, tool_calls)
    VALUES ('d', old.id, old.role, old.content, old.tool_calls);
END;
CREATE TRIGGER IF NOT EXISTS hm_fts_cjk_au AFTER UPDATE OF content, tool_calls, role ON messages
WHEN (old.content IS NOT new.content OR old.tool_calls IS NOT new.tool_calls
      OR old.role IS NOT new.role)
     AND (old.content GLOB '{CJK_GLOB}' OR old.tool_calls GLOB '{CJK_GLOB}'
          OR new.content GLOB '{CJK_GLOB}' OR new.tool_calls GLOB '{CJK_GLOB}')
BEGIN
    INSERT INTO hm_cjk_pending(op, id, role, content, tool_calls)
    VALUES ('d', old.id, old.role, old.content, old.tool_calls);
    INSERT INTO hm_cjk_pending(op, id) VALUES ('i', new.id);
END;
"""  # noqa: S608
)


class ArchiveBusy(sqlite3.OperationalError):
    """A read gave up: the database stayed locked (by another process, or by a write of this
    store waiting for it) for the whole read budget."""


class RetryingConnection(sqlite3.Connection):
    """A connection whose stand-alone reads retry while another process holds the lock.

    In rollback-journal (``DELETE``) mode a reader can see "database is locked" while a
    writer commits; a statement outside a transaction is its own transaction, so running it
    again is safe. Statements inside a transaction (the store's writers) are not retried
    here: the store retries whole transactions itself.
    """

    read_budget_s = 5.0

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        """`sqlite3.Connection.execute` with a bounded, jittered retry for reads."""
        if self.in_transaction or sql.lstrip()[:5].upper() in ("BEGIN", "COMMI", "ROLLB"):
            return super().execute(sql, parameters)
        deadline = time.monotonic() + self.read_budget_s
        while True:
            try:
                return super().execute(sql, parameters)
            except sqlite3.OperationalError as exc:
                if not _lock_error(exc):
                    raise
                if time.monotonic() > deadline:
                    raise ArchiveBusy(
                        f"the session archive is locked by another process "
                        f"(gave up after {self.read_budget_s:g} s): {exc}"
                    ) from exc
                time.sleep(random.uniform(0.01, 0.1))  # noqa: S311 - backoff jitter


def _lock_error(exc: sqlite3.OperationalError) -> bool:
    """A locked database: "database is locked" / "busy", or an FTS5 table that could not
    read its configuration because of the lock ("vtable constructor failed")."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text or "vtable constructor failed" in text


def _ensure_file(path: Path) -> None:
    """Create the database file with mode 0600 (never loosen an existing file)."""
    make_private_dirs(path.parent)
    if not path.exists():
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)
    tighten_permissions(path)


def tighten_permissions(path: Path) -> None:
    """chmod 0600 the database and its ``-wal``/``-shm`` sidecars (best effort)."""
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
        try:
            if p.exists() and (p.stat().st_mode & 0o777) != 0o600:
                os.chmod(p, 0o600)
        except OSError:
            pass


def connect(
    path: Path, *, busy_timeout_ms: int = 5000, journal_mode: str = "wal"
) -> tuple[sqlite3.Connection, str]:
    """Open ``path`` (created 0600) and apply the archive's pragmas.

    ``journal_mode="delete"`` asks for the rollback journal (for filesystems where WAL's
    shared memory does not work, e.g. some network or VM mounts). A file already in WAL mode
    is never switched back while it may be in use.

    Returns the connection (autocommit: callers use explicit ``BEGIN IMMEDIATE``) and the
    journal mode in effect: ``"wal"``, or ``"delete"`` where WAL cannot work (network or
    virtual filesystems, read-only directories).
    """
    _ensure_file(path)
    conn = sqlite3.connect(
        str(path),
        timeout=busy_timeout_ms / 1000,
        isolation_level=None,
        check_same_thread=False,
        factory=RetryingConnection,
    )
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    conn.execute("PRAGMA foreign_keys = ON")
    mode = "delete"
    if journal_mode not in ("wal", "delete"):
        conn.close()
        raise ValueError("journal_mode must be 'wal' or 'delete'")
    current = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
    wanted = "WAL" if journal_mode == "wal" or current == "wal" else "DELETE"
    try:
        row = conn.execute(f"PRAGMA journal_mode = {wanted}").fetchone()
        mode = str(row[0]).lower() if row else "delete"
    except sqlite3.OperationalError:
        mode = "delete"
    if mode != "wal":
        with contextlib.suppress(sqlite3.OperationalError):
            conn.execute("PRAGMA journal_mode = DELETE")
        mode = "delete"
    else:
        conn.execute("PRAGMA journal_size_limit = 67108864")
    conn.execute("PRAGMA synchronous = NORMAL" if mode == "wal" else "PRAGMA synchronous = FULL")
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.execute("PRAGMA cache_size = -32000")
    tighten_permissions(path)
    return conn, mode


def connect_readonly(path: Path, *, busy_timeout_ms: int = 5000) -> sqlite3.Connection:
    """Open our archive for reading only (a read-only home: file or directory not writable).

    Nothing is created: with a ``-wal``/``-shm`` pair present the connection reads through
    them; without a ``-wal`` in a directory we cannot write, the file is opened
    ``immutable=1`` (nobody can be writing it: a WAL writer would need that directory).
    """
    from urllib.parse import quote

    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    immutable = not wal.exists() and not os.access(path.parent, os.W_OK)
    if wal.exists() and not shm.exists() and not os.access(path.parent, os.W_OK):
        raise sqlite3.OperationalError(
            f"{path}: cannot read: its -wal file needs recovery and the directory is read-only"
        )
    uri = "file:" + quote(str(path)) + "?mode=ro" + ("&immutable=1" if immutable else "")
    conn = sqlite3.connect(
        uri,
        uri=True,
        timeout=busy_timeout_ms / 1000,
        isolation_level=None,
        check_same_thread=False,
        factory=RetryingConnection,
    )
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    conn.execute("PRAGMA temp_store = MEMORY")
    return conn


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")}


def _reconcile_columns(conn: sqlite3.Connection) -> None:
    """Add any of our columns missing from a pre-existing (e.g. older Hermes) table."""
    for table, spec in (("sessions", _SESSION_COLUMNS), ("messages", _MESSAGE_COLUMNS)):
        have = _columns(conn, table)
        for line in spec.strip().split(",\n"):
            col = line.strip()
            name = col.split()[0]
            if name in have or "PRIMARY KEY" in col:
                continue
            col = col.replace(" REFERENCES sessions(id)", "")
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {col}")


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    """Execute a multi-statement script inside the caller's transaction.

    (``executescript`` would COMMIT first, breaking the one-transaction migration.)
    """
    buf = ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        buf += line
        if sqlite3.complete_statement(buf):
            conn.execute(buf)
            buf = ""
    if buf.strip():
        conn.execute(buf)


def _v1(conn: sqlite3.Connection) -> None:
    _run_script(conn, _CORE_DDL)
    _reconcile_columns(conn)
    _run_script(conn, _INDEX_DDL)
    try:
        conn.execute(
            "CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_title_unique "
            "ON sessions(title) WHERE title IS NOT NULL"
        )
    except sqlite3.IntegrityError:
        # Legacy duplicates: the newest session keeps the title, older ones lose it.
        conn.execute(
            "UPDATE sessions SET title = NULL WHERE title IS NOT NULL AND EXISTS ("
            " SELECT 1 FROM sessions s2 WHERE s2.title = sessions.title"
            " AND (s2.started_at > sessions.started_at"
            "      OR (s2.started_at = sessions.started_at AND s2.id > sessions.id)))"
        )
        conn.execute(
            "CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_title_unique "
            "ON sessions(title) WHERE title IS NOT NULL"
        )
    _run_script(conn, _FTS_DDL)
    # Rows already present (an existing Hermes database): index them now.
    conn.execute("INSERT INTO hm_fts_words(hm_fts_words) VALUES ('rebuild')")
    conn.execute("INSERT INTO hm_fts_tools(hm_fts_tools) VALUES ('rebuild')")
    for table in ("hm_fts_words", "hm_fts_tools", "hm_fts_cjk"):
        # incremental 'merge' commands may combine as few as two segments
        conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('usermerge', 2)")  # noqa: S608
    conn.execute(
        "INSERT INTO hm_cjk_pending(op, id) SELECT 'i', id FROM messages "  # noqa: S608
        f"WHERE content GLOB '{CJK_GLOB}' OR tool_calls GLOB '{CJK_GLOB}'"
    )


_IMPORT_DDL = """
CREATE TABLE IF NOT EXISTS hm_import_sources (
    source TEXT PRIMARY KEY,
    last_message_id INTEGER NOT NULL DEFAULT 0,
    imported_at REAL,
    sessions INTEGER NOT NULL DEFAULT 0,
    messages INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS hm_import_sessions (
    source TEXT NOT NULL,
    session_id TEXT NOT NULL,
    last_message_id INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (source, session_id)
) WITHOUT ROWID;
"""


def _v2(conn: sqlite3.Connection) -> None:
    """Bookkeeping of incremental imports from Hermes databases.

    ``hm_import_sources``: per source file, the highest source message id imported (the
    watermark). ``hm_import_sessions``: which archive sessions an import of that source
    created (only those receive messages appended to the source later; a session the archive
    recorded itself is never doubled).
    """
    _run_script(conn, _IMPORT_DDL)


def _v3(conn: sqlite3.Connection) -> None:
    """The columns Hermes Agent 0.19 reads (``archived``, ``effect_disposition``, …).

    With them a read-only Hermes ``SessionDB`` can list, count, browse and resume sessions
    from our archive (a user going back to Hermes, or running both). Hermes' defaults.
    """
    _reconcile_columns(conn)


_G = CJK_INDEX_GLOB
_CJK_TRIGGERS_V4 = f"""
DROP TRIGGER IF EXISTS hm_fts_cjk_ai;
DROP TRIGGER IF EXISTS hm_fts_cjk_ad;
DROP TRIGGER IF EXISTS hm_fts_cjk_au;
CREATE TRIGGER hm_fts_cjk_ai AFTER INSERT ON messages
WHEN new.content GLOB '{_G}' OR new.tool_calls GLOB '{_G}'
BEGIN
    INSERT INTO hm_cjk_pending(op, id) VALUES ('i', new.id);
END;
CREATE TRIGGER hm_fts_cjk_ad AFTER DELETE ON messages
WHEN old.content GLOB '{_G}' OR old.tool_calls GLOB '{_G}'
BEGIN
    INSERT INTO hm_cjk_pending(op, id, role, content, tool_calls)
    VALUES ('d', old.id, old.role, old.content, old.tool_calls);
END;
CREATE TRIGGER hm_fts_cjk_au AFTER UPDATE OF content, tool_calls, role ON messages
WHEN (old.content IS NOT new.content OR old.tool_calls IS NOT new.tool_calls
      OR old.role IS NOT new.role)
     AND (old.content GLOB '{_G}' OR old.tool_calls GLOB '{_G}'
          OR new.content GLOB '{_G}' OR new.tool_calls GLOB '{_G}')
BEGIN
    INSERT INTO hm_cjk_pending(op, id, role, content, tool_calls)
    VALUES ('d', old.id, old.role, old.content, old.tool_calls);
    INSERT INTO hm_cjk_pending(op, id) VALUES ('i', new.id);
END;
"""  # noqa: S608
_LONG_ROWS = f"""SELECT id FROM messages
WHERE length(CAST(content AS BLOB)) > {_M} OR length(CAST(tool_calls AS BLOB)) > {_M}"""  # noqa: S608
_OLD_WORDS_SYNC = """
DROP TRIGGER IF EXISTS hm_fts_words_ai;
DROP TRIGGER IF EXISTS hm_fts_words_ad;
DROP TRIGGER IF EXISTS hm_fts_words_au;
DROP VIEW IF EXISTS hm_fts_words_src;
"""


def _v5(conn: sqlite3.Connection) -> None:
    """Index message text up to `MESSAGE_INDEX_PREFIX` characters (content and tool calls).

    The word index's view and triggers are replaced. Rows longer than the prefix are taken
    out of the index with the values they were indexed with (the whole text) and put back
    with the prefix, so the external-content index stays exact; shorter rows are untouched.
    When there are such rows, the CJK index is rebuilt too (`_check_cjk_fold`, in the same
    transaction): its documents are now derived from the prefix. Messages are not changed.
    """
    view = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'hm_fts_words_src'"
    ).fetchone()
    if view is not None and "CAST(content AS BLOB)" in str(view[0]):
        return  # a new file: `_v1` created the capped layout already
    conn.execute("DROP TABLE IF EXISTS temp.hm_long_rows")
    conn.execute("CREATE TEMP TABLE hm_long_rows AS " + _LONG_ROWS)
    long_rows = conn.execute("SELECT count(*) FROM temp.hm_long_rows").fetchone()[0]
    conn.execute(
        "INSERT INTO hm_fts_words(hm_fts_words, rowid, content, tool_name, tool_calls)"
        " SELECT 'delete', id, content, tool_name, tool_calls FROM messages"
        " WHERE role <> 'tool' AND id IN (SELECT id FROM temp.hm_long_rows)"
    )
    _run_script(conn, _OLD_WORDS_SYNC)
    _run_script(conn, _WORDS_SYNC_DDL)
    conn.execute(
        "INSERT INTO hm_fts_words(rowid, content, tool_name, tool_calls)"
        " SELECT id, content, tool_name, tool_calls FROM hm_fts_words_src"
        " WHERE id IN (SELECT id FROM temp.hm_long_rows)"
    )
    conn.execute("DROP TABLE temp.hm_long_rows")
    if long_rows:
        conn.execute("DELETE FROM state_meta WHERE key = ?", (META_CJK_FOLD_KEY,))


#: ``state_meta`` key: the `fold_version` the CJK index was built with.
META_CJK_FOLD_KEY = "hermes_memory_cjk_fold"


def _v4(conn: sqlite3.Connection) -> None:
    """The CJK index holds folded text (full-width → ASCII, Traditional → Simplified) and
    also messages whose only foldable characters are full-width forms.

    The triggers are replaced; the index itself is rebuilt by `_check_cjk_fold` (the stored
    fold version is cleared here), in the same transaction. Messages are not touched.
    """
    _run_script(conn, _CJK_TRIGGERS_V4)
    conn.execute("DELETE FROM state_meta WHERE key = ?", (META_CJK_FOLD_KEY,))


def rebuild_cjk_index(conn: sqlite3.Connection) -> None:
    """Empty the CJK index and queue every message that belongs in it (the store's write
    transaction then indexes them before it commits). Only derived data is dropped."""
    conn.execute("INSERT INTO hm_fts_cjk(hm_fts_cjk) VALUES ('delete-all')")
    conn.execute("DELETE FROM hm_cjk_docs")
    conn.execute("DELETE FROM hm_cjk_pending")
    conn.execute(
        "INSERT INTO hm_cjk_pending(op, id) SELECT 'i', id FROM messages "  # noqa: S608
        f"WHERE content GLOB '{_G}' OR tool_calls GLOB '{_G}'"
    )


def _check_cjk_fold(conn: sqlite3.Connection) -> None:
    """Rebuild the CJK index when it was built with other folding rules or OpenCC data.

    The index is contentless: removing a message's document needs the exact tokens it was
    added with, so a document made under other rules could not be removed cleanly.
    """
    want = fold_version()
    row = conn.execute(
        "SELECT value FROM state_meta WHERE key = ?", (META_CJK_FOLD_KEY,)
    ).fetchone()
    if row is not None and str(row[0]) == want:
        return
    rebuild_cjk_index(conn)
    conn.execute(
        "INSERT INTO state_meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (META_CJK_FOLD_KEY, want),
    )


def _v6(conn: sqlite3.Connection) -> None:
    """The stemmed word index (`_STEMS_DDL`), built from the messages already stored
    (about 9 s at a million messages, once). Messages are not changed."""
    _run_script(conn, _STEMS_DDL)
    conn.execute("INSERT INTO hm_fts_stems(hm_fts_stems) VALUES ('rebuild')")
    conn.execute("INSERT INTO hm_fts_stems(hm_fts_stems, rank) VALUES ('usermerge', 2)")


#: Versioned migrations: ``(version, function)``; each runs once, inside one transaction.
MIGRATIONS: list[tuple[int, Callable[[sqlite3.Connection], None]]] = [
    (1, _v1),
    (2, _v2),
    (3, _v3),
    (4, _v4),
    (5, _v5),
    (6, _v6),
]
#: The oldest schema version a read-only open can serve (reads need nothing newer).
READABLE_VERSION = 1


def current_version(conn: sqlite3.Connection) -> int:
    """Our schema version recorded in the file (0 for a new or foreign file)."""
    try:
        row = conn.execute(
            "SELECT value FROM state_meta WHERE key = ?", (META_SCHEMA_KEY,)
        ).fetchone()
    except sqlite3.OperationalError:
        return 0
    return int(row[0]) if row and str(row[0]).isdigit() else 0


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the file up to `SCHEMA_VERSION`; the caller holds a write transaction.

    Raises RuntimeError for a file written by a newer hermes-memory.
    """
    version = current_version(conn)
    if version > SCHEMA_VERSION:
        raise RuntimeError(
            f"session archive schema version {version} is newer than this hermes-memory-sessions "
            f"supports ({SCHEMA_VERSION}); upgrade the package"
        )
    for target, step in MIGRATIONS:
        if version < target:
            step(conn)
            version = target
            conn.execute(
                "INSERT INTO state_meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (META_SCHEMA_KEY, str(version)),
            )
    _check_cjk_fold(conn)
    if conn.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0] == 0:
        conn.execute("INSERT INTO schema_version(version) VALUES (?)", (SCHEMA_VERSION,))
    return version
