"""One history from the first command: Hermes' state.db in the home is noticed or followed."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from hermes_memory_sessions.provider import SessionArchiveProvider
from hermes_memory_sessions.storage._store import SessionStore


def _builders():
    path = Path(__file__).resolve().parents[1] / "sessions" / "hermes_statedb.py"
    spec = importlib.util.spec_from_file_location("_hermes_statedb_for_follow", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _state(home: Path, *, wal: bool = False) -> tuple[Path, int]:
    builders = _builders()
    state = home / "state.db"
    conn = builders.build_v23(state, wal=wal)
    expected = builders.populate(conn, v23=True)
    conn.close()
    os.chmod(state, 0o444)  # any attempt to write it would fail loudly
    return state, len(expected.sessions)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _untouched(state: Path, digest: str) -> None:
    assert _digest(state) == digest
    for suffix in ("-wal", "-shm", "-journal"):
        assert not Path(f"{state}{suffix}").exists()


@pytest.mark.parametrize(
    "command", [("sessions", "list"), ("sessions", "search", "docker"), ("sessions", "stats")]
)
def test_read_commands_say_how_to_bring_the_history_in(cli, home, command):
    state, total = _state(home)
    digest = _digest(state)
    result = cli.ok(*command)
    notes = [line for line in result.err.splitlines() if "state.db" in line]
    assert len(notes) == 1, result.err
    assert f"{total} sessions" in notes[0]
    assert "'hermes-memory sessions import --from-hermes'" in notes[0]
    assert "state.db" not in result.out
    # --json output stays clean JSON; the note is on stderr only
    data = cli.ok("--json", *command)
    assert "state.db" in data.err and data.json() is not None
    _untouched(state, digest)
    assert not cli.archive.exists()  # a read command created nothing


def test_doctor_reports_it_and_import_without_a_path_takes_the_homes_state_db(cli, home):
    state, total = _state(home)
    digest = _digest(state)
    report = cli.ok("--json", "doctor").json()
    finding = next(c for c in report["checks"] if c["check"] == "hermes history")
    assert finding["status"] == "warn" and f"{total} sessions" in finding["detail"]
    assert finding["fix"] == "hermes-memory sessions import --from-hermes"
    assert "All checks passed" not in cli.ok("doctor").out
    imported = cli.ok("--json", "sessions", "import", "--from-hermes").json()
    assert imported["sessions_imported"] == total
    assert "state.db" not in cli.ok("sessions", "list").err
    after = cli.ok("--json", "doctor").json()
    ok = next(c for c in after["checks"] if c["check"] == "hermes history")
    assert ok["status"] == "ok"
    _untouched(state, digest)


def test_the_command_in_the_notice_names_the_home_given_by_option(cli, home, tmp_path):
    other = tmp_path / "other home"
    other.mkdir()
    _state(other)
    err = cli.ok("--home", str(other), "sessions", "list").err
    assert f"'hermes-memory --home '{other}' sessions import --from-hermes'" in err


def test_follow_hermes_imports_before_reads(cli, home):
    state, total = _state(home)
    digest = _digest(state)
    (home / "config.yaml").write_text("sessions:\n  follow_hermes: true\n")
    rows = cli.ok("--json", "sessions", "list").json()
    assert len(rows) == total
    assert "state.db" not in cli.ok("sessions", "list").err
    _untouched(state, digest)


def test_failing_import_from_a_missing_home_creates_nothing(cli, tmp_path):
    missing = tmp_path / "no-such-home"
    cli(
        "--home", str(missing), "sessions", "import", "--from-hermes", str(missing / "state.db")
    ).assert_one_line_error("no such file")
    assert not missing.exists()
    cli("--home", str(missing), "sessions", "import", "--from-hermes").assert_one_line_error(
        "does not exist"
    )
    assert not missing.exists()


def test_provider_follows_hermes_in_the_background(home):
    state, total = _state(home)
    digest = _digest(state)
    provider = SessionArchiveProvider(
        hermes_home=home, config={"sessions": {"follow_hermes": True}}
    )
    provider.initialize("live-session", hermes_home=str(home))
    assert provider.wait_following(timeout=60)
    provider.shutdown()
    with SessionStore(provider.db_path) as store:
        assert len(store.list_sessions()) == total
    _untouched(state, digest)


def test_provider_does_not_follow_by_default(home):
    _state(home)
    provider = SessionArchiveProvider(hermes_home=home, config={})
    provider.initialize("live-session", hermes_home=str(home))
    assert provider.wait_following(timeout=1)
    provider.shutdown()
    assert not provider.db_path.exists()


def test_a_time_budget_stops_between_sessions_and_the_next_run_continues(home, tmp_path):
    from hermes_memory_sessions.importers._hermes import import_hermes_db

    state, total = _state(home)
    with SessionStore(tmp_path / "a.db") as store:
        first = import_hermes_db(state, store, time_budget_s=0)
        assert first.incomplete and first.sessions_imported == 0
        second = import_hermes_db(state, store)
        assert not second.incomplete and second.sessions_imported == total


def test_message_count_counts_live_messages_not_taken_back_ones(cli, home):
    """docs/explanation/differences-from-hermes.md: Hermes' counter counts every message
    appended (a rewind does not lower it); ours counts the live conversation. Side by side
    with Hermes' browse: 10 there, 8 here, for a session with 2 taken-back messages."""
    builders = _builders()
    state = home / "state.db"
    conn = builders.build_v23(state, wal=False)
    exp = builders.Expected()
    builders._add_session(
        conn, exp, id="20250310_090000_abcdef", source="cli", started_at=1_741_597_200.0,
        message_count=10,
    )  # fmt: skip
    for n in range(10):
        rewound = n in (6, 7)  # /undo took back one exchange: active = 0, compacted = 0
        builders._add_message(
            conn, exp, session_id="20250310_090000_abcdef",
            role="user" if n % 2 == 0 else "assistant", content=f"message {n}",
            timestamp=1_741_597_200.0 + n, active=0 if rewound else 1, compacted=0,
        )  # fmt: skip
    conn.commit()
    conn.close()
    hermes_count = sqlite3.connect(state).execute("SELECT message_count FROM sessions").fetchone()
    assert hermes_count == (10,)  # what Hermes' browse shows
    cli.ok("sessions", "import", "--from-hermes")
    listed = cli.ok("--json", "sessions", "list").json()
    assert listed[0]["message_count"] == 8  # the live conversation
    shown = cli.ok("--json", "sessions", "show", "20250310_090000_abcdef").json()
    assert len(shown["messages"]) == 10  # every stored message is still there
    assert sum(1 for m in shown["messages"] if m["active"] == 0) == 2
    doc = Path(__file__).resolve().parents[2] / "docs/explanation/differences-from-hermes.md"
    row = next(line for line in doc.read_text().splitlines() if "message counters" in line)
    assert "taken back" in row and "| the same |" not in row
