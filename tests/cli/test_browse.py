"""``hermes-memory sessions browse`` driven as a person does: in a real pseudo-terminal.

pexpect runs the installed console script on a pty; pyte, a terminal emulator, turns what
it draws into the screen a person sees. Every step sends keys, then waits (bounded) until
the screen shows what it must: never a fixed sleep.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect
import pyte
import pytest

from hermes_memory_cli._commands._browse_data import live_query, needles
from hermes_memory_core.config import sessions_db_path
from hermes_memory_sessions.storage import SessionStore

SCRIPT = shutil.which("hermes-memory", path=str(Path(sys.executable).parent))

DAY = 86400.0
#: The picker starts (imports prompt_toolkit, opens the archive) within this, even on a
#: loaded CI machine; every wait is bounded by it.
WAIT = 90.0

ROTATE = "20250601_090000_aaaa01"
TRIP = "20250602_090000_bbbb02"
HAIKU = "20250603_090000_cccc03"
LONG = "20250604_090000_dddd04"

DOWN, UP, ENTER, TAB, ESC, CTRL_C, CTRL_U, F2 = (
    "\x1b[B",
    "\x1b[A",
    "\r",
    "\t",
    "\x1b",
    "\x03",
    "\x15",
    "\x1bOQ",
)


def fill(store: Any) -> None:
    """Four sessions, English and Chinese; the newest is long with one distinctive turn."""
    now = time.time()
    sessions = [
        (
            ROTATE,
            "Postgres backups",
            ["How do I rotate the postgres backups?", "Use pg_dump nightly; keep seven days."],
        ),
        (TRIP, "旅行计划", ["我们明天去北京看长城吧", "好的，我会查一下去长城的火车时刻表。"]),
        (HAIKU, None, ["Write a haiku about autumn leaves", "Red leaves drift and fall"]),
        (
            LONG,
            "Cluster work",
            [f"step {i}: routine maintenance note {i}" for i in range(20)],
        ),
    ]
    for age, (sid, title, texts) in enumerate(reversed(sessions)):
        started = now - (age + 1) * DAY
        store.create_session(sid, source="cli", title=title, started_at=started)
        for i, text in enumerate(texts):
            if sid == LONG and i == 10:
                text = "the kubernetes ingress needs a renewed certificate"
            role = "user" if i % 2 == 0 else "assistant"
            store.append_message(sid, role, text, timestamp=started + i)
        store.end_session(sid, "done")


@pytest.fixture
def archive(home: Path) -> Path:
    path = sessions_db_path(home)
    store = SessionStore(path)
    fill(store)
    store.close()
    return path


class Terminal:
    """The picker on a pseudo-terminal of ``rows`` x ``cols``, and the screen it shows."""

    def __init__(
        self,
        cli: Any,
        *args: str,
        env: dict[str, str] | None = None,
        rows: int = 30,
        cols: int = 130,
    ) -> None:
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = b""
        environ = {**cli.env, "TERM": "xterm-256color", "LANG": "C.UTF-8", **(env or {})}
        environ.pop("COLUMNS", None)
        self.child = pexpect.spawn(
            str(SCRIPT), list(args), env=environ, dimensions=(rows, cols), timeout=WAIT
        )

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)

    def _pump(self, timeout: float) -> bool:
        """Read what the program drew; False once it has exited and closed the terminal."""
        try:
            data = self.child.read_nonblocking(65536, timeout=timeout)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False
        self.raw += data
        self.stream.feed(data)
        return True

    @property
    def text(self) -> str:
        # Each cell's text; the right half of a wide (CJK) character holds "" (pyte's own
        # ``display`` trips over a half left behind when a narrow one overwrites the other).
        buffer, columns = self.screen.buffer, self.screen.columns
        lines = (
            "".join(buffer[y][x].data for x in range(columns)) for y in range(self.screen.lines)
        )
        return "\n".join(line.rstrip() for line in lines)

    def wait(self, check: Callable[[str], bool] | str, what: str = "") -> str:
        """Wait until ``check(screen)`` (or the text is on screen); the screen on failure."""
        test = check if callable(check) else (lambda screen: check in screen)
        deadline = time.monotonic() + WAIT
        while not test(self.text):
            if time.monotonic() > deadline or not self._pump(0.2):
                if test(self.text):
                    break
                raise AssertionError(f"screen never showed {what or check!r}:\n{self.text}")
        return self.text

    def type(self, keys: str) -> None:
        self.child.send(keys.encode())

    def selected(self) -> str:
        """The list row drawn in reverse video (the selection)."""
        for y in range(self.screen.lines):
            line = self.screen.buffer[y]
            if line[1].reverse and line[2].reverse:
                return "".join(line[x].data for x in range(self.screen.columns)).strip()
        return ""

    def finish(self) -> tuple[int, str]:
        """Wait for the exit; the status and the text written after the picker closed."""
        deadline = time.monotonic() + WAIT
        while self._pump(0.2):
            assert time.monotonic() < deadline, f"the picker did not exit:\n{self.text}"
        self.child.close()
        after = self.raw.rsplit(b"\x1b[?1049l", 1)[-1].decode("utf-8", "replace")
        after = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b.", "", after)
        code = self.child.exitstatus if self.child.exitstatus is not None else -1
        return code, after.replace("\r", "").strip()


@pytest.fixture
def term(cli: Any) -> Any:
    opened: list[Terminal] = []

    def start(*args: str, **kw: Any) -> Terminal:
        t = Terminal(cli, "sessions", "browse", *args, **kw)
        opened.append(t)
        return t

    yield start
    for t in opened:
        t.close()


def ready(t: Terminal, n: int = 4) -> None:
    t.wait(f"{n} sessions", "the list")


def filtered(t: Terminal, query: str, n: int, *also: str) -> str:
    """Wait until the filter shows ``query`` with ``n`` matches (and the texts ``also``)."""
    wanted = [f"Filter: {query} ", f"{n} matching", *also]
    return t.wait(lambda s: all(w in s for w in wanted), f"{n} match(es) for {query}: {also}")


def test_filter_preview_move_and_select(term: Any, archive: Path) -> None:
    t = term()
    screen = t.wait(lambda s: "4 sessions" in s and "“Write a haiku" in s, "the list")
    assert t.selected().startswith(LONG)  # newest first, the first row selected
    assert "Postgres backups" in screen and "旅行计划" in screen  # titles

    # Arrows move the selection; the preview follows it.
    t.type(DOWN + DOWN)
    t.wait(lambda s: t.selected().startswith(TRIP), "the third row selected")
    t.wait(f"{TRIP}  cli", "the preview of the trip")
    t.type(UP)
    t.wait(lambda s: t.selected().startswith(HAIKU), "the second row selected")
    t.wait("Red leaves drift and fall", "the haiku's transcript")

    # An English word being typed filters as a prefix; the preview shows the hit in context.
    t.type("kube")
    screen = filtered(t, "kube", 1, "kubernetes ingress")
    assert LONG in screen and ROTATE not in screen
    assert "▶ #" in screen  # the hit is marked
    assert "maintenance note 9" in screen and "maintenance note 11" in screen  # its neighbours
    assert "maintenance note 2" not in screen  # not the start of the session

    # A Chinese query without spaces, matched inside a message (not the title).
    t.type(CTRL_U + "火车时刻表")
    screen = filtered(t, "火车时刻表", 1, "好的，我会查一下去长城的火车时刻表。")
    assert TRIP in screen and LONG not in screen
    t.type(CTRL_U + "长城")
    filtered(t, "长城", 1, "我们明天去北京看长城吧")

    t.type(ENTER)
    code, after = t.finish()
    assert code == 0
    assert after.splitlines()[0] == TRIP
    assert f"hermes-memory sessions resume {TRIP}" in after


def test_nothing_matches_then_clearing_the_filter(term: Any, archive: Path) -> None:
    t = term()
    ready(t)
    t.type("zebra")
    t.wait("No session matches the filter.")
    t.type(CTRL_U)
    ready(t)
    t.type(ENTER)  # Enter on the first row
    code, after = t.finish()
    assert code == 0 and after.splitlines()[0] == LONG


def test_rename_and_delete_with_confirmation(term: Any, archive: Path) -> None:
    t = term()
    ready(t)
    t.type(TAB + "j")  # list keys; j moves down like the arrow
    t.wait(lambda s: t.selected().startswith(HAIKU), "the haiku selected")
    t.type("r")
    t.wait(f"New title for {HAIKU}", "the rename dialog")
    t.type("Autumn 秋天" + ENTER)
    t.wait(f"Renamed {HAIKU} to 'Autumn 秋天'.", "the rename")
    assert "Autumn 秋天" in t.selected()

    t.type("d")
    t.wait("Delete session", "the confirmation")
    t.wait(lambda s: "(Autumn 秋天)" in s and "2 messages?" in s, "the session in question")
    t.type("n")
    t.wait("Nothing was deleted.")
    t.type("d")
    t.wait("Delete session")
    t.type("y")
    t.wait(f"Deleted session {HAIKU}.")
    screen = t.wait("3 sessions")
    assert not [line for line in screen.splitlines() if line.startswith(f" {HAIKU}")]

    t.type("q")
    code, after = t.finish()
    assert (code, after) == (0, "")
    store = SessionStore(archive)
    try:
        assert store.get_session(HAIKU) is None
        assert store.get_session(TRIP) is not None
    finally:
        store.close()


def test_rename_from_the_filter_then_cancel(term: Any, archive: Path) -> None:
    t = term()
    ready(t)
    t.type(F2)
    t.wait(f"New title for {LONG}")
    t.type("never saved" + ESC)
    t.wait("Rename cancelled.")
    t.type(ESC)
    assert t.finish() == (0, "")
    store = SessionStore(archive)
    try:
        assert (store.get_session(LONG) or {})["title"] == "Cluster work"
    finally:
        store.close()


@pytest.mark.parametrize("key", [ESC, CTRL_C], ids=["escape", "ctrl-c"])
def test_quitting_prints_nothing(term: Any, archive: Path, key: str) -> None:
    t = term()
    ready(t)
    t.type("back")  # quits from the filter too, whatever was typed
    filtered(t, "back", 1)
    t.type(key)
    assert t.finish() == (0, "")


def test_the_picker_speaks_chinese(term: Any, archive: Path) -> None:
    t = term(env={"LANG": "zh_CN.UTF-8", "LC_ALL": ""})
    t.wait("筛选", "the Chinese label")
    t.wait("4 个会话", "the Chinese count")
    t.wait(lambda s: " 用户" in s and " 助手" in s, "roles in Chinese in the preview")
    t.type(ENTER)
    code, after = t.finish()
    assert code == 0 and after.splitlines()[0] == LONG
    assert "继续这个会话" in after


def test_narrow_terminal_puts_the_preview_below(term: Any, archive: Path) -> None:
    t = term(rows=24, cols=70)
    screen = t.wait("4 sessions")
    t.wait("maintenance note 19", "the preview of the newest")
    assert "│" not in screen  # no side-by-side split
    t.type(ESC)
    assert t.finish() == (0, "")


def test_not_a_terminal_prints_the_list(cli: Any, archive: Path) -> None:
    listed = cli.ok("sessions", "list")
    browsed = cli.ok("sessions", "browse")
    assert browsed.out == listed.out and browsed.err == listed.err
    assert (
        cli.ok("--json", "sessions", "browse").json() == cli.ok("--json", "sessions", "list").json()
    )
    assert [s["id"] for s in cli.ok("--json", "sessions", "browse", "--limit", "2").json()] == [
        LONG,
        HAIKU,
    ]
    # --json on a terminal, and a terminal stdout without a terminal stdin: the list too
    assert cli.on_terminal("--json", "sessions", "browse") == cli.on_terminal(
        "--json", "sessions", "list"
    )
    assert cli.on_terminal("sessions", "browse") == cli.on_terminal("sessions", "list")


def test_empty_archive_on_a_terminal(term: Any, home: Path) -> None:
    t = term()
    t.wait("No sessions in")
    code, after = t.finish()
    assert code == 0 and "No sessions in" in after
    assert not sessions_db_path(home).exists()  # reading created nothing


def test_importing_the_cli_does_not_import_prompt_toolkit() -> None:
    code = (
        "import sys, hermes_memory_cli._cli as c; c.build_parser();"
        "import hermes_memory_cli._commands.sessions;"
        "print('prompt_toolkit' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("typed", "query"),
    [
        ("rot", "rot*"),
        ("rotate postg", "rotate postg*"),
        ("rotate ", None),  # the word is finished
        ("长城", None),  # CJK matches inside words already
        ('"a phrase"', None),
        ("a OR b", None),
        ("pg_d", "pg_d*"),
        ("k", None),  # one letter is not a prefix yet
        ("kubernetes i", None),
        ("", None),
    ],
)
def test_the_word_being_typed_is_a_prefix(typed: str, query: str | None) -> None:
    assert live_query(typed) == query


def test_needles_skip_operators() -> None:
    assert needles("kubernetes OR 长城") == ["kubernetes", "长城"]


def test_postgres_archive(cli: Any, term: Any, tmp_path: Path) -> None:
    from hermes_memory_postgres import PostgresSessionArchive
    from hermes_memory_postgres.testing import require_test_dsn

    dsn = require_test_dsn()
    owner = f"test-browse-{uuid.uuid4().hex[:10]}"
    archive = PostgresSessionArchive(dsn, owner=owner)
    try:
        fill(archive)
    finally:
        archive.close()
    (cli.home / "config.yaml").write_text(
        f"sessions:\n  backend: postgres\npostgres:\n  owner: {json.dumps(owner)}\n",
        encoding="utf-8",
    )
    env = {"HERMES_MEMORY_PG_DSN": dsn}
    t = term(env=env)
    ready(t)
    t.type("kube")
    filtered(t, "kube", 1, "kubernetes ingress")
    t.type(CTRL_U + "长城")
    filtered(t, "长城", 1, "我们明天去北京看长城吧")
    t.type(TAB + "d")
    t.wait("Delete session")
    t.type("y")
    t.wait(f"Deleted session {TRIP}.")
    t.type(ESC)
    assert t.finish() == (0, "")
    listed = cli.ok("--json", "sessions", "browse", env=env).json()
    assert [s["id"] for s in listed] == [LONG, HAIKU, ROTATE]


def test_a_refused_title_keeps_the_picker_open(term: Any, archive: Path) -> None:
    t = term()
    ready(t)
    t.type(F2)
    t.wait(f"New title for {LONG}")
    t.type(CTRL_U + "Postgres backups" + ENTER)  # the title of another session
    screen = t.wait("not renamed:", "the archive's refusal")
    assert "already in use" in screen
    t.type(ENTER)  # still running: Enter picks
    code, after = t.finish()
    assert code == 0 and after.splitlines()[0] == LONG
    store = SessionStore(archive)
    try:
        assert (store.get_session(LONG) or {})["title"] == "Cluster work"
    finally:
        store.close()


def test_source_option_limits_the_picker(term: Any, archive: Path) -> None:
    store = SessionStore(archive)
    try:
        store.create_session("20250605_090000_eeee05", source="telegram", title="From the phone")
        store.append_message(
            "20250605_090000_eeee05", "user", "remind me about the kubernetes bill"
        )
    finally:
        store.close()
    t = term("--source", "telegram")
    # The count and the rows are drawn apart: wait for both, or the rows may not be there yet.
    screen = t.wait(
        lambda s: re.search(r" 1 session$", s, re.M) is not None and "From the phone" in s,
        "one session, the phone's",
    )
    assert LONG not in screen
    t.type("kube")  # the cli session also mentions kubernetes: not listed
    screen = filtered(t, "kube", 1, "remind me about the kubernetes bill")
    assert LONG not in screen
    t.type(ESC)
    assert t.finish() == (0, "")


def test_an_older_session_is_found_by_its_title(term: Any, archive: Path) -> None:
    t = term("--limit", "2")  # loads the two newest: the trip is older
    t.wait(lambda s: re.search(r" 2 newest$", s, re.M) is not None, "two sessions loaded")
    t.type("旅行计划")  # its title; no message contains it
    filtered(t, "旅行计划", 1, f"{TRIP}  cli")
    t.type(ENTER)
    code, after = t.finish()
    assert code == 0 and after.splitlines()[0] == TRIP
