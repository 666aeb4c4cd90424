"""SessionStore against real SQLite files: schema, sessions, messages, indexes, deletion."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path

import pytest

from hermes_memory_sessions.storage._hermesdb import HermesDatabaseError
from hermes_memory_sessions.storage._schema import (
    META_SCHEMA_KEY,
    SCHEMA_VERSION,
    TOOL_INDEX_PREFIX,
)
from hermes_memory_sessions.storage._store import SessionStore, sanitize_title


@pytest.fixture
def store(tmp_path: Path):
    s = SessionStore(tmp_path / "home" / "hermes-memory" / "sessions.db")
    yield s
    s.close()


def ids(rows):
    return [r["id"] for r in rows]


def check_integrity(store: SessionStore) -> None:
    for table in ("hm_fts_words", "hm_fts_tools", "hm_fts_cjk"):
        store.conn.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")


def test_file_mode_wal_and_tables(store: SessionStore) -> None:
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert store.journal_mode == "wal"
    cols = {r[1] for r in store.conn.execute("PRAGMA table_info(messages)")}
    assert {
        "id",
        "session_id",
        "role",
        "content",
        "tool_call_id",
        "tool_calls",
        "tool_name",
        "timestamp",
    } <= cols
    scols = {r[1] for r in store.conn.execute("PRAGMA table_info(sessions)")}
    assert {
        "id",
        "source",
        "model",
        "parent_session_id",
        "started_at",
        "ended_at",
        "end_reason",
        "message_count",
        "title",
    } <= scols
    assert store.conn.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    meta = store.conn.execute("SELECT value FROM state_meta WHERE key=?", (META_SCHEMA_KEY,))
    assert meta.fetchone()[0] == str(SCHEMA_VERSION)


def test_reopen_keeps_data_and_rejects_newer_schema(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with SessionStore(path) as s:
        s.create_session("s1")
        s.append_message("s1", "user", "hello archive")
    with SessionStore(path) as s:
        assert [m["content"] for m in s.get_messages("s1")] == ["hello archive"]
        s.conn.execute("UPDATE state_meta SET value='99' WHERE key=?", (META_SCHEMA_KEY,))
    with pytest.raises(RuntimeError, match="newer"):
        SessionStore(path)


def test_titles_sanitised_unique_and_bounded(store: SessionStore) -> None:
    assert sanitize_title("  a\u200b b\x07\n c  ") == "a b c"
    assert sanitize_title("   ") is None
    store.create_session("s1", title="项目 🚀 plan")
    assert store.get_session("s1")["title"] == "项目 🚀 plan"
    store.create_session("s2")
    with pytest.raises(ValueError, match="Title '项目 🚀 plan' is already in use by session s1"):
        store.set_title("s2", "项目  🚀 plan")
    with pytest.raises(ValueError, match=r"Title too long \(101"):
        store.set_title("s2", "x" * 101)
    assert store.set_title("s2", "x" * 100) == "x" * 100
    assert store.set_title("s2", "") is None
    assert store.get_session("s2")["title"] is None


def test_append_counts_and_unknown_session(store: SessionStore) -> None:
    store.create_session("s1", started_at=1000.0)
    a = store.append_message("s1", "user", "first", timestamp=1001.0)
    b = store.append_message("s1", "assistant", "", tool_calls=[{"id": "c1"}, {"id": "c2"}])
    c = store.append_message("s1", "tool", "out", tool_call_id="c1", tool_name="terminal")
    assert a < b < c
    sess = store.get_session("s1")
    assert sess["message_count"] == 3
    assert sess["tool_call_count"] == 2
    msgs = store.get_messages("s1")
    assert msgs[1]["tool_calls"] == '[{"id": "c1"}, {"id": "c2"}]'
    assert msgs[2]["tool_name"] == "terminal" and msgs[2]["tool_call_id"] == "c1"
    with pytest.raises(ValueError, match="session_id not found: nope"):
        store.append_message("nope", "user", "x")
    with pytest.raises(ValueError, match="role"):
        store.append_message("s1", "", "x")


def test_create_is_idempotent_and_end_first_writer_wins(store: SessionStore) -> None:
    assert store.create_session("20250305_091523_a1b2c3") == "20250305_091523_a1b2c3"
    store.create_session("20250305_091523_a1b2c3", source="telegram")
    assert store.get_session("20250305_091523_a1b2c3")["source"] == "cli"
    assert store.end_session("20250305_091523_a1b2c3", "user_exit") is True
    assert store.end_session("20250305_091523_a1b2c3", "idle") is False
    assert store.get_session("20250305_091523_a1b2c3")["end_reason"] == "user_exit"
    assert store.resolve_session_id("20250305_0915") == "20250305_091523_a1b2c3"
    store.create_session("20250305_091523_ffffff")
    assert store.resolve_session_id("20250305_0915") is None


def test_import_session_keeps_fields_and_rejects_duplicates(store: SessionStore) -> None:
    session = {
        "id": "imp",
        "source": "telegram",
        "model": "m",
        "title": "Imported",
        "started_at": 100.0,
        "ended_at": 200.0,
        "end_reason": "done",
        "input_tokens": 42,
        "unknown_key": "ignored",
    }
    msgs = [
        {"role": "user", "content": "q", "timestamp": 101.5},
        {"role": "assistant", "content": "a", "timestamp": 102.5, "finish_reason": "stop"},
    ]
    assert store.import_session(session, msgs) == "imp"
    got = store.get_session("imp")
    assert (got["source"], got["ended_at"], got["end_reason"], got["input_tokens"]) == (
        "telegram",
        200.0,
        "done",
        42,
    )
    assert got["message_count"] == 2
    rows = store.get_messages("imp")
    assert [(m["content"], m["timestamp"], m["finish_reason"]) for m in rows] == [
        ("q", 101.5, None),
        ("a", 102.5, "stop"),
    ]
    with pytest.raises(ValueError, match="already exists"):
        store.import_session(session, msgs)
    assert len(store.get_messages("imp")) == 2


def test_list_and_iter_sessions_order(store: SessionStore) -> None:
    for i, t in enumerate([300.0, 100.0, 200.0]):
        store.create_session(f"s{i}", started_at=t)
    assert [s["id"] for s in store.list_sessions()] == ["s0", "s2", "s1"]
    assert [s["id"] for s in store.list_sessions(order="started_asc")] == ["s1", "s2", "s0"]
    assert [s["id"] for s in store.iter_sessions()] == ["s1", "s2", "s0"]
    store.append_message("s1", "user", "late", timestamp=1000.0)
    assert store.list_sessions(order="last_active", limit=1)[0]["id"] == "s1"


def test_word_index_tool_prefix_and_diacritics(store: SessionStore) -> None:
    store.create_session("s1")
    store.append_message("s1", "tool", "x " * (TOOL_INDEX_PREFIX // 2) + " needle", tool_name="t")
    store.append_message("s1", "user", "Café résumé naïve")
    assert store.search_messages("needle", role_filter=["tool"]) == []
    hits = store.search_messages("cafe resume")
    assert [h["role"] for h in hits] == ["user"]
    assert ">>>Café<<<" in hits[0]["snippet"]


def test_cjk_one_two_and_longer_terms(store: SessionStore) -> None:
    store.create_session("s1")
    a = store.append_message("s1", "user", "我们明天部署新版本到生产环境")
    b = store.append_message("s1", "assistant", "好的，先跑测试。部 门 会议")
    c = store.append_message("s1", "user", "修改youer服务端的配置")
    d = store.append_message("s1", "assistant", "日本語のテキストと한국어 문장")
    assert set(ids(store.search_messages("部"))) == {a, b}
    assert ids(store.search_messages("部署")) == [a]
    assert ids(store.search_messages("生产环境")) == [a]
    assert store.search_messages("署新版本到生产环境x") == []
    assert ids(store.search_messages("youer")) == [c]
    assert ids(store.search_messages("youer 服务端")) == [c]
    assert ids(store.search_messages("テキスト")) == [d]
    assert ids(store.search_messages("한국")) == [d]
    assert ">>>部署<<<" in store.search_messages("部署")[0]["snippet"]
    # runs are never glued together: "部署" + "好的" are not adjacent text
    assert store.search_messages("境好") == []


def test_delete_and_prune_leave_no_index_rows(store: SessionStore) -> None:
    store.create_session("parent", started_at=time.time() - 90 * 86400)
    store.create_session("child", parent_session_id="parent")
    store.append_messages(
        "parent",
        [
            {"role": "user", "content": "zebra 斑马 crossing"},
            {"role": "tool", "content": "zebra output 斑马"},
        ],
    )
    store.append_message("child", "user", "child zebra")
    assert store.delete_session("parent") is True
    assert store.delete_session("parent") is False
    assert store.get_session("child")["parent_session_id"] is None
    assert ids(store.search_messages("zebra")) == [3]
    assert store.search_messages("斑马") == []
    assert store.conn.execute("SELECT COUNT(*) FROM hm_cjk_docs").fetchone()[0] == 0
    check_integrity(store)
    old = time.time() - 40 * 86400
    store.create_session("old_ended", started_at=old)
    store.append_message("old_ended", "user", "ancient 古老")
    store.end_session("old_ended", "done")
    store.create_session("old_live", started_at=old)
    assert store.prune(30) == 1
    assert store.get_session("old_ended") is None and store.get_session("old_live")
    assert store.search_messages("古老") == [] and store.search_messages("ancient") == []
    check_integrity(store)


def test_foreign_writers_are_indexed_on_next_open(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with SessionStore(path) as s:
        s.create_session("s1")
        keep = s.append_message("s1", "user", "保留这条")
        gone = s.append_message("s1", "user", "删除这条")
    raw = sqlite3.connect(path)
    raw.execute(
        "INSERT INTO messages(session_id, role, content, timestamp)"
        " VALUES ('s1', 'user', '外部写入的中文', 1.0)"
    )
    raw.execute("DELETE FROM messages WHERE id = ?", (gone,))
    raw.execute("UPDATE messages SET content = '更新后的内容' WHERE id = ?", (keep,))
    raw.commit()
    raw.close()
    with SessionStore(path) as s:
        assert len(s.search_messages("外部")) == 1
        assert s.search_messages("删除") == []
        assert s.search_messages("保留") == []
        assert ids(s.search_messages("更新")) == [keep]
        check_integrity(s)


def test_refuses_to_open_a_hermes_database_and_leaves_it_untouched(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    raw = sqlite3.connect(path)
    raw.executescript("""
        CREATE TABLE schema_version (version INTEGER NOT NULL);
        INSERT INTO schema_version VALUES (11);
        CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT,
            parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
            message_count INTEGER DEFAULT 0, title TEXT);
        CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
            role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT,
            tool_name TEXT, timestamp REAL NOT NULL);
        CREATE VIRTUAL TABLE messages_fts USING fts5(content);
        INSERT INTO sessions(id, source, started_at) VALUES ('h1', 'cli', 1.0);
        INSERT INTO messages(session_id, role, content, timestamp)
            VALUES ('h1', 'user', 'legacy kubernetes 集群 notes', 2.0);
    """)
    raw.commit()
    raw.close()
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    for read_only in (None, True, False):
        with pytest.raises(HermesDatabaseError, match="import --from-hermes"):
            SessionStore(path, read_only=read_only)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_stats(store: SessionStore) -> None:
    store.create_session("s1")
    store.append_message("s1", "user", "héllo")
    st = store.stats()
    assert (st["sessions"], st["messages"], st["text_bytes"]) == (1, 1, len("héllo".encode()))
    assert st["db_size_bytes"] > 0


def test_import_session_keep_ids(store: SessionStore) -> None:
    store.create_session("live")
    first = store.append_message("live", "user", "before")
    msgs = [
        {"id": 500, "role": "user", "content": "kept 保持", "timestamp": 1.0},
        {"id": 501, "role": "assistant", "content": "kept too", "timestamp": 2.0},
    ]
    store.import_session({"id": "k", "started_at": 1.0}, msgs, keep_ids=True)
    assert [m["id"] for m in store.get_messages("k")] == [500, 501]
    assert [h["id"] for h in store.search_messages("保持")] == [500]
    assert store.append_message("live", "user", "after") == 502
    with pytest.raises(ValueError, match=f"message id {first} already exists"):
        store.import_session(
            {"id": "k2"}, [{"id": first, "role": "user", "content": "x"}], keep_ids=True
        )
    assert store.get_session("k2") is None
    with pytest.raises(ValueError, match="integer 'id'"):
        store.import_session({"id": "k3"}, [{"role": "user", "content": "x"}], keep_ids=True)


def test_updates_move_rows_between_indexes(store: SessionStore) -> None:
    store.create_session("s1")
    mid = store.append_message("s1", "tool", "walrus output 海象", tool_name="t")
    assert store.search_messages("walrus", role_filter=["user", "assistant"]) == []
    assert ids(store.search_messages("walrus", role_filter=["tool"])) == [mid]
    store.conn.execute("UPDATE messages SET role = 'assistant' WHERE id = ?", (mid,))
    assert ids(store.search_messages("walrus", role_filter=["assistant"])) == [mid]
    assert store.search_messages("walrus", role_filter=["tool"]) == []
    store.conn.execute("UPDATE messages SET content = 'narwhal 独角鲸' WHERE id = ?", (mid,))
    store.append_message("s1", "user", "flush the CJK queue")  # a write drains it
    assert store.search_messages("walrus") == [] and store.search_messages("海象") == []
    assert ids(store.search_messages("narwhal")) == [mid]
    assert ids(store.search_messages("独角鲸")) == [mid]
    check_integrity(store)


def test_incremental_merge_and_optimize_keep_indexes_correct(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hermes_memory_sessions.storage._connection as connection_module

    monkeypatch.setattr(connection_module, "MERGE_EVERY", 5)
    monkeypatch.setattr(connection_module, "MERGE_PAGES", 2)
    store.create_session("s1")
    for i in range(60):
        store.append_messages(
            "s1",
            [
                {"role": "user", "content": f"otter {i} 水獭"},
                {"role": "tool", "content": f"log otter {i}"},
            ],
        )
    assert len(store.search_messages("otter", role_filter=["user"], limit=100)) == 60
    assert len(store.search_messages("水獭", limit=100)) == 60
    check_integrity(store)
    store.optimize()
    check_integrity(store)
    assert len(store.search_messages("otter", limit=200)) == 120


def test_tail_messages_returns_the_last_n_in_id_order(store: SessionStore) -> None:
    store.create_session("s1", source="cli")
    store.create_session("s2", source="cli")
    store.append_messages("s1", [{"role": "user", "content": f"m{i}"} for i in range(10)])
    store.append_message("s2", "user", "other session")
    store.append_message("s1", "assistant", "last", tool_calls=[{"id": "c1"}])
    tail = store.tail_messages("s1", 3)
    assert [m["content"] for m in tail] == ["m8", "m9", "last"]
    assert tail == store.get_messages("s1")[-3:]
    assert [m["content"] for m in store.tail_messages("s1", 50)] == [
        m["content"] for m in store.get_messages("s1")
    ]
    assert store.tail_messages("s1", 0) == []
    assert store.tail_messages("missing", 5) == []
