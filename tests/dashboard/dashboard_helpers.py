"""Helpers for the dashboard tests: a seeded home and the real server in a subprocess.

The server is the installed ``hermes-memory dashboard --port 0 --no-browser`` console script;
its printed ``Dashboard: http://HOST:PORT/?token=TOKEN`` line is how the tests log in, as a
person would. The browser is Debian's Chromium (``/usr/bin/chromium``) driven by Playwright;
`.ci/run` installs it when missing (never ``playwright install``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from hermes_memory_core.config import sessions_db_path

SCRIPT = shutil.which("hermes-memory", path=str(Path(sys.executable).parent))
CHROMIUM = os.environ.get("HERMES_MEMORY_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LINE = re.compile(r"^Dashboard: (http://[^/]+)/\?token=(\S+)$")

CONFIG = """\
# My Hermes configuration (this comment must survive the settings page)
model: gpt-test
memory:
  memory_char_limit: 2200  # the default, said out loud
  nudge_interval: 10
sessions:
  backend: sqlite
"""


def clean_env(home: Path, tmp: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HERMES_", "MEM0_", "HONCHO_", "LC_", "LANG"))
    }
    env.update(HERMES_HOME=str(home), HOME=str(tmp), PYTHONIOENCODING="utf-8", LANG="C.UTF-8")
    return env


def seed_home(home: Path) -> None:
    """Curated entries, a config with comments, and an archive with English, Chinese,
    tool calls and a compressed (continued) conversation."""
    from hermes_memory_builtin.store import MemoryStore
    from hermes_memory_sessions.storage._store import SessionStore

    home.mkdir(parents=True)
    (home / "config.yaml").write_text(CONFIG, encoding="utf-8")
    store = MemoryStore(home / "memories")
    store.load_from_disk()
    store.add("memory", "The project database is PostgreSQL 16 on port 5433.")
    store.add("memory", "Deploys go out on Thursdays after the 14:00 review.")
    store.add("user", "Prefers answers in short bullet points.")
    archive = SessionStore(sessions_db_path(home))
    try:
        now = time.time()
        archive.create_session(
            "s-db", source="cli", title="Database migration", started_at=now - 7200
        )
        archive.append_message(
            "s-db", "user", "How do I migrate the PostgreSQL schema?", timestamp=now - 7200
        )
        archive.append_message(
            "s-db",
            "assistant",
            "Run the migration tool first.",
            tool_calls=[
                {
                    "id": "c1",
                    "type": "function",
                    "function": {
                        "name": "terminal",
                        "arguments": '{"command": "alembic upgrade head"}',
                    },
                }
            ],
            timestamp=now - 7190,
        )
        archive.append_message(
            "s-db",
            "tool",
            "INFO  [alembic] Running upgrade -> 42, add users",
            tool_name="terminal",
            tool_call_id="c1",
            timestamp=now - 7180,
        )
        archive.append_message(
            "s-db", "assistant", "The schema is now at revision 42.", timestamp=now - 7170
        )
        archive.end_session("s-db", "user_exit")
        archive.create_session("s-zh", source="telegram", title="数据库备份", started_at=now - 3600)
        archive.append_message("s-zh", "user", "请帮我设置数据库的每日备份。", timestamp=now - 3600)
        archive.append_message(
            "s-zh",
            "assistant",
            "好的，我们用 pg_dump 每天凌晨两点备份数据库。",
            timestamp=now - 3590,
        )
        archive.end_session("s-zh", "compression")
        archive.create_session(
            "s-zh-2",
            source="telegram",
            parent_session_id="s-zh",
            title="数据库备份 #2",
            started_at=now - 3000,
        )
        archive.append_message("s-zh-2", "user", "备份文件保存在哪里？", timestamp=now - 3000)
        archive.append_message(
            "s-zh-2", "assistant", "保存在 /var/backups/pg 目录。", timestamp=now - 2990
        )
        for n in range(3):
            archive.create_session(
                f"s-old-{n}",
                source="cli",
                title=f"Older chat {n}",
                started_at=now - 86400 * (30 + n),
            )
            archive.append_message(
                f"s-old-{n}",
                "user",
                f"Weather smalltalk number {n}",
                timestamp=now - 86400 * (30 + n),
            )
    finally:
        archive.close()


@dataclass
class Server:
    """A running dashboard: its base URL, the printed login link and the home it serves."""

    base: str
    link: str
    token: str
    home: Path
    proc: subprocess.Popen[str]


def start_server(home: Path, tmp: Path, *extra: str) -> Server:
    assert SCRIPT is not None, "hermes-memory is not installed next to this Python"
    proc = subprocess.Popen(
        [SCRIPT, "--home", str(home), "dashboard", "--port", "0", "--no-browser", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env=clean_env(home, tmp),
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    match = LINE.match(line)
    if match is None:
        proc.kill()
        raise AssertionError(
            f"no Dashboard line: {line!r} {proc.stderr.read() if proc.stderr else ''}"
        )
    return Server(match.group(1), line.removeprefix("Dashboard: "), match.group(2), home, proc)


def stop_server(server: Server) -> str:
    """Stop it as ``kill`` would (SIGTERM); returns what it wrote on stderr."""
    server.proc.terminate()
    try:
        _out, err = server.proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        _out, err = server.proc.communicate()
    return err or ""
