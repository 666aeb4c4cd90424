"""``hermes-memory sessions ...`` on real SQLite archives."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes_memory_core.config import sessions_db_path
from hermes_memory_sessions.storage._store import SessionStore

DAY = 86400.0


def _archive(path: Path) -> dict[str, str]:
    """Three ended sessions of different ages plus one open one; returns their ids."""
    now = time.time()
    store = SessionStore(path)
    ids = {
        "old": "20240101_090000_aaaa01",
        "mid": "20240101_090000_aaaa02",
        "new": "20250601_120000_bbbb01",
        "open": "20250601_130000_cccc01",
    }
    ages = {"old": 200, "mid": 100, "new": 2, "open": 300}
    for key, sid in ids.items():
        store.create_session(
            sid, title=f"{key} session", started_at=now - ages[key] * DAY, model="m1"
        )
        store.append_message(
            sid,
            "user",
            f"How do I rotate the {key} postgres backups?",
            timestamp=now - ages[key] * DAY,
        )
        store.append_message(
            sid,
            "assistant",
            "用 pg_dump 做数据库备份，保留七天。",
            tool_calls=[
                {"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}
            ],
            timestamp=now - ages[key] * DAY + 1,
        )
        store.append_message(
            sid, "tool", "ok", tool_name="t", tool_call_id="c1", timestamp=now - ages[key] * DAY + 2
        )
        if key != "open":
            store.end_session(sid, "done")
    store.close()
    return ids


@pytest.fixture
def ids(home):
    return _archive(sessions_db_path(home))


def test_list_and_json(cli, ids):
    listed = cli.ok("--json", "sessions", "list").json()
    assert {s["id"] for s in listed} == set(ids.values())
    assert listed[0]["id"] == ids["new"]  # newest first
    human = cli.ok("sessions", "list", "--limit", "2").out
    assert ids["new"] in human and ids["old"] not in human
    assert "new session" in human


def test_list_without_archive_creates_nothing(cli):
    assert cli.ok("--json", "sessions", "list").json() == []
    assert cli.ok("--json", "sessions", "stats").json()["sessions"] == 0
    assert cli.ok("--json", "sessions", "search", "anything").json() == []
    assert json.loads(cli.ok("sessions", "export").out)["sessions"] == 0
    cli.ok("sessions", "export", "-o", str(cli.tmp / "empty.jsonl"))
    assert json.loads((cli.tmp / "empty.jsonl").read_text())["sessions"] == 0
    assert not (cli.archive).exists()


def test_show_by_unique_prefix(cli, ids):
    shown = cli.ok("--json", "sessions", "show", "20250601_12").json()
    assert shown["session"]["id"] == ids["new"]
    assert [m["role"] for m in shown["messages"]] == ["user", "assistant", "tool"]
    human = cli.ok("sessions", "show", "20250601_12").out
    assert "用 pg_dump 做数据库备份" in human and "[tool calls]" in human


def test_ambiguous_and_unknown_ids(cli, ids):
    ambiguous = cli("sessions", "show", "20240101")
    ambiguous.assert_one_line_error("ambiguous", ids["old"], ids["mid"])
    cli("sessions", "show", "nope").assert_one_line_error("no session matches 'nope'")
    cli("sessions", "rename", "nope", "x").assert_one_line_error("no session matches")
    cli("sessions", "delete", "nope", "--yes").assert_one_line_error("no session matches")
    cli("sessions", "export", "nope").assert_one_line_error("no session matches")
    # ids with LIKE wildcards are taken literally
    cli("sessions", "show", "2024%").assert_one_line_error("no session matches")


def test_show_around_a_message(cli, ids):
    full = cli.ok("--json", "sessions", "show", ids["mid"]).json()
    anchor = full["messages"][1]["id"]
    around = cli.ok(
        "--json", "sessions", "show", ids["mid"], "--around", str(anchor), "--window", "1"
    ).json()
    assert [m["id"] for m in around["messages"]] == [m["id"] for m in full["messages"]]
    assert (around["messages_before"], around["messages_after"]) == (1, 1)
    human = cli.ok("sessions", "show", ids["mid"], "--around", str(anchor), "--window", "0").out
    assert f">> #{anchor}" in human and "with 0 before and 0 after" in human
    other = cli.ok("--json", "sessions", "show", ids["old"]).json()["messages"][0]["id"]
    cli("sessions", "show", ids["mid"], "--around", str(other)).assert_one_line_error(
        "not part of session"
    )
    cli("sessions", "show", ids["mid"], "--around", "zero").assert_one_line_error(
        "expected a whole number"
    )


def test_search_english_and_chinese(cli, ids):
    hits = cli.ok("--json", "sessions", "search", "postgres").json()
    assert {h["session_id"] for h in hits} == set(ids.values())
    assert all(">>>postgres<<<" in h["snippet"] for h in hits)
    cjk = cli.ok("--json", "sessions", "search", "备份", "--limit", "2").json()
    assert len(cjk) == 2 and all(">>>备份<<<" in h["snippet"] for h in cjk)
    human = cli.ok("sessions", "search", "备份").out
    assert ">>>备份<<<" in human and "4 matches for '备份':" in human
    two = cli.ok("sessions", "search", "备份", "--limit", "2").out
    assert "2 best of 4 matches for '备份' (more: --limit N):" in two
    none = cli.ok("sessions", "search", "kubernetes")
    assert "No messages match" in none.out
    unquoted = cli.ok("--json", "sessions", "search", "rotate", "postgres").json()
    assert {h["session_id"] for h in unquoted} == set(ids.values())
    only_users = cli.ok("--json", "sessions", "search", "postgres OR 备份", "--role", "user").json()
    assert only_users and {h["role"] for h in only_users} == {"user"}
    cli("sessions", "search", "   ").assert_one_line_error("empty")
    # malformed FTS syntax is never an error
    cli.ok("sessions", "search", '"unbalanced AND (')


def test_rename(cli, ids):
    cli.ok("sessions", "rename", ids["old"], "Backups 备份")
    assert (
        cli.ok("--json", "sessions", "show", ids["old"]).json()["session"]["title"]
        == "Backups 备份"
    )
    cli("sessions", "rename", ids["mid"], "Backups 备份").assert_one_line_error("already in use")
    cli.ok("sessions", "rename", ids["old"], "")
    assert cli.ok("--json", "sessions", "show", ids["old"]).json()["session"]["title"] is None


def test_delete_needs_confirmation(cli, ids):
    refused = cli("sessions", "delete", ids["old"])
    refused.assert_one_line_error("refusing without confirmation", "--yes")
    assert cli.ok("--json", "sessions", "show", ids["old"]).json()["session"]["id"] == ids["old"]
    answered_no = cli("sessions", "delete", ids["old"], input="n\n")
    assert answered_no.code == 1  # stdin is not a terminal: still refused
    cli.ok("sessions", "delete", ids["old"], "--yes")
    cli("sessions", "show", ids["old"]).assert_one_line_error("no session matches")
    assert len(cli.ok("--json", "sessions", "list").json()) == 3


def test_prune_only_ended_old_sessions(cli, ids):
    cli("sessions", "prune", "--older-than", "30").assert_one_line_error(
        "Delete 2 ended sessions", "--yes"
    )
    result = cli.ok("--json", "sessions", "prune", "--older-than", "30", "--yes").json()
    assert result == {"deleted": 2, "messages": 6}
    left = {s["id"] for s in cli.ok("--json", "sessions", "list").json()}
    assert left == {ids["new"], ids["open"]}  # the open one is 300 days old but live
    assert "Nothing to prune" in cli.ok("sessions", "prune", "--older-than", "30").out


def test_stats(cli, ids):
    stats = cli.ok("--json", "sessions", "stats").json()
    assert stats["sessions"] == 4 and stats["messages"] == 12
    assert stats["by_source"] == {"cli": 4}
    assert "sessions     4" in cli.ok("sessions", "stats").out


# ------------------------------------------------------------------ export / import
def _dump(db: Path) -> tuple[dict, dict]:
    store = SessionStore(db)
    try:
        sessions = {s["id"]: s for s in store.iter_sessions()}
        messages = {sid: store.get_messages(sid) for sid in sessions}
    finally:
        store.close()
    return sessions, messages


def test_export_import_round_trip_is_exact(cli, ids, tmp_path):
    out = tmp_path / "export.jsonl"
    result = cli.ok("sessions", "export", "--output", str(out))
    assert "Exported 4 sessions" in result.out
    other = tmp_path / "other-home"
    imported = cli.ok("--home", str(other), "--json", "sessions", "import", str(out)).json()
    assert imported["sessions_imported"] == 4 and imported["messages_imported"] == 12
    # every column of every session and of every message, in order, ids included
    assert _dump(sessions_db_path(other)) == _dump(cli.archive)
    again = cli.ok("--home", str(other), "--json", "sessions", "import", str(out)).json()
    assert again["sessions_imported"] == 0 and len(again["sessions_skipped"]) == 4


def test_export_selected_ids_to_stdout(cli, ids):
    result = cli.ok("sessions", "export", "20250601_12", ids["old"])
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert lines[0]["type"] == "hermes-memory-sessions" and lines[0]["sessions"] == 2
    exported = {line["session"]["id"] for line in lines if line["type"] == "session"}
    assert exported == {ids["new"], ids["old"]}
    assert sum(line["type"] == "message" for line in lines) == 6


def test_export_refuses_to_overwrite_without_yes(cli, ids, tmp_path):
    out = tmp_path / "existing.jsonl"
    out.write_text("precious")
    cli("sessions", "export", "-o", str(out)).assert_one_line_error("exists", "--yes")
    assert out.read_text() == "precious"
    cli.ok("sessions", "export", "-o", str(out), "--yes")
    assert out.read_text().startswith('{"type": "hermes-memory-sessions"')
    cli("sessions", "export", "-o", str(tmp_path / "no" / "dir.jsonl")).assert_one_line_error(
        "does not exist"
    )


def test_import_bad_inputs(cli, tmp_path):
    cli("sessions", "import", str(tmp_path / "missing.jsonl")).assert_one_line_error(
        "does not exist"
    )
    cli("sessions", "import", str(tmp_path)).assert_one_line_error("is a directory")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"type": "hermes-memory-sessions", "version": 1}\n{"type": "session", "messages": 2, "session": {"id": "x"}}\nnot json\n'
    )
    cli("sessions", "import", str(bad)).assert_one_line_error(
        "import failed, nothing imported", "line"
    )
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\x00\xff\xfe garbage")
    cli("sessions", "import", str(binary)).assert_one_line_error("import failed")
    assert cli.ok("--json", "sessions", "stats").json()["sessions"] == 0
    cli("sessions", "import").assert_one_line_error("one of the arguments")
    cli("sessions", "import", "x", "--from-hermes", "y").assert_one_line_error("not allowed with")


def test_import_unreadable_file(cli, tmp_path):
    import os

    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    locked = tmp_path / "locked.jsonl"
    locked.write_text("{}\n")
    locked.chmod(0)
    try:
        cli("sessions", "import", str(locked)).assert_one_line_error("import failed")
    finally:
        locked.chmod(0o600)


def test_import_from_stdin(cli, ids, tmp_path):
    exported = cli.ok("sessions", "export", ids["new"]).out
    other = tmp_path / "h2"
    result = cli.ok(
        "--home", str(other), "--json", "sessions", "import", "-", input=exported
    ).json()
    assert result["sessions_imported"] == 1


def _hermes_fixture():
    path = Path(__file__).resolve().parents[1] / "sessions" / "hermes_statedb.py"
    if not path.exists():
        pytest.skip("Hermes state.db builders not available")
    spec = importlib.util.spec_from_file_location("_hermes_statedb_for_cli", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while executing it
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("layout", ["l1", "v23"])
def test_import_from_hermes(cli, tmp_path, layout):
    builders = _hermes_fixture()
    source = tmp_path / f"hermes-{layout}.db"
    conn = builders.build_l1(source) if layout == "l1" else builders.build_v23(source)
    expected = builders.populate(conn, v23=layout == "v23")
    conn.close()
    before = source.read_bytes()
    report = cli.ok("--json", "sessions", "import", "--from-hermes", str(source)).json()
    assert report["sessions_imported"] == len(expected.sessions)
    assert report["messages_imported"] == expected.message_total
    assert source.read_bytes() == before  # the source is never modified
    human = cli.ok("sessions", "import", "--from-hermes", str(source)).out
    assert "skipped" in human
    sessions, _ = _dump(cli.archive)
    assert set(sessions) == set(expected.sessions)


def test_import_from_hermes_bad_sources(cli, tmp_path):
    cli("sessions", "import", "--from-hermes", str(tmp_path / "none.db")).assert_one_line_error(
        "import failed"
    )
    text = tmp_path / "text.db"
    text.write_text("this is not sqlite")
    cli("sessions", "import", "--from-hermes", str(text)).assert_one_line_error("import failed")
    SessionStore(cli.archive).close()
    cli("sessions", "import", "--from-hermes", str(cli.archive)).assert_one_line_error(
        "own archive"
    )


def test_progress_bar_on_a_terminal(cli, ids, tmp_path):
    out = tmp_path / "e.jsonl"
    cli.ok("sessions", "export", "-o", str(out))
    other = tmp_path / "h3"
    result = cli.ok(
        "--home", str(other), "sessions", "import", str(out), env={"TTY_COMPATIBLE": "1"}
    )
    assert "Importing messages" in result.err and "12/12" in result.err
    plain = cli.ok("--home", str(tmp_path / "h4"), "sessions", "import", str(out))
    assert plain.err.splitlines() == [f"Created the Hermes home {tmp_path / 'h4'} (from --home)."]


def test_reader_closing_the_pipe_is_not_a_traceback(cli):
    import shutil
    import subprocess

    script = shutil.which("hermes-memory", path=str(Path(sys.executable).parent))
    store = SessionStore(cli.archive)
    store.create_session("big")
    store.append_message("big", "user", "x" * 500_000)
    store.close()
    proc = subprocess.Popen(
        [script, "sessions", "export"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli.env
    )
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0
    assert err == ""


def test_export_piped_into_head_exits_quietly(cli):
    import shutil
    import subprocess

    store = SessionStore(cli.archive)
    for n in range(40):
        store.create_session(f"s{n:03d}")
        store.append_message(f"s{n:03d}", "user", f"message {n} " + "y" * 4000)
    store.close()
    script = shutil.which("hermes-memory", path=str(Path(sys.executable).parent))
    proc = subprocess.run(
        ["bash", "-o", "pipefail", "-c", f"'{script}' sessions export | head -n 2"],
        capture_output=True,
        text=True,
        env=cli.env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert len(proc.stdout.splitlines()) == 2


def test_search_counts_matches_beyond_the_limit(cli):
    store = SessionStore(cli.archive)
    store.create_session("many")
    for n in range(25):
        store.append_message("many", "user", f"retention note number {n}")
    store.close()
    out = cli.ok("sessions", "search", "retention").out
    assert out.splitlines()[0] == "10 best of 25 matches for 'retention' (more: --limit N):"
    out = cli.ok("sessions", "search", "retention", "--limit", "30").out
    assert out.splitlines()[0] == "25 matches for 'retention':"
    one = cli.ok("sessions", "search", "number 7").out
    assert one.splitlines()[0] == "1 match for 'number 7':"


def test_roles_are_validated_and_combine(cli, ids):
    both = cli.ok("--json", "sessions", "search", "postgres OR 备份", "--role", "user,assistant")
    assert {h["role"] for h in both.json()} == {"user", "assistant"}
    repeated = cli.ok(
        "--json", "sessions", "search", "postgres OR 备份", "--role", "user", "--role", "assistant"
    )
    assert repeated.json() == both.json()


def test_piped_list_never_wraps_a_row(cli):
    store = SessionStore(cli.archive)
    long_title = "A very long title " * 4 + "与中文结尾"
    store.create_session("s1", title=long_title.strip())
    store.create_session("s2", title="[bold]not markup[/bold] :x:")
    store.close()
    out = cli.ok("sessions", "list", env={"COLUMNS": "40"}).out
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "STARTED", "SOURCE", "MSGS", "STATE", "TITLE"]
    assert len(lines) == 3  # header + one line per session, whatever the width
    assert any(line.startswith("s1 ") and line.endswith(long_title.strip()) for line in lines)
    assert any(line.endswith("[bold]not markup[/bold] :x:") for line in lines)


def test_stored_text_is_printed_verbatim(cli):
    store = SessionStore(cli.archive)
    store.create_session("v1", title="[red]title[/red]")
    store.append_message("v1", "user", "[bold]x[/bold] :x: :thumbs_up: [link=http://e]y[/link]")
    store.close()
    shown = cli.ok("sessions", "show", "v1").out
    assert "v1 — [red]title[/red]" in shown
    assert "[bold]x[/bold] :x: :thumbs_up: [link=http://e]y[/link]" in shown
    found = cli.ok("sessions", "search", "thumbs_up").out
    assert ":x:" in found and "❌" not in found and "👍" not in found


def test_markers_on_terminals(cli, ids):
    dumb = cli.on_terminal("sessions", "search", "备份", env={"TERM": "dumb"})
    assert ">>>备份<<<" in dumb
    color = cli.on_terminal("sessions", "search", "备份", env={"TERM": "xterm-256color"})
    assert ">>>备份<<<" not in color and "备份" in color and "\x1b[" in color


def test_control_characters_are_made_visible_on_a_terminal(cli):
    store = SessionStore(cli.archive)
    store.create_session("c1")
    store.append_message("c1", "user", "before\x1b[2Jafter")
    store.close()
    seen = cli.on_terminal("sessions", "show", "c1", env={"TERM": "xterm-256color"})
    assert "before\\x1b[2Jafter" in seen
    piped = cli.ok("sessions", "show", "c1").out
    assert "before\x1b[2Jafter" in piped  # a pipe gets the stored bytes


def test_docs_first_import_export_example_works_on_the_default_layout(cli, tmp_path):
    """docs/how-to/import-export.md, as typed: Hermes' ~/.hermes/state.db into our archive."""
    builders = _hermes_fixture()
    hermes_home = tmp_path / ".hermes"  # HOME is tmp_path: the default layout
    hermes_home.mkdir()
    state = hermes_home / "state.db"
    conn = builders.build_v23(state)
    expected = builders.populate(conn, v23=True)
    conn.close()
    before = state.read_bytes()
    env = {k: v for k, v in cli.env.items() if k != "HERMES_HOME"}
    commands = (
        "hermes-memory sessions import --from-hermes ~/.hermes/state.db",
        "hermes-memory sessions export -o sessions.jsonl",
        "hermes-memory --home ~/elsewhere sessions import sessions.jsonl",
    )
    for command in commands:
        proc = subprocess.run(
            ["bash", "-c", command],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={**env, "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"},
            timeout=60,
        )
        assert proc.returncode == 0, (command, proc.stderr)
    assert state.read_bytes() == before
    assert sorted(p.name for p in hermes_home.iterdir()) == ["hermes-memory", "state.db"]
    sessions, _ = _dump(sessions_db_path(hermes_home))
    assert set(sessions) == set(expected.sessions)
    copied, _ = _dump(sessions_db_path(tmp_path / "elsewhere"))
    assert set(copied) == set(expected.sessions)


def test_a_file_where_the_archive_folder_should_be(cli):
    cli.archive.parent.write_text("not a folder")
    for args in (["sessions", "list"], ["sessions", "import", "-"]):
        result = cli(*args, input='{"type": "hermes-memory-sessions", "version": 1}\n')
        result.assert_one_line_error("is a file where a folder should be", "mv ")
    assert cli.archive.parent.read_text() == "not a folder"
