"""``hermes-memory sessions resume`` and ``sessions undo`` through the console script, on
a real SQLite archive holding a compressed conversation (and on PostgreSQL when reachable)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_memory_sessions.storage import SessionStore

ROOT = "20261201_090000_aaaaaa"
TIP = "20261201_100000_bbbbbb"
OTHER = "20261201_110000_cccccc"
SUMMARY = "[CONTEXT SUMMARY] This is a summary of the earlier part.\n\nWe chose pg_dump."


def seed(s: Any) -> None:
    """A compressed chain ROOT → TIP titled "Backups", and a newer telegram session."""
    s.create_session(ROOT, title="Backups", started_at=1_700_000_000)
    s.append_message(ROOT, "user", "How do I back up postgres?", timestamp=1_700_000_001)
    s.append_message(ROOT, "assistant", "Use pg_dump nightly.", timestamp=1_700_000_002)
    s.end_session(ROOT, "compression")
    s.create_session(TIP, parent_session_id=ROOT, started_at=1_700_000_100)
    rows = [
        {"role": "assistant", "content": SUMMARY, "timestamp": 1_700_000_101},
        {"role": "user", "content": "And how long do I keep them? 保留多久？", "timestamp": 1_700_000_102},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "policy", "arguments": "{}"}}
            ],
            "timestamp": 1_700_000_103,
        },
        {"role": "tool", "content": "7 days", "tool_call_id": "c1", "tool_name": "policy",
         "timestamp": 1_700_000_104},
        {"role": "assistant", "content": "Keep seven daily dumps.", "timestamp": 1_700_000_105},
        {"role": "user", "content": "Thanks! One more: encryption?", "timestamp": 1_700_000_106},
        {"role": "assistant", "content": "Use age.", "timestamp": 1_700_000_107},
    ]  # fmt: skip
    s.append_messages(TIP, rows)
    s.create_session(OTHER, source="telegram", started_at=1_700_000_200)
    s.append_message(OTHER, "user", "hi from telegram", timestamp=1_700_000_201)


@pytest.fixture
def archive(cli) -> Path:
    store = SessionStore(cli.archive)
    seed(store)
    store.close()
    return cli.archive


def test_resume_by_id_prefix_and_title_lands_on_the_tip(cli, archive) -> None:
    for target in (ROOT, TIP, "20261201_09", "Backups", "Backups #2"):
        payload = cli.ok("sessions", "resume", target, "--json").json()
        assert payload["session_id"] == TIP, target
        assert payload["root_session_id"] == ROOT
        assert payload["title"] == "Backups #2"
        messages = payload["messages"]
        assert messages[0] == {"role": "assistant", "content": SUMMARY}
        assert messages[2]["tool_calls"][0]["function"]["name"] == "policy"
        assert messages[3] == {
            "role": "tool",
            "content": "7 days",
            "tool_call_id": "c1",
            "name": "policy",
        }
        assert len(messages) == 7


def test_resume_prints_the_conversation_for_people(cli, archive) -> None:
    out = cli.ok("sessions", "resume", "Backups").out
    assert out.splitlines()[0] == f"{TIP} — Backups #2"
    assert f"7 messages to resume with, continuing {ROOT}" in out
    assert "保留多久" in out and "Keep seven daily dumps." in out
    assert "[tool calls]" in out and "tool (policy)" in out


def test_resume_latest_and_by_source(cli, archive) -> None:
    assert cli.ok("sessions", "resume", "--latest", "--json").json()["session_id"] == OTHER
    payload = cli.ok("sessions", "resume", "--latest", "--source", "cli", "--json").json()
    assert payload["session_id"] == TIP


def test_resume_errors_are_one_line(cli, archive) -> None:
    cli("sessions", "resume", "nothing-like-this").assert_one_line_error("no session matches")
    cli("sessions", "resume", "20261201").assert_one_line_error("ambiguous")
    cli("sessions", "resume").assert_one_line_error("--latest")
    cli("sessions", "resume", ROOT, "--latest").assert_one_line_error("--latest")
    cli("sessions", "resume", ROOT, "--source", "cli").assert_one_line_error("--source")
    cli("sessions", "resume", "--latest", "--source", "discord").assert_one_line_error(
        "no session from source 'discord'"
    )


def test_resume_without_an_archive_changes_nothing(cli) -> None:
    cli("sessions", "resume", "--latest").assert_one_line_error("no session archive")
    assert not cli.archive.exists()


def test_undo_marks_the_last_exchanges_inactive(cli, archive) -> None:
    payload = cli.ok("sessions", "undo", ROOT, "--json").json()
    assert payload == {
        "session_id": TIP,
        "exchanges": 1,
        "messages": 2,
        "user_messages": ["Thanks! One more: encryption?"],
    }
    messages = cli.ok("sessions", "resume", TIP, "--json").json()["messages"]
    assert len(messages) == 5 and messages[-1]["content"] == "Keep seven daily dumps."
    hits = cli.ok("sessions", "search", "encryption", "--json").json()
    assert hits == []

    out = cli.ok("sessions", "undo", TIP[:12], "3").out
    assert f"Undid 1 exchange (4 messages) in {TIP}" in out
    assert "保留多久" in out
    messages = cli.ok("sessions", "resume", TIP, "--json").json()["messages"]
    assert messages == [{"role": "assistant", "content": SUMMARY}]  # the summary stays
    assert "Nothing to undo" in cli.ok("sessions", "undo", TIP).out
    store = SessionStore(cli.archive)
    try:
        row = store.get_session(TIP)
        assert row["message_count"] == 1 and row["rewind_count"] == 2
        assert len(store.get_messages(TIP)) == 7  # nothing deleted
    finally:
        store.close()


def test_undo_takes_back_as_many_exchanges_as_asked(cli, archive) -> None:
    payload = cli.ok("sessions", "undo", TIP, "2", "--json").json()
    assert payload["exchanges"] == 2 and payload["messages"] == 6
    assert sorted(payload["user_messages"]) == [
        "And how long do I keep them? 保留多久？",
        "Thanks! One more: encryption?",
    ]
    messages = cli.ok("sessions", "resume", TIP, "--json").json()["messages"]
    assert messages == [{"role": "assistant", "content": SUMMARY}]


def test_undo_errors_are_one_line(cli, archive) -> None:
    cli("sessions", "undo", "missing").assert_one_line_error("no session matches")
    result = cli("sessions", "undo", ROOT, "0")
    assert result.code == 2 and "Traceback" not in result.err


SCRIPT = shutil.which("hermes-memory", path=str(Path(sys.executable).parent))


def test_resume_and_undo_on_postgres(tmp_path: Path) -> None:
    from hermes_memory_postgres import PostgresSessionArchive
    from hermes_memory_postgres.testing import require_test_dsn

    dsn = require_test_dsn()
    owner = f"test-cli-{os.getpid()}-{tmp_path.name[-8:]}"
    home = tmp_path / "pg-home"
    home.mkdir()
    (home / "config.yaml").write_text(
        f"sessions:\n  backend: postgres\npostgres:\n  owner: {json.dumps(owner)}\n",
        encoding="utf-8",
    )
    archive = PostgresSessionArchive(dsn, owner=owner)
    try:
        seed(archive)
    finally:
        archive.close()
    env = {**os.environ, "HERMES_HOME": str(home), "HERMES_MEMORY_PG_DSN": dsn}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        assert SCRIPT is not None
        return subprocess.run(
            [SCRIPT, *args], env=env, capture_output=True, text=True, timeout=120, check=False
        )

    resumed = run("sessions", "resume", "Backups", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["session_id"] == TIP
    undone = run("sessions", "undo", ROOT, "--json")
    assert undone.returncode == 0, undone.stderr
    assert json.loads(undone.stdout)["messages"] == 2
    again = json.loads(run("sessions", "resume", ROOT, "--json").stdout)
    assert len(again["messages"]) == 5
