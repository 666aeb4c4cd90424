"""Versioned migrations of the PostgreSQL schema shared by both tiers.

Every table is keyed by ``owner`` (the tenant key: one home or profile), and every query of
this package names it. `migrate` applies the missing steps of `MIGRATIONS` in one
transaction each, under an advisory lock, so several hosts starting at once upgrade once.
`SCHEMA_VERSION` is the version this release writes; `doctor` compares it with the database.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg
from psycopg.rows import tuple_row

__all__ = [
    "BULK_DEFERRED",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "current_version",
    "drop_deferred_sql",
    "migrate",
    "missing_deferred",
]

_SESSION_COLUMNS = """
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    source TEXT NOT NULL,
    user_id TEXT,
    model TEXT,
    model_config TEXT,
    system_prompt TEXT,
    parent_session_id TEXT,
    started_at DOUBLE PRECISION NOT NULL,
    ended_at DOUBLE PRECISION,
    end_reason TEXT,
    message_count BIGINT DEFAULT 0,
    tool_call_count BIGINT DEFAULT 0,
    input_tokens BIGINT DEFAULT 0,
    output_tokens BIGINT DEFAULT 0,
    cache_read_tokens BIGINT DEFAULT 0,
    cache_write_tokens BIGINT DEFAULT 0,
    reasoning_tokens BIGINT DEFAULT 0,
    billing_provider TEXT,
    billing_base_url TEXT,
    billing_mode TEXT,
    estimated_cost_usd DOUBLE PRECISION,
    actual_cost_usd DOUBLE PRECISION,
    cost_status TEXT,
    cost_source TEXT,
    pricing_version TEXT,
    title TEXT,
    api_call_count BIGINT DEFAULT 0,
    title_source TEXT,
    last_activity_at DOUBLE PRECISION,
    session_key TEXT,
    chat_id TEXT,
    chat_type TEXT,
    thread_id TEXT,
    display_name TEXT,
    origin_json TEXT,
    expiry_finalized BIGINT DEFAULT 0,
    cwd TEXT,
    git_branch TEXT,
    git_repo_root TEXT,
    handoff_state TEXT,
    handoff_platform TEXT,
    handoff_error TEXT,
    compression_failure_cooldown_until DOUBLE PRECISION,
    compression_failure_error TEXT,
    compression_fallback_streak BIGINT NOT NULL DEFAULT 0,
    profile_name TEXT,
    rewind_count BIGINT NOT NULL DEFAULT 0,
    archived BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (owner, id)
"""

_MESSAGE_COLUMNS = """
    owner TEXT NOT NULL,
    id BIGINT NOT NULL,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    timestamp DOUBLE PRECISION NOT NULL,
    token_count BIGINT,
    finish_reason TEXT,
    reasoning TEXT,
    active BIGINT NOT NULL DEFAULT 1,
    compacted BIGINT NOT NULL DEFAULT 0,
    effect_disposition TEXT,
    reasoning_content TEXT,
    reasoning_details TEXT,
    codex_reasoning_items TEXT,
    codex_message_items TEXT,
    platform_message_id TEXT,
    observed BIGINT DEFAULT 0,
    api_content TEXT,
    words TSVECTOR,
    cjk TSVECTOR,
    PRIMARY KEY (owner, id),
    FOREIGN KEY (owner, session_id) REFERENCES hm_sessions (owner, id)
