"""The text the archive indexes is bounded per message, as tool output already was.

A pasted 240 KB log is stored whole but indexed only up to `MESSAGE_INDEX_PREFIX`
characters (content and tool calls each), so no single message can make every search over
its words slow; an archive indexed before the cap is re-indexed on upgrade, exactly.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes_memory_sessions.storage import SessionStore
from hermes_memory_sessions.storage import _schema as schema

CAP = schema.MESSAGE_INDEX_PREFIX


def _long_message(tail_word: str, cjk_tail: str = "") -> str:
    head = "earlybird " + " ".join(f"w{i}" for i in range(CAP // 4))
    assert len(head) > CAP
    return f"{head} {tail_word} {cjk_tail}"


def _integrity(path: Path) -> None:
    conn = sqlite3.connect(path)
    try:
        for table in ("hm_fts_words", "hm_fts_tools"):
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
    finally:
        conn.close()


def test_words_past_the_cap_are_stored_but_not_indexed(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    with SessionStore(path) as store:
        store.create_session("s")
        text = _long_message("latecomer", "部署在周五")
        store.append_message("s", "user", "短消息：部署在周一")
        store.append_message("s", "user", text)
        store.append_message("s", "assistant", "ok", tool_calls='[{"name": "x"}]')
        assert store.get_messages("s")[1]["content"] == text  # stored whole
        assert store.search_messages("earlybird")
        assert store.search_messages("latecomer") == []
        assert len(store.search_messages("部署")) == 1  # only the short message's
    _integrity(path)
    with SessionStore(path) as store:
        assert store.delete_session("s")
    _integrity(path)


_OLD_WORDS_DDL = """
DROP TRIGGER hm_fts_words_ai;
DROP TRIGGER hm_fts_words_ad;
DROP TRIGGER hm_fts_words_au;
DROP VIEW hm_fts_words_src;
CREATE VIEW hm_fts_words_src AS
    SELECT id, content, tool_name, tool_calls FROM messages WHERE role <> 'tool';
CREATE TRIGGER hm_fts_words_ai AFTER INSERT ON messages WHEN new.role <> 'tool'
BEGIN
    INSERT INTO hm_fts_words(rowid, content, tool_name, tool_calls)
    VALUES (new.id, new.content, new.tool_name, new.tool_calls);
END;
CREATE TRIGGER hm_fts_words_ad AFTER DELETE ON messages WHEN old.role <> 'tool'
BEGIN
    INSERT INTO hm_fts_words(hm_fts_words, rowid, content, tool_name, tool_calls)
    VALUES ('delete', old.id, old.content, old.tool_name, old.tool_calls);
END;
CREATE TRIGGER hm_fts_words_au
AFTER UPDATE OF content, tool_name, tool_calls, role ON messages
WHEN old.content IS NOT new.content OR old.tool_name IS NOT new.tool_name
     OR old.tool_calls IS NOT new.tool_calls OR old.role IS NOT new.role
BEGIN
    INSERT INTO hm_fts_words(hm_fts_words, rowid, content, tool_name, tool_calls)
    SELECT 'delete', old.id, old.content, old.tool_name, old.tool_calls
    WHERE old.role <> 'tool';
    INSERT INTO hm_fts_words(rowid, content, tool_name, tool_calls)
    SELECT new.id, new.content, new.tool_name, new.tool_calls WHERE new.role <> 'tool';
END;
"""


def test_an_archive_indexed_before_the_cap_is_reindexed_on_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with SessionStore(path):
        pass
    # The version-4 layout: the whole text of every message in the word index.
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(_OLD_WORDS_DDL)
    conn.execute("UPDATE state_meta SET value = '4' WHERE key = ?", (schema.META_SCHEMA_KEY,))
    conn.execute("INSERT INTO sessions(id, source, started_at) VALUES ('s', 'cli', 1.0)")
    conn.execute(
        "INSERT INTO messages(session_id, role, content, timestamp) VALUES ('s', 'user', ?, 2.0)",
        (_long_message("latecomer"),),
    )
    conn.execute(
        "INSERT INTO messages(session_id, role, content, tool_calls, timestamp)"
        " VALUES ('s', 'assistant', 'short', ?, 3.0)",
        ("x" * 10 + " callword " + "y " * CAP,),
    )
    conn.close()
    with SessionStore(path) as store:
        assert store.search_messages("earlybird")
        assert store.search_messages("callword")
        assert store.search_messages("latecomer") == []
    _integrity(path)
    with SessionStore(path) as store:  # deleting after the upgrade removes what was indexed
        assert store.delete_session("s")
        assert store.search_messages("earlybird") == []
    _integrity(path)


def test_a_nul_character_does_not_lift_the_cap(tmp_path: Path) -> None:
    # SQLite's length() and substr() stop at U+0000: a long message with one early must not
    # be indexed whole, and a short one keeps every word (tests/backends checks NUL round trips).
    path = tmp_path / "nul.db"
    with SessionStore(path) as store:
        store.create_session("s")
        store.append_message("s", "user", "a\x00 " + _long_message("latecomer"))
        store.append_message("s", "user", "zebra\x00 okapi")
        assert store.search_messages("latecomer") == []
        assert store.search_messages("okapi")
    _integrity(path)
