"""The Hermes import is incremental, survives odd rows, and cannot be hung by a crafted file;
read-only homes, NUL ids and sessions a crash left open."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_statedb import build_v23, populate

from hermes_memory_sessions.importers._hermes import HermesImportError, import_hermes_db
from hermes_memory_sessions.storage import STALE_END_REASON, ArchiveReadOnly, SessionStore
from hermes_memory_sessions.storage._hermesdb import TimeBudget
from hermes_memory_sessions.tool import session_search

CJK = "20250306_080000_0a0b0c0d"
ROOT = "20250305_091523_a1b2c3"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    s = SessionStore(tmp_path / "ours" / "hermes-memory" / "sessions.db")
    yield s
    s.close()


def source(tmp_path: Path) -> Path:
    (tmp_path / "hermes").mkdir()
    path = tmp_path / "hermes" / "state.db"
    conn = build_v23(path, wal=True)
    populate(conn, v23=True)
    conn.close()
    return path


def hermes_write(path: Path, sql: str, *params: object) -> None:
    conn = sqlite3.connect(path)
    conn.execute(sql, params)
    conn.commit()
    conn.close()


def hermes_message(path: Path, sid: str, role: str, content: str, timestamp: float) -> None:
    """Hermes records one more message in session ``sid``."""
    hermes_write(
        path,
        "INSERT INTO messages(session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
        sid,
        role,
        content,
        timestamp,
    )


def test_rerun_imports_new_sessions_and_appended_messages_only(
    tmp_path: Path, store: SessionStore
) -> None:
    path = source(tmp_path)
    first = import_hermes_db(path, store)
    assert first.sessions_imported == 4
    before = {sid: len(store.get_messages(sid)) for sid in (CJK, ROOT)}
    # Hermes goes on: two messages in an imported (open) session, a new session, an end
    hermes_message(path, CJK, "user", "第二天的问题", 1_741_300_000.0)
    hermes_message(path, CJK, "assistant", "答案", 1_741_300_001.0)
    hermes_write(
        path, "INSERT INTO sessions(id, source, started_at) VALUES ('new1', 'cli', 1741300100)"
    )
    hermes_write(
        path,
        "INSERT INTO messages(session_id, role, content, timestamp) VALUES ('new1', 'user', ?, ?)",
        "brand new",
        1_741_300_101.0,
    )
    hermes_write(
        path,
        "UPDATE sessions SET ended_at = 1741300200, end_reason = 'cli_close' WHERE id = ?",
        CJK,
    )
    second = import_hermes_db(path, store)
    assert second.sessions_imported == 1
    assert second.sessions_updated == 1
    assert second.messages_imported == 3
    assert [m["content"] for m in store.get_messages(CJK)][-2:] == ["第二天的问题", "答案"]
    assert len(store.get_messages(CJK)) == before[CJK] + 2
    assert len(store.get_messages(ROOT)) == before[ROOT]
    cjk = store.get_session(CJK)
    assert (
        cjk is not None
        and cjk["end_reason"] == "cli_close"
        and cjk["message_count"] == len(store.get_messages(CJK))
    )
    assert store.search_messages("第二天")
    third = import_hermes_db(path, store)
    assert (third.sessions_imported, third.messages_imported, third.sessions_updated) == (0, 0, 0)
    assert store.stats()["messages"] == first.messages_imported + 3


def test_a_session_the_archive_recorded_itself_is_never_doubled(
    tmp_path: Path, store: SessionStore
) -> None:
    path = source(tmp_path)
    store.create_session(CJK, source="telegram")  # the sessions provider recorded it live
    store.append_message(CJK, "user", "我们下周怎么部署？")
    import_hermes_db(path, store)
    hermes_write(
        path,
        "INSERT INTO messages(session_id, role, content, timestamp) VALUES (?, 'user', 'later', 9)",
        CJK,
    )
    again = import_hermes_db(path, store)
    assert CJK in again.sessions_skipped
    assert [m["content"] for m in store.get_messages(CJK)] == ["我们下周怎么部署？"]


def test_a_replaced_source_file_is_imported_as_new(tmp_path: Path, store: SessionStore) -> None:
    path = source(tmp_path)
    import_hermes_db(path, store)
    path.unlink()
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE sessions(id TEXT PRIMARY KEY, source TEXT, started_at REAL);"
        "CREATE TABLE messages(id INTEGER PRIMARY KEY, session_id TEXT, role TEXT,"
        " content TEXT, timestamp REAL);"
        "INSERT INTO sessions VALUES ('fresh', 'cli', 5);"
        "INSERT INTO messages VALUES (1, 'fresh', 'user', 'restarted ids', 6);"
    )
    conn.close()
    report = import_hermes_db(path, store)
    assert report.sessions_imported == 1 and report.messages_imported == 1
    assert any("different or rebuilt" in w for w in report.warnings)


def odd_source(tmp_path: Path) -> Path:
    """A Hermes-like file without type affinity, so odd values stay as they were written."""
    path = tmp_path / "odd.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE sessions(id, source, started_at, title, input_tokens);"
        "CREATE TABLE messages(id INTEGER PRIMARY KEY AUTOINCREMENT, session_id, role, content,"
        " tool_calls, token_count, timestamp);"
    )
    rows = [
        ("good", "cli", 1.0, "标题", 12),
        (b"\xff\xfe", "cli", 2.0, None, None),  # BLOB id, not UTF-8
        ("nul\x00id", "cli", 3.0, None, None),  # NUL in the id
        ("oddsession", 7, "yesterday", b"\xc3\xa9t\xc3\xa9", "many"),
    ]
    conn.executemany("INSERT INTO sessions VALUES (?, ?, ?, ?, ?)", rows)
    messages = [
        ("good", "user", "plain text", None, 3, 10.0),
        ("good", "assistant", b"\xe4\xbd\xa0\xe5\xa5\xbd", None, None, 11.0),  # UTF-8 BLOB
        ("good", "assistant", b"\x00\xff\x80", None, None, 12.0),  # binary BLOB
        ("good", None, "no role", None, None, 13.0),
        ("good", "user", 42, None, None, 14.0),  # an integer where text belongs
        ("good", "user", "no timestamp", None, "x", None),
        ("good", "tool", "tool out", b"\xff", 1.5, 15.0),
        ("nul\x00id", "user", "lost with its session", None, None, 16.0),
        ("oddsession", "user", "kept", None, None, "17.5"),
    ]
    conn.executemany(
        "INSERT INTO messages(session_id, role, content, tool_calls, token_count, timestamp)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        messages,
    )
    conn.commit()
    conn.close()
    return path


def test_odd_values_give_per_row_errors_and_the_rest_imports(
    tmp_path: Path, store: SessionStore
) -> None:
    report = import_hermes_db(odd_source(tmp_path), store)
    assert report.sessions_imported == 2
    assert report.sessions_failed == 2
    assert report.messages_failed == 3  # binary content, NULL role, the NUL session's message
    contents = [m["content"] for m in store.get_messages("good")]
    assert contents == ["plain text", "你好", "42", "no timestamp", "tool out"]
    msgs = store.get_messages("good")
    assert msgs[3]["timestamp"] == 14.0  # the previous message's
    assert msgs[4]["tool_calls"] is None
    odd = store.get_session("oddsession")
    assert odd is not None
    assert odd["title"] == "été" and odd["source"] == "7" and odd["input_tokens"] in (0, None)
    assert store.get_messages("oddsession")[0]["timestamp"] == 17.5
    text = "\n".join(report.errors)
    assert "binary data" in text and "role is missing" in text and "U+0000" in text
    assert "session 'nul\\x00id'" in text
    assert store.resolve_session_id("nul") is None  # never reached by a prefix


def test_views_named_like_hermes_tables_are_refused_without_hanging(
    tmp_path: Path, store: SessionStore
) -> None:
    path = tmp_path / "trap.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE sessions(id TEXT PRIMARY KEY, source TEXT, started_at REAL);"
        "CREATE VIEW messages(id, session_id, role, content, timestamp) AS"
        " WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)"
        " SELECT i, 's', 'user', 'x', 0.0 FROM n;"
    )
    conn.close()
    with pytest.raises(HermesImportError, match="'messages' is a view, not a table"):
        import_hermes_db(path, store)


def test_the_time_budget_interrupts_an_endless_query(tmp_path: Path) -> None:
    conn = sqlite3.connect(":memory:")
    budget = TimeBudget(conn, 0.2)
    budget.arm()
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):
        conn.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n"
        ).fetchone()
    budget.arm()
    assert conn.execute("SELECT 1").fetchone() == (1,)  # re-armed: ordinary queries run


def test_an_import_past_its_budget_is_a_clear_error(tmp_path: Path, store: SessionStore) -> None:
    path = source(tmp_path)
    conn = sqlite3.connect(path)
    conn.executemany(
        "INSERT INTO messages(session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
        [(ROOT, f"filler {i}", float(i)) for i in range(3000)],
    )
    conn.commit()
    conn.close()
    with pytest.raises(HermesImportError, match="took longer than 0 s"):
        import_hermes_db(path, store, step_budget_s=0)


@contextlib.contextmanager
def immutable_dir(directory: Path) -> Iterator[None]:
    """A directory nobody can write: chmod for users; root needs chattr +i (else skip)."""
    if os.geteuid() != 0:
        directory.chmod(0o555)
        try:
            yield
        finally:
            directory.chmod(0o755)
        return
    if shutil.which("chattr") is None:
        pytest.skip("running as root without chattr: cannot make a directory read-only")
    res = subprocess.run(["chattr", "+i", str(directory)], capture_output=True, check=False)
    if res.returncode != 0:
        pytest.skip(f"chattr +i unsupported here: {res.stderr.decode().strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(directory)], check=True)


def test_session_search_answers_from_a_read_only_home(tmp_path: Path) -> None:
    archive = tmp_path / "home" / "hermes-memory" / "sessions.db"
    with SessionStore(archive) as s:
        s.create_session("s1", started_at=time.time() - 60)
        s.append_message("s1", "user", "the deploy window is Friday 部署窗口")
        s.append_message("s1", "assistant", "noted")
    assert not Path(f"{archive}-wal").exists()
    before = sorted(p.name for p in archive.parent.iterdir())
    with immutable_dir(archive.parent):
        with pytest.raises(OSError):
            (archive.parent / "probe").write_text("x")
        s = SessionStore(archive)
        try:
            assert s.read_only
            out = json.loads(session_search({"query": "部署"}, store=s))
            assert out["success"] is True and out["count"] == 1, out
            out = json.loads(session_search({"query": "deploy window"}, store=s))
            assert out["results"][0]["session_id"] == "s1"
            with pytest.raises(ArchiveReadOnly, match="read-only"):
                s.append_message("s1", "user", "cannot be recorded")
        finally:
            s.close()
    assert sorted(p.name for p in archive.parent.iterdir()) == before  # no -wal/-shm made


def test_read_only_store_is_forced_and_refuses_writes(tmp_path: Path) -> None:
    archive = tmp_path / "a.db"
    with SessionStore(archive) as s:
        s.create_session("s1")
    with SessionStore(archive, read_only=True) as s:
        assert s.get_session("s1") is not None
        with pytest.raises(ArchiveReadOnly):
            s.end_session("s1", "x")


@pytest.mark.parametrize("bad", ["abc\x00def", "abc\x00", "\x00", "ab\ncd", "ab\x1b[31m"])
def test_control_characters_in_session_ids_are_refused(store: SessionStore, bad: str) -> None:
    store.create_session("abc-real")
    with pytest.raises(ValueError, match="control character"):
        store.resolve_session_id(bad)
    with pytest.raises(ValueError, match="control character"):
        store.create_session(bad)
    out = json.loads(session_search({"session_id": bad, "around_message_id": 1}, store=store))
    assert out["success"] is False and "control character" in out["error"]


def test_stale_sessions_are_ended_and_then_pruned(store: SessionStore) -> None:
    now = time.time()
    store.create_session("crashed", started_at=now - 40 * 86400)
    store.append_message("crashed", "user", "last words", timestamp=now - 39 * 86400)
    store.create_session("live", started_at=now - 40 * 86400)
    store.append_message("live", "user", "still typing", timestamp=now - 60)
    store.create_session("done", started_at=now - 40 * 86400)
    store.end_session("done", "user_exit")
    assert store.prune(30) == 1  # only the ended one
    assert store.count_open_sessions(30) == 2
    assert store.end_stale_sessions(24) == ["crashed"]
    crashed = store.get_session("crashed")
    assert crashed is not None
    assert crashed["end_reason"] == STALE_END_REASON
    assert crashed["ended_at"] == pytest.approx(now - 39 * 86400)
    assert store.end_stale_sessions(24) == []
    assert store.prune(30) == 1
    assert store.get_session("live") is not None and store.count_open_sessions() == 1
    with pytest.raises(ValueError):
        store.end_stale_sessions(-1)


def test_a_writer_appearing_during_an_immutable_read_restarts_safely(
    tmp_path: Path, store: SessionStore
) -> None:
    path = source(tmp_path)
    live: list[sqlite3.Connection] = []

    def hermes_starts(done: int, total: int) -> None:
        if done and not live:  # after the first batch: Hermes opens the file and writes
            conn = sqlite3.connect(path, isolation_level=None)
            conn.execute("PRAGMA wal_autocheckpoint=0")
            conn.execute(
                "INSERT INTO messages(session_id, role, content, timestamp)"
                " VALUES (?, 'user', 'written while we read', 99.0)",
                (CJK,),
            )
            live.append(conn)

    try:
        report = import_hermes_db(path, store, progress=hermes_starts)
    finally:
        for conn in live:
            conn.close()
    assert live, "the writer never started"
    assert report.read_mode == "ro"
    assert "changed while it was read" in report.warnings[0]
    contents = [m["content"] for s in store.list_sessions() for m in store.get_messages(s["id"])]
    assert len(contents) == len(set(contents))  # nothing doubled by the restart
    assert "written while we read" in contents
    assert store.stats()["messages"] == len(contents)


def test_the_check_sees_new_messages_in_a_session_imported_before(
    tmp_path: Path, store: SessionStore
) -> None:
    # What the notice and follow_hermes ask: Hermes added to a session already imported.
    from hermes_memory_sessions.importers import pending_hermes_import

    path = source(tmp_path)
    import_hermes_db(path, store)
    before = pending_hermes_import(path.parent, store)
    assert before is not None and before.updated == 0
    hermes_message(path, CJK, "user", "第二天的问题", 1_741_300_000.0)
    after = pending_hermes_import(path.parent, store)
    assert after is not None
    assert (after.missing, after.updated) == (before.missing, 1) and after.behind
