"""import_hermes_db against real Hermes-shaped state.db files (L1 inline FTS and v23+)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_statedb import Expected, build_l1, build_v23, populate

from hermes_memory_sessions.importers._hermes import (
    HermesImportError,
    ImportReport,
    import_hermes_db,
)
from hermes_memory_sessions.storage._store import SessionStore

SESSION_KEYS = (
    "id",
    "source",
    "model",
    "model_config",
    "title",
    "parent_session_id",
    "started_at",
    "ended_at",
    "end_reason",
)
MESSAGE_KEYS = (
    "role",
    "content",
    "tool_call_id",
    "tool_calls",
    "tool_name",
    "timestamp",
    "active",
    "compacted",
)


def fingerprint(directory: Path) -> dict[str, tuple[int, int, str]]:
    """Name -> (size, mtime_ns, sha256) of every file in ``directory``."""
    out = {}
    for p in sorted(directory.iterdir()):
        data = p.read_bytes()
        st = p.stat()
        out[p.name] = (st.st_size, st.st_mtime_ns, hashlib.sha256(data).hexdigest())
    return out


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    s = SessionStore(tmp_path / "archive" / "sessions.db")
    yield s
    s.close()


def make_source(tmp_path: Path, *, v23: bool, wal: bool) -> tuple[Path, Expected]:
    src_dir = tmp_path / "hermes"
    src_dir.mkdir()
    path = src_dir / "state.db"
    conn = (build_v23 if v23 else build_l1)(path, wal=wal)
    exp = populate(conn, v23=v23)
    conn.close()  # a clean close of a WAL database removes -wal/-shm
    return path, exp


def assert_imported(store: SessionStore, exp: Expected) -> None:
    for sid, row in exp.sessions.items():
        got = store.get_session(sid)
        assert got is not None, sid
        for key in SESSION_KEYS:
            assert got[key] == row.get(key), (sid, key)
        if "system_prompt" in row:
            assert got["system_prompt"] == row["system_prompt"]
        msgs = store.get_messages(sid)
        assert [{k: m[k] for k in MESSAGE_KEYS} for m in msgs] == exp.messages[sid], sid
        # Hermes' meaning: the live conversation (rows archived by compaction not counted)
        assert got["message_count"] == sum(1 for m in msgs if m["active"])
        # the original order survives as increasing archive ids
        assert [m["id"] for m in msgs] == sorted(m["id"] for m in msgs)


@pytest.mark.parametrize(("v23", "wal"), [(False, False), (False, True), (True, True)])
def test_import_reproduces_sessions_and_messages(
    tmp_path: Path, store: SessionStore, v23: bool, wal: bool
) -> None:
    path, exp = make_source(tmp_path, v23=v23, wal=wal)
    before = fingerprint(path.parent)

    report = import_hermes_db(path, store)

    assert fingerprint(path.parent) == before  # nothing written, no -wal/-shm created
    assert report.layout == ("hermes-v23" if v23 else "hermes-l1")
    assert report.schema_version == (30 if v23 else 22)
    assert report.read_mode == ("immutable" if wal else "ro")
    assert report.sessions_total == report.sessions_imported == len(exp.sessions)
    assert report.messages_imported == exp.message_total
    assert report.messages_excluded == exp.excluded == (1 if v23 else 0)
    assert report.sessions_skipped == []
    assert report.warnings == []
    assert_imported(store, exp)


def test_imported_archive_is_searchable_with_lineage(tmp_path: Path, store: SessionStore) -> None:
    path, _ = make_source(tmp_path, v23=True, wal=True)
    import_hermes_db(path, store)
    assert store.lineage_root("20250305_101010_d4e5f6") == "20250305_091523_a1b2c3"
    cjk_ids = {
        m["id"]
        for m in store.get_messages("20250306_080000_0a0b0c0d")
        if "蓝绿部署" in (m["content"] or "")
    }
    assert cjk_ids
    assert cjk_ids <= {h["id"] for h in store.search_messages("部署")}
    hits = store.search_messages("docker")
    assert "20250305_091523_a1b2c3" in {h["session_id"] for h in hits}
    # the rewound row is imported (get_messages) but never searchable
    assert "undo me" in [m["content"] for m in store.get_messages("20250305_101010_d4e5f6")]
    assert not store.search_messages("undo")


def test_live_wal_writer_is_read_through_its_sidecars(tmp_path: Path, store: SessionStore) -> None:
    path, exp = make_source(tmp_path, v23=True, wal=True)
    live = sqlite3.connect(path, isolation_level=None)
    try:
        live.execute("PRAGMA wal_autocheckpoint=0")
        live.execute(
            "INSERT INTO messages(session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
            ("20250307_120000_ffeedd", "user", "only in the WAL so far", 1.5),
        )
        assert Path(str(path) + "-wal").stat().st_size > 0
        before = fingerprint(path.parent)
        report = import_hermes_db(path, store)
        assert report.read_mode == "ro"
        after = fingerprint(path.parent)
        # the reader may touch the shared-memory index, never the database or its WAL
        assert {k: v for k, v in after.items() if not k.endswith("-shm")} == {
            k: v for k, v in before.items() if not k.endswith("-shm")
        }
        assert set(after) == set(before)
    finally:
        live.close()
    msgs = store.get_messages("20250307_120000_ffeedd")
    assert [m["content"] for m in msgs] == ["only in the WAL so far"]
    assert report.messages_imported == exp.message_total + 1


def crashed_wal_copy(tmp_path: Path) -> Path:
    """A WAL database whose -wal holds committed rows but whose -shm is gone (crash)."""
    path, _ = make_source(tmp_path, v23=True, wal=True)
    live = sqlite3.connect(path, isolation_level=None)
    live.execute("PRAGMA wal_autocheckpoint=0")
    live.execute(
        "INSERT INTO messages(session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
        ("20250307_120000_ffeedd", "user", "recovered from the WAL", 2.5),
    )
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    shutil.copyfile(path, crashed / "state.db")
    shutil.copyfile(str(path) + "-wal", crashed / "state.db-wal")
    live.close()
    return crashed / "state.db"


def test_wal_without_shm_is_read_from_a_private_snapshot(
    tmp_path: Path, store: SessionStore
) -> None:
    path = crashed_wal_copy(tmp_path)
    before = fingerprint(path.parent)
    report = import_hermes_db(path, store)
    assert report.read_mode == "snapshot"
    assert fingerprint(path.parent) == before
    msgs = store.get_messages("20250307_120000_ffeedd")
    assert [m["content"] for m in msgs] == ["recovered from the WAL"]


@contextlib.contextmanager
def read_only_dir(directory: Path) -> Iterator[None]:
    """Make ``directory`` unwritable (chmod for users, the immutable attribute for root)."""
    if os.geteuid() != 0:
        directory.chmod(0o555)
        try:
            yield
        finally:
            directory.chmod(0o755)
        return
    if shutil.which("chattr") is None:
        pytest.skip("running as root without chattr: cannot make a directory read-only")
    res = subprocess.run(["chattr", "+i", str(directory)], capture_output=True)
    if res.returncode != 0:
        pytest.skip(f"chattr +i unsupported here: {res.stderr.decode().strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(directory)], check=True)


def assert_dir_is_read_only(directory: Path) -> None:
    with pytest.raises(OSError):
        (directory / "probe").write_text("x")


@pytest.mark.parametrize("kind", ["clean-wal", "crashed-wal", "rollback"])
def test_read_only_source_directory(tmp_path: Path, store: SessionStore, kind: str) -> None:
    if kind == "crashed-wal":
        path = crashed_wal_copy(tmp_path)
        expected_messages = None
    else:
        path, exp = make_source(tmp_path, v23=kind == "clean-wal", wal=kind == "clean-wal")
        expected_messages = exp.message_total
    before = fingerprint(path.parent)
    with read_only_dir(path.parent):
        assert_dir_is_read_only(path.parent)
        report = import_hermes_db(path, store)
    assert fingerprint(path.parent) == before
    assert report.sessions_imported == 4
    if expected_messages is not None:
        assert report.messages_imported == expected_messages
    else:
        assert store.get_messages("20250307_120000_ffeedd")[0]["content"] == (
            "recovered from the WAL"
        )


def test_rerun_skips_existing_sessions(tmp_path: Path, store: SessionStore) -> None:
    path, exp = make_source(tmp_path, v23=False, wal=False)
    first = import_hermes_db(path, store)
    second = import_hermes_db(path, store)
    assert first.sessions_imported == 4
    assert second.sessions_imported == 0
    assert second.messages_imported == 0
    assert sorted(second.sessions_skipped) == sorted(exp.sessions)
    assert second.messages_skipped == exp.message_total
    assert "skipped 4 already in the archive" in second.summary()
    assert store.stats()["messages"] == exp.message_total  # no duplicates


def test_skip_existing_false_refuses_before_writing(tmp_path: Path, store: SessionStore) -> None:
    path, _ = make_source(tmp_path, v23=False, wal=False)
    store.create_session("20250306_080000_0a0b0c0d", source="cli")
    with pytest.raises(ValueError, match="already exist"):
        import_hermes_db(path, store, skip_existing=False)
    assert store.stats()["sessions"] == 1


def test_title_taken_in_archive_is_renamed_and_reported(
    tmp_path: Path, store: SessionStore
) -> None:
    path, _ = make_source(tmp_path, v23=False, wal=False)
    store.create_session("mine", title="docker deployment plan")
    report = import_hermes_db(path, store)
    assert report.sessions_imported == 4
    got = store.get_session("20250305_091523_a1b2c3")
    assert got is not None
    assert got["title"] == "docker deployment plan (imported)"
    assert len(report.warnings) == 1
    assert "already used" in report.warnings[0]
    assert len(store.get_messages("20250305_091523_a1b2c3")) == 4  # no duplicated rows


def test_children_before_parents_and_dangling_parent(tmp_path: Path, store: SessionStore) -> None:
    path = tmp_path / "state.db"
    conn = build_l1(path)
    rows = [
        ("child", "parent", 10.0),  # inserted (and started) before its parent
        ("parent", None, 20.0),
        ("orphan", "deleted-long-ago", 5.0),
    ]
    for sid, parent, started in rows:
        conn.execute(
            "INSERT INTO sessions(id, source, parent_session_id, started_at) VALUES (?, 'cli', ?, ?)",
            (sid, parent, started),
        )
        conn.execute(
            "INSERT INTO messages(session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
            (sid, f"hello from {sid}", started),
        )
    conn.close()
    order: list[str] = []
    original = store.import_session

    def spy(session, messages, **kwargs):  # records the order the importer writes sessions in
        order.append(session["id"])
        return original(session, messages, **kwargs)

    store.import_session = spy  # type: ignore[method-assign]
    report = import_hermes_db(path, store)
    assert order.index("parent") < order.index("child")
    assert store.lineage_root("child") == "parent"
    orphan = store.get_session("orphan")
    assert orphan is not None
    assert orphan["parent_session_id"] == "deleted-long-ago"
    assert any("deleted-long-ago" in w for w in report.warnings)


def test_progress_counts_every_message_in_batches(tmp_path: Path, store: SessionStore) -> None:
    path = tmp_path / "state.db"
    conn = build_v23(path, wal=False)
    conn.execute("INSERT INTO sessions(id, source, started_at) VALUES ('big', 'cli', 1.0)")
    conn.execute("INSERT INTO sessions(id, source, started_at) VALUES ('small', 'cli', 2.0)")
    conn.executemany(
        "INSERT INTO messages(session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
        [
            ("big" if i % 5 else "small", "user" if i % 2 else "assistant", f"m{i} 消息", i)
            for i in range(2600)
        ],
    )
    conn.close()
    calls: list[tuple[int, int]] = []
    report = import_hermes_db(path, store, progress=lambda d, t: calls.append((d, t)))
    assert report.messages_imported == 2600
    assert calls[0] == (0, 2600)
    assert calls[-1] == (2600, 2600)
    assert len(calls) >= 4  # 2080 "big" rows come in three batches
    done = [d for d, _ in calls]
    assert done == sorted(done)
    assert [m["content"] for m in store.get_messages("small")][:2] == ["m0 消息", "m5 消息"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "not a SQLite database"),
        (b"id,role,content\n1,user,hi\n" * 20, "not a SQLite database"),
        (None, "not a Hermes state.db: no 'sessions' or 'messages' table"),
        ("nocols", "lacks column(s) started_at"),
        ("corrupt", "damaged"),
    ],
)
def test_bad_sources_raise_a_clear_error(
    tmp_path: Path, store: SessionStore, content: bytes | str | None, expected: str
) -> None:
    path = tmp_path / "state.db"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is None:
        sqlite3.connect(path).execute("CREATE TABLE notes(x)").connection.close()
    elif content == "nocols":
        c = sqlite3.connect(path)
        c.executescript(
            "CREATE TABLE sessions(id TEXT PRIMARY KEY, source TEXT);"
            "CREATE TABLE messages(id INTEGER PRIMARY KEY, session_id TEXT, role TEXT,"
            " content TEXT, timestamp REAL);"
        )
        c.close()
    else:
        conn = build_l1(path)
        populate(conn, v23=False)
        conn.executemany(
            "INSERT INTO messages(session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
            [("20250305_091523_a1b2c3", "user", "filler " * 200, float(i)) for i in range(400)],
        )
        conn.close()
        data = bytearray(path.read_bytes())
        page = 4096
        for start in range(2 * page, len(data) - page, page):  # keep the header page intact
            data[start + 8 : start + page] = b"\xa5" * (page - 8)
        path.write_bytes(bytes(data))
    with pytest.raises(HermesImportError) as info:
        import_hermes_db(path, store)
    message = str(info.value)
    assert expected in message
    assert str(path) in message
    assert "\n" not in message


def test_missing_file(tmp_path: Path, store: SessionStore) -> None:
    with pytest.raises(HermesImportError, match="no such file"):
        import_hermes_db(tmp_path / "nope.db", store)
    assert not (tmp_path / "nope.db").exists()


def test_error_in_a_subprocess_is_one_line(tmp_path: Path) -> None:
    """What a CLI wrapper prints: the exception text, no traceback needed."""
    bad = tmp_path / "state.db"
    bad.write_text("definitely not sqlite")
    code = (
        "import sys\n"
        "from hermes_memory_sessions.importers._hermes import HermesImportError, import_hermes_db\n"
        "from hermes_memory_sessions.storage._store import SessionStore\n"
        "s = SessionStore(sys.argv[2])\n"
        "try:\n"
        "    import_hermes_db(sys.argv[1], s)\n"
        "except HermesImportError as e:\n"
        "    print(e); sys.exit(2)\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code, str(bad), str(tmp_path / "a.db")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 2
    assert res.stderr == ""
    assert res.stdout.strip() == f"{bad} is not a SQLite database, so not a Hermes state.db"


def test_report_as_dict_round_trips_counts(tmp_path: Path, store: SessionStore) -> None:
    path, exp = make_source(tmp_path, v23=True, wal=False)
    report = import_hermes_db(str(path), store)
    d = report.as_dict()
    assert d["messages_imported"] == exp.message_total
    assert d["layout"] == "hermes-v23"
    assert isinstance(report, ImportReport)
    assert "imported 4 sessions" in report.summary()


def test_credentials_in_hermes_history_are_masked_on_import(
    tmp_path: Path, store: SessionStore
) -> None:
    """Another program's history feeds our prompts through session_search: no secret enters."""
    path, _ = make_source(tmp_path, v23=False, wal=False)
    key = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"  # assembled: a test value, not a credential
    conn = sqlite3.connect(path)
    sid = conn.execute("SELECT id FROM sessions ORDER BY started_at LIMIT 1").fetchone()[0]
    conn.execute(
        "INSERT INTO messages(session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
        (sid, f"the stripe key is {key}, 密码是 Hunter2!x", 1764500000.0),
    )
    conn.commit()
    conn.close()

    report = import_hermes_db(path, store)

    texts = [m["content"] or "" for m in store.get_messages(sid)]
    assert not any(key in t for t in texts)
    assert not any("Hunter2!x" in t for t in texts)
    assert any("[redacted]" in t for t in texts)
    assert report.messages_masked == 1
    assert "credentials masked in 1 messages" in report.summary()


