"""Builders of real Hermes ``state.db`` files for the importer tests.

The DDL is written from the column lists in ``shared/reference/hermes-sessions-behaviour.md`` §1:
``build_l1`` makes the v0.15 layout (schema 22, inline ``messages_fts`` + trigram table with
triggers indexing ``content || tool_name || tool_calls``), ``build_v23`` the v23+ layout
(schema 30, external-content FTS over views, ``active``/``compacted``/display columns).
Both are filled by :func:`populate` through the FTS triggers, exactly as Hermes would.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

L1_SESSIONS = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    user_id TEXT,
    model TEXT,
    model_config TEXT,
    system_prompt TEXT,
    parent_session_id TEXT REFERENCES sessions(id),
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
    api_call_count INTEGER DEFAULT 0
);
"""

L1_MESSAGES = """
CREATE TABLE messages (
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
    reasoning_content TEXT,
    reasoning_details TEXT,
    codex_reasoning_items TEXT,
    codex_message_items TEXT
);
"""

COMMON = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE INDEX idx_sessions_source ON sessions(source);
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
CREATE UNIQUE INDEX idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL;
"""

L1_FTS = """
CREATE VIRTUAL TABLE messages_fts USING fts5(content);
CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(content, tokenize='trigram');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id,
        coalesce(new.content, '') || ' ' || coalesce(new.tool_name, '') || ' '
        || coalesce(new.tool_calls, ''));
    INSERT INTO messages_fts_trigram(rowid, content) VALUES (new.id,
        coalesce(new.content, '') || ' ' || coalesce(new.tool_name, '') || ' '
        || coalesce(new.tool_calls, ''));
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    DELETE FROM messages_fts WHERE rowid = old.id;
    DELETE FROM messages_fts_trigram WHERE rowid = old.id;
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, tool_name, tool_calls, role
ON messages BEGIN
    DELETE FROM messages_fts WHERE rowid = old.id;
    DELETE FROM messages_fts_trigram WHERE rowid = old.id;
    INSERT INTO messages_fts(rowid, content) VALUES (new.id,
        coalesce(new.content, '') || ' ' || coalesce(new.tool_name, '') || ' '
        || coalesce(new.tool_calls, ''));
    INSERT INTO messages_fts_trigram(rowid, content) VALUES (new.id,
        coalesce(new.content, '') || ' ' || coalesce(new.tool_name, '') || ' '
        || coalesce(new.tool_calls, ''));
END;
"""

V23_SESSIONS = """
CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    created_source TEXT,
    user_id TEXT,
    session_key TEXT,
    chat_id TEXT,
    chat_type TEXT,
    thread_id TEXT,
    display_name TEXT,
    origin_json TEXT,
    expiry_finalized INTEGER DEFAULT 0,
    profile_name TEXT,
    transport_profile TEXT,
    model TEXT,
    model_config TEXT,
    system_prompt TEXT,
    system_prompt_hash TEXT REFERENCES system_prompts(hash),
    parent_session_id TEXT REFERENCES sessions(id),
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0,
    api_call_count INTEGER DEFAULT 0,
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
    cwd TEXT,
    git_branch TEXT,
    git_repo_root TEXT,
    git_metadata_generation INTEGER NOT NULL DEFAULT 0,
    title TEXT,
    title_source TEXT,
    last_activity_at REAL,
    last_activity_description TEXT,
    last_activity_provenance TEXT,
    last_read_at REAL,
    handoff_state TEXT,
    handoff_platform TEXT,
    handoff_error TEXT,
    compression_failure_cooldown_until REAL,
    compression_failure_error TEXT,
    compression_fallback_streak INTEGER NOT NULL DEFAULT 0,
    compression_ineffective_count INTEGER NOT NULL DEFAULT 0,
    compression_recovery_deadline REAL,
    compression_overload_streak INTEGER NOT NULL DEFAULT 0,
    rewind_count INTEGER NOT NULL DEFAULT 0,
    archived INTEGER NOT NULL DEFAULT 0,
    pinned INTEGER NOT NULL DEFAULT 0,
    hidden INTEGER NOT NULL DEFAULT 0,
    tool_names TEXT
);
"""

V23_MESSAGES = """
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    effect_disposition TEXT,
    timestamp REAL NOT NULL,
    token_count INTEGER,
    finish_reason TEXT,
    reasoning TEXT,
    reasoning_content TEXT,
    reasoning_details TEXT,
    codex_reasoning_items TEXT,
    codex_message_items TEXT,
    platform_message_id TEXT,
    observed INTEGER DEFAULT 0,
    _compressed_summary INTEGER NOT NULL DEFAULT 0,
    active INTEGER NOT NULL DEFAULT 1,
    compacted INTEGER NOT NULL DEFAULT 0,
    api_content TEXT,
    display_kind TEXT,
    display_metadata TEXT,
    display_identity BLOB,
    display_order INTEGER
);
CREATE TABLE session_model_usage (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    model TEXT NOT NULL DEFAULT '',
    billing_provider TEXT NOT NULL DEFAULT '',
    billing_base_url TEXT NOT NULL DEFAULT '',
    billing_mode TEXT NOT NULL DEFAULT '',
    task TEXT NOT NULL DEFAULT '',
    api_call_count INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    estimated_cost_usd REAL NOT NULL DEFAULT 0,
    actual_cost_usd REAL NOT NULL DEFAULT 0,
    first_seen REAL,
    last_seen REAL,
    PRIMARY KEY (session_id, model, billing_provider, billing_base_url, billing_mode, task)
);
CREATE INDEX idx_messages_session_id ON messages(session_id, id);
CREATE INDEX idx_messages_session_active ON messages(session_id, active, timestamp);
"""

V23_FTS = """
CREATE VIEW messages_fts_src AS
    SELECT id,
           CASE WHEN role = 'tool' THEN substr(content, 1, 8192) ELSE content END AS content,
           tool_name, tool_calls
    FROM messages;