"""

#: Step n (1-based) brings the schema from version n-1 to n.
MIGRATIONS: tuple[str, ...] = (
    f"""
    CREATE SEQUENCE IF NOT EXISTS hm_message_id_seq;
    CREATE TABLE hm_sessions ({_SESSION_COLUMNS});
    CREATE TABLE hm_messages ({_MESSAGE_COLUMNS});
    CREATE INDEX hm_messages_session ON hm_messages (owner, session_id, id);
    CREATE INDEX hm_messages_words ON hm_messages USING gin (words);
    CREATE INDEX hm_messages_cjk ON hm_messages USING gin (cjk) WHERE cjk IS NOT NULL;
    CREATE INDEX hm_sessions_started ON hm_sessions (owner, started_at DESC, id DESC);
    CREATE INDEX hm_sessions_parent ON hm_sessions (owner, parent_session_id);
    CREATE INDEX hm_sessions_title ON hm_sessions (owner, title);
    CREATE TABLE hm_import_sources (
        owner TEXT NOT NULL, source TEXT NOT NULL, last_message_id BIGINT NOT NULL DEFAULT 0,
        imported_at DOUBLE PRECISION, sessions BIGINT DEFAULT 0, messages BIGINT DEFAULT 0,
        PRIMARY KEY (owner, source));
    CREATE TABLE hm_import_sessions (
        owner TEXT NOT NULL, source TEXT NOT NULL, session_id TEXT NOT NULL,
        last_message_id BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (owner, source, session_id));
    CREATE TABLE hm_applied_ops (
        owner TEXT NOT NULL, op_key TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (owner, op_key));
    CREATE TABLE hm_memory (
        owner TEXT NOT NULL, target TEXT NOT NULL, content TEXT NOT NULL DEFAULT '',
        metadata TEXT NOT NULL DEFAULT '{{}}', revision BIGINT NOT NULL DEFAULT 0,
        updated_at DOUBLE PRECISION, PRIMARY KEY (owner, target));
    """,
    # 2: text holding U+0000 (which PostgreSQL text cannot store) kept exactly, as JSON
    "ALTER TABLE hm_messages ADD COLUMN IF NOT EXISTS nul_fields TEXT;",
    # 3: per-owner document frequency of each word-index lexeme (lexeme '' counts the
    # messages), kept by every insert and delete: the natural-language fallback reads a
    # term's frequency here instead of counting its matches
    """
    CREATE TABLE IF NOT EXISTS hm_term_df (
        owner TEXT NOT NULL, lexeme TEXT NOT NULL, df BIGINT NOT NULL,
        PRIMARY KEY (owner, lexeme));
    INSERT INTO hm_term_df (owner, lexeme, df)
        SELECT owner, lex, COUNT(*) FROM hm_messages,
            unnest(tsvector_to_array(COALESCE(words, ''::tsvector))) AS lex
        GROUP BY owner, lex
    UNION ALL
        SELECT owner, '', COUNT(*) FROM hm_messages GROUP BY owner;
    """,
    # 4: the newest CJK messages of an owner without walking the others (most messages hold
    # no CJK): "rank the newest N matches" scans this instead of the primary key
    "CREATE INDEX IF NOT EXISTS hm_messages_cjk_recent ON hm_messages (owner, id)"
    " WHERE cjk IS NOT NULL;",
    # 5: derived-index bookkeeping: the folding rules the ``cjk`` column was computed with
    # (full-width to ASCII, Traditional to Simplified); `migrate` recomputes the column
    # when they change (hermes_memory_postgres.archive._refold)
    "CREATE TABLE IF NOT EXISTS hm_index_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);",
    # 6: the vector index of hybrid recall (hermes_memory_postgres.archive._vectors): one
    # int8 vector per message (the SQLite archive's blob format), ``seq`` for incremental
    # loads of the in-memory binary codes; triggers drop the vector of a deleted message
    # and of an edited one (and of the two after it, whose context it is), as on SQLite
    """
    CREATE TABLE IF NOT EXISTS hm_vectors (
        owner TEXT NOT NULL, message_id BIGINT NOT NULL, model TEXT NOT NULL,
        seq BIGINT GENERATED ALWAYS AS IDENTITY, vec BYTEA NOT NULL,
        PRIMARY KEY (owner, message_id));
    CREATE INDEX IF NOT EXISTS hm_vectors_seq ON hm_vectors (owner, seq);
    CREATE OR REPLACE FUNCTION hm_vectors_msg_ad() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM hm_vectors WHERE owner = OLD.owner AND message_id = OLD.id;
        RETURN NULL;
    END $$;
    CREATE OR REPLACE FUNCTION hm_vectors_msg_au() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM hm_vectors WHERE owner = OLD.owner AND message_id IN (
            SELECT OLD.id UNION ALL (SELECT id FROM hm_messages WHERE owner = OLD.owner
            AND session_id = OLD.session_id AND id > OLD.id ORDER BY id LIMIT 2));
        RETURN NULL;
    END $$;
    CREATE TRIGGER hm_vectors_msg_ad AFTER DELETE ON hm_messages
        FOR EACH ROW EXECUTE FUNCTION hm_vectors_msg_ad();
    CREATE TRIGGER hm_vectors_msg_au AFTER UPDATE OF content, role ON hm_messages
        FOR EACH ROW WHEN (OLD.content IS DISTINCT FROM NEW.content
            OR OLD.role IS DISTINCT FROM NEW.role)
        EXECUTE FUNCTION hm_vectors_msg_au();
    """,
    # 7: two embedding tiers (hermes_memory_sessions.vectors._tiers): a message may hold a
    # vector per model (the fast one until the quality one replaces it)
    """
    ALTER TABLE hm_vectors DROP CONSTRAINT IF EXISTS hm_vectors_pkey;
    ALTER TABLE hm_vectors ADD PRIMARY KEY (owner, message_id, model);
    """,
    # 8: the word index in two parts, as the SQLite archive's two word tables: tool output
    # (hm_messages_tools) apart from every other message (hm_messages_words). A search of
    # the conversation no longer fetches and filters out the tool rows its words match,
    # the long ones (archive/_filters.py, docs/benchmarks.md). Built before the old index
    # is dropped: a build only keeps writers waiting, the drop locks readers out too
    """
    SET LOCAL maintenance_work_mem = '256MB';
    CREATE INDEX IF NOT EXISTS hm_messages_tools ON hm_messages USING gin (words)
        WHERE role = 'tool';
    CREATE INDEX hm_messages_words_8 ON hm_messages USING gin (words) WHERE role <> 'tool';
    DROP INDEX IF EXISTS hm_messages_words;
    ALTER INDEX hm_messages_words_8 RENAME TO hm_messages_words;
    """,
    # 9: the sessions of a source (every search excludes subagents' and tools' sessions
    # by default): a search tests a message's source in a subquery that finds them here
    # (archive/_filters.py) instead of joining every session of the owner
    "CREATE INDEX IF NOT EXISTS hm_sessions_source ON hm_sessions (owner, source);",
    # 10: tool output's term statistics kept apart, under keys prefixed 'tool ' (a lexeme
    # holds no space), as its part of the word index: recounted from the stored rows
    """
    DELETE FROM hm_term_df;
    INSERT INTO hm_term_df (owner, lexeme, df)
        SELECT owner, CASE WHEN role = 'tool' THEN 'tool ' ELSE '' END || lex, COUNT(*)
        FROM hm_messages, unnest(tsvector_to_array(COALESCE(words, ''::tsvector))) AS lex
        GROUP BY 1, 2
    UNION ALL
        SELECT owner, CASE WHEN role = 'tool' THEN 'tool ' ELSE '' END, COUNT(*)
        FROM hm_messages GROUP BY 1, 2;
    """,
)
#: The schema version this release reads and writes.
SCHEMA_VERSION = len(MIGRATIONS)
_FK = "hm_messages_owner_session_id_fkey"
#: What `BulkIngest.bulk_loading` drops while it fills an empty ``hm_messages`` and builds
#: in one pass at the end (name -> DDL): the secondary indexes and the foreign key to
#: ``hm_sessions``, which are checked or updated row by row otherwise. `migrate` restores
#: any of them that an interrupted load left missing.
BULK_DEFERRED = {
    # The word index's two parts (schema 8): their predicates are the literal conditions
    # `NOT_TOOL` and `TOOL` of `archive._filters`, which every search of the index names.
    "hm_messages_words": "CREATE INDEX IF NOT EXISTS hm_messages_words ON hm_messages"
    " USING gin (words) WHERE role <> 'tool'",
    "hm_messages_tools": "CREATE INDEX IF NOT EXISTS hm_messages_tools ON hm_messages"
    " USING gin (words) WHERE role = 'tool'",
    "hm_messages_cjk": "CREATE INDEX IF NOT EXISTS hm_messages_cjk ON hm_messages"
    " USING gin (cjk) WHERE cjk IS NOT NULL",
    "hm_messages_session": "CREATE INDEX IF NOT EXISTS hm_messages_session ON hm_messages"
    " (owner, session_id, id)",
    "hm_messages_cjk_recent": "CREATE INDEX IF NOT EXISTS hm_messages_cjk_recent ON"
    " hm_messages (owner, id) WHERE cjk IS NOT NULL",
    _FK: f"ALTER TABLE hm_messages ADD CONSTRAINT {_FK} FOREIGN KEY (owner, session_id)"
    " REFERENCES hm_sessions (owner, id)",
}
logger = logging.getLogger(__name__)
_LOCK_KEY = 0x6865726D6573  # "hermes": serialises migrations across hosts


def current_version(conn: psycopg.Connection[Any]) -> int:
    """The schema version of the database (0 when this package never ran on it)."""
    row = conn.execute("SELECT to_regclass('hm_schema_version') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return 0
    got = conn.execute("SELECT COALESCE(MAX(version), 0) FROM hm_schema_version").fetchone()
    return int(got[0]) if got else 0


def migrate(conn: psycopg.Connection[Any]) -> int:
    """Apply the missing migrations (each in its own transaction); returns the version.

    Then, in short transactions of their own, re-index the messages indexed before the
    per-message index cap (`hermes_memory_postgres.archive._recap`; resumed at the next open
    when interrupted). Raises RuntimeError when the database was written by a newer release.
    """
    version = _migrate_schema(conn)
    from hermes_memory_postgres.archive._recap import needs_recap, recap_long_rows

    try:
        if needs_recap(conn):
            conn.commit()
            rewritten = recap_long_rows(conn)
            if rewritten:
                logger.info("re-indexed %d messages longer than the index cap", rewritten)
        else:
            conn.commit()
    except psycopg.Error as exc:  # searched through the old index until the next open
        conn.rollback()
        logger.warning("re-indexing long messages stopped (%s); it resumes at the next open", exc)
    return version


def _migrate_schema(conn: psycopg.Connection[Any]) -> int:
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        # a backfill or an index rebuild on a large table outlasts the pool's bound
        conn.execute("SET LOCAL statement_timeout = 0")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS hm_schema_version ("
            " version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        version = current_version(conn)
        if version > SCHEMA_VERSION:
            raise RuntimeError(
                f"the database holds hermes-memory schema version {version}; this release"
                f" knows up to {SCHEMA_VERSION}: upgrade hermes-memory-postgres"
            )
        for step in range(version + 1, SCHEMA_VERSION + 1):
            conn.execute(MIGRATIONS[step - 1].encode())
            conn.execute("INSERT INTO hm_schema_version(version) VALUES (%s)", (step,))
        from hermes_memory_postgres.archive._refold import needs_refresh, refresh_cjk

        if needs_refresh(conn):
            updated = refresh_cjk(conn)
            if updated:
                logger.info("recomputed the CJK index of %d messages (new folding rules)", updated)
        for name in missing_deferred(conn):
            try:
                with conn.transaction():
                    conn.execute(BULK_DEFERRED[name].encode())
            except psycopg.errors.InsufficientPrivilege:
                logger.warning(
                    "%s is missing (a bulk load did not finish) and this role may not"
                    " create it: searches scan the table until the schema owner connects",
                    name,
                )
        return SCHEMA_VERSION


def missing_deferred(conn: psycopg.Connection[Any]) -> list[str]:
    """The names of `BULK_DEFERRED` the database lacks (a bulk load is building them), in
    the order they are built (indexes first, then the foreign key)."""
    cur = conn.cursor(row_factory=tuple_row)
    rows = cur.execute(
        "SELECT n FROM unnest(%s::text[]) WITH ORDINALITY AS u(n, i)"
        " WHERE to_regclass(n) IS NULL AND NOT EXISTS (SELECT 1 FROM pg_constraint c"
        " WHERE c.conname = n AND c.conrelid = to_regclass('hm_messages')) ORDER BY i",
        (list(BULK_DEFERRED),),
    ).fetchall()
    return [str(r[0]) for r in rows]


def drop_deferred_sql(name: str) -> str:
    """The statement that drops one of `BULK_DEFERRED`."""
    if name == _FK:
        return f"ALTER TABLE hm_messages DROP CONSTRAINT IF EXISTS {_FK}"
    return f"DROP INDEX IF EXISTS {name}"