def test_a_credential_in_a_session_title_is_masked_on_import(
    tmp_path: Path, store: SessionStore
) -> None:
    """Titles reach the model too (session_search browse)."""
    path, _ = make_source(tmp_path, v23=False, wal=False)
    key = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"  # assembled: a test value
    conn = sqlite3.connect(path)
    sid = conn.execute("SELECT id FROM sessions ORDER BY started_at LIMIT 1").fetchone()[0]
    conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (f"rotate {key}", sid))
    conn.commit()
    conn.close()
    import_hermes_db(path, store)
    title = (store.get_session(sid) or {}).get("title") or ""
    assert key not in title and "[redacted]" in title


def test_a_password_in_tool_call_arguments_is_masked_on_import(
    tmp_path: Path, store: SessionStore
) -> None:
    """Tool calls are stored as JSON text whose arguments are JSON text again: the quotes
    around ``"password"`` are escaped twice, and the password must still be recognised."""
    path, _ = make_source(tmp_path, v23=False, wal=False)
    secret = "Tr0ub4dor&3xyz"
    calls = json.dumps(
        [{"id": "c1", "type": "function", "function": {
            "name": "login", "arguments": json.dumps({"user": "ops", "password": secret}),
        }}]
    )  # fmt: skip
    conn = sqlite3.connect(path)
    sid = conn.execute("SELECT id FROM sessions ORDER BY started_at LIMIT 1").fetchone()[0]
    conn.execute(
        "INSERT INTO messages(session_id, role, content, tool_calls, timestamp)"
        " VALUES (?, 'assistant', '', ?, ?)",
        (sid, calls, 1764500000.0),
    )
    conn.commit()
    conn.close()

    report = import_hermes_db(path, store)

    stored = [m for m in store.get_messages(sid) if m["role"] == "assistant" and m["tool_calls"]]
    assert stored
    assert not any(secret in json.dumps(m["tool_calls"]) for m in stored)
    assert report.messages_masked == 1