CREATE VIRTUAL TABLE messages_fts USING fts5(
    content, tool_name, tool_calls, content='messages_fts_src', content_rowid='id');
CREATE VIEW messages_fts_trigram_src AS
    SELECT m.id AS id, m.content AS content, m.tool_name AS tool_name
    FROM messages m JOIN sessions s ON s.id = m.session_id
    WHERE m.role <> 'tool' AND s.source NOT IN ('cron', 'subagent')
      AND json_extract(coalesce(s.model_config, '{}'), '$._delegate_from') IS NULL;
CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(
    content, tool_name, content='messages_fts_trigram_src', content_rowid='id',
    tokenize='trigram');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content, tool_name, tool_calls) VALUES (new.id,
        CASE WHEN new.role = 'tool' THEN substr(new.content, 1, 8192) ELSE new.content END,
        new.tool_name, new.tool_calls);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls)
    VALUES ('delete', old.id,
        CASE WHEN old.role = 'tool' THEN substr(old.content, 1, 8192) ELSE old.content END,
        old.tool_name, old.tool_calls);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, tool_name, tool_calls, role
ON messages WHEN old.content IS NOT new.content OR old.tool_name IS NOT new.tool_name
    OR old.tool_calls IS NOT new.tool_calls OR old.role IS NOT new.role BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls)
    VALUES ('delete', old.id,
        CASE WHEN old.role = 'tool' THEN substr(old.content, 1, 8192) ELSE old.content END,
        old.tool_name, old.tool_calls);
    INSERT INTO messages_fts(rowid, content, tool_name, tool_calls) VALUES (new.id,
        CASE WHEN new.role = 'tool' THEN substr(new.content, 1, 8192) ELSE new.content END,
        new.tool_name, new.tool_calls);
END;
CREATE TRIGGER messages_fts_trigram_insert AFTER INSERT ON messages WHEN new.role <> 'tool'
BEGIN
    INSERT INTO messages_fts_trigram(rowid, content, tool_name)
    SELECT id, content, tool_name FROM messages_fts_trigram_src WHERE id = new.id;
