"""``hermes-memory sessions migrate --to``: SQLite -> PostgreSQL -> SQLite, exact and resumable,
through the installed console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_memory_postgres import PostgresSessionArchive
from hermes_memory_sessions.storage import SessionStore

SCRIPT = shutil.which("hermes-memory", path=str(Path(sys.executable).parent))


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_HOME": str(home), "HERMES_MEMORY_NO_PROGRESS": "1"}
    return subprocess.run(
        [SCRIPT, "--home", str(home), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def snapshot(archive) -> list:
    out = []
    for s in archive.iter_sessions():
        s = {k: v for k, v in s.items() if k != "last_active"}
        out.append((s, archive.get_messages(s["id"])))
    return out


def test_round_trip_sqlite_postgres_sqlite(pg_dsn, owner, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    src = SessionStore(home / "hermes-memory" / "sessions.db")
    src.create_session("root", source="telegram", title="Trip plans", started_at=100.0)
    src.append_message("root", "user", "book the train to 京都", timestamp=101.5)
    src.append_message(
        "root",
        "assistant",
        None,
        tool_calls=[{"id": "c", "function": {"name": "book", "arguments": "{}"}}],
        timestamp=102.25,
    )
    src.end_session("root", "compression")
    src.create_session("child", parent_session_id="root", title="Trip plans #2", started_at=200.0)
    src.append_message("child", "user", "and the hotel", timestamp=201.0)
    before = snapshot(src)
    src.close()

    first = cli(home, "sessions", "migrate", "--to", pg_dsn, "--owner", owner)
    assert first.returncode == 0, first.stderr
    assert "Copied 2 sessions (3 messages)" in first.stdout
    assert "hermes_test:***@" in first.stdout and "hermes_test:hermes_test" not in first.stdout
    again = cli(home, "--json", "sessions", "migrate", "--to", pg_dsn, "--owner", owner)
    assert json.loads(again.stdout)["sessions_skipped"] == 2  # resumable: nothing twice

    pg = PostgresSessionArchive(pg_dsn, owner=owner)
    assert snapshot(pg) == before
    assert pg.find_hits("京都") is not None
    pg.close()

    # back to SQLite, from a home whose archive is the PostgreSQL one
    pg_home = tmp_path / "pg-home"
    pg_home.mkdir()
    (pg_home / "config.yaml").write_text(
        f"sessions:\n  backend: postgres\npostgres:\n  dsn: {pg_dsn}\n  owner: {owner}\n",
        encoding="utf-8",
    )
    back = cli(pg_home, "sessions", "migrate", "--to", str(tmp_path / "back.db"))
    assert back.returncode == 0, back.stderr
    dst = SessionStore(tmp_path / "back.db")
    assert snapshot(dst) == before
    dst.close()
    listed = cli(pg_home, "--json", "sessions", "list")
    assert {r["id"] for r in json.loads(listed.stdout)} == {"root", "child"}


def test_unreachable_target_is_one_line(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    SessionStore(home / "hermes-memory" / "sessions.db").close()
    res = cli(
        home, "sessions", "migrate", "--to", "postgresql://u:pw@127.0.0.1:1/x", "--owner", "o"
    )
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert "pw" not in res.stderr.replace("postgresql", "")


def test_session_column_with_nul_is_refused_by_name(pg_dsn, owner):
    arch = PostgresSessionArchive(pg_dsn, owner=owner)
    with pytest.raises(ValueError, match="column system_prompt holds a NUL"):
        arch.import_session({"id": "z", "system_prompt": "a\x00b"}, [])
    assert arch.get_session("z") is None
    arch.close()