END;
"""


def build_l1(path: Path, *, wal: bool = False) -> sqlite3.Connection:
    """Create an empty v0.15 (schema 22, inline FTS5) state.db and return a connection."""
    conn = sqlite3.connect(path, isolation_level=None)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(L1_SESSIONS + L1_MESSAGES + COMMON + L1_FTS)
    conn.execute("INSERT INTO schema_version(version) VALUES (22)")
    return conn


def build_v23(path: Path, *, wal: bool = True) -> sqlite3.Connection:
    """Create an empty v23+ (schema 30, external-content FTS5) state.db."""
    conn = sqlite3.connect(path, isolation_level=None)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(V23_SESSIONS + V23_MESSAGES + COMMON + V23_FTS)
    conn.execute("INSERT INTO schema_version(version) VALUES (30)")
    conn.execute("INSERT INTO state_meta(key, value) VALUES ('fts_storage_version', '3')")
    return conn


@dataclass
class Expected:
    """What an importer must reproduce: sessions by id and their messages in order."""

    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    messages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    excluded: int = 0

    @property
    def message_total(self) -> int:
        return sum(len(v) for v in self.messages.values())


def _add_session(conn: sqlite3.Connection, exp: Expected, **row: Any) -> None:
    cols = ", ".join(row)
    conn.execute(
        f"INSERT INTO sessions ({cols}) VALUES ({', '.join('?' * len(row))})", tuple(row.values())
    )
    exp.sessions[row["id"]] = row
    exp.messages.setdefault(row["id"], [])


def _add_message(conn: sqlite3.Connection, exp: Expected, *, keep: bool = True, **row: Any) -> None:
    cols = ", ".join(row)
    conn.execute(
        f"INSERT INTO messages ({cols}) VALUES ({', '.join('?' * len(row))})", tuple(row.values())
    )
    if keep:
        exp.messages[row["session_id"]].append(
            {
                k: row.get(k)
                for k in ("role", "content", "tool_call_id", "tool_calls", "tool_name", "timestamp")
            }
            | {"active": row.get("active", 1), "compacted": row.get("compacted", 0)}
        )
    else:
        exp.excluded += 1


def populate(conn: sqlite3.Connection, *, v23: bool) -> Expected:
    """Fill a fresh state.db with realistic sessions: CJK, tool calls, lineage, interleaving."""
    exp = Expected()
    t0 = 1_741_166_123.456789
    root = "20250305_091523_a1b2c3"
    child = "20250305_101010_d4e5f6"
    cjk = "20250306_080000_0a0b0c0d"
    empty = "20250307_120000_ffeedd"
    _add_session(
        conn,
        exp,
        id=root,
        source="cli",
        model="claude-sonnet-4",
        started_at=t0,
        ended_at=t0 + 3600.25,
        end_reason="compression",
        title="docker deployment plan",
        model_config=json.dumps({"temperature": 0.2}),
    )
    _add_session(
        conn,
        exp,
        id=cjk,
        source="telegram",
        model="qwen-max",
        started_at=t0 + 100,
        ended_at=None,
        end_reason=None,
        title="部署计划 🚀",
    )
    _add_session(
        conn,
        exp,
        id=child,
        source="cli",
        model="claude-sonnet-4",
        started_at=t0 + 3600.5,
        parent_session_id=root,
        ended_at=t0 + 7200,
        end_reason="user_exit",
        title="docker deployment plan #2",
    )
    _add_session(conn, exp, id=empty, source="cron", model=None, started_at=t0 + 9000)

    call = [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"cmd": "docker ps"})},
        }
    ]
    # Interleaved inserts across sessions so global ids are not contiguous per session.
    _add_message(
        conn,
        exp,
        session_id=root,
        role="user",
        timestamp=t0 + 1,
        content="How should we deploy the docker stack next week?",
    )
    _add_message(
        conn,
        exp,
        session_id=cjk,
        role="user",
        timestamp=t0 + 101,
        content="我们下周怎么部署？请用中文回答。日本語と한국어も",
    )
    _add_message(
        conn,
        exp,
        session_id=root,
        role="assistant",
        timestamp=t0 + 2,
        content="",
        tool_calls=json.dumps(call),
    )
    _add_message(
        conn,
        exp,
        session_id=root,
        role="tool",
        timestamp=t0 + 3,
        tool_call_id="call_1",
        tool_name="terminal",
        content="CONTAINER ID   IMAGE\n3f2a  postgres:16\n" + "x" * 9000,
    )
    _add_message(
        conn,
        exp,
        session_id=cjk,
        role="assistant",
        timestamp=t0 + 102,
        content="建议使用蓝绿部署，先在预发环境验证。",
    )
    _add_message(
        conn,
        exp,
        session_id=root,
        role="assistant",
        timestamp=t0 + 4,
        content="Use a blue/green rollout; email ops@example.com first.",
    )
    _add_message(
        conn,
        exp,
        session_id=child,
        role="system",
        timestamp=t0 + 3601,
        content="[CONTEXT COMPACTION] summary of the earlier docker discussion",
    )
    _add_message(conn, exp, session_id=child, role="user", timestamp=t0 + 3602, content=None)
    _add_message(
        conn,
        exp,
        session_id=child,
        role="user",
        timestamp=t0 + 3603,
        content="Same timestamp twice, order must follow ids",
    )
    _add_message(
        conn,
        exp,
        session_id=child,
        role="assistant",
        timestamp=t0 + 3603,
        content='Multi\nline\ttext with "quotes" and \\backslashes\\ and \u2028 sep',
    )
    if v23:
        prompt = "You are Hermes. 你好。"
        conn.execute("INSERT INTO system_prompts(hash, prompt) VALUES ('h1', ?)", (prompt,))
        conn.execute("UPDATE sessions SET system_prompt_hash = 'h1' WHERE id = ?", (root,))
        exp.sessions[root]["system_prompt"] = prompt
        # Rewound turn (active=0, compacted=0): imported with its flags, never searchable.
        _add_message(
            conn,
            exp,
            session_id=child,
            role="user",
            timestamp=t0 + 3604,
            content="undo me",
            active=0,
            compacted=0,
        )
        # Compaction archive row (active=0, compacted=1): still searchable in Hermes, imported.
        _add_message(
            conn,
            exp,
            session_id=root,
            role="user",
            timestamp=t0 + 5,
            content="archived before compaction",
            active=0,
            compacted=1,
        )
        # Hidden UI row: never surfaced by Hermes, not imported.
        _add_message(
            conn,
            exp,
            keep=False,
            session_id=cjk,
            role="user",
            timestamp=t0 + 103,
            content="internal nudge",
            display_kind="hidden",
        )
    return exp
