"""Reads give up after their own short budget while another real process holds the lock.

A second process opens the archive in rollback-journal (DELETE) mode and holds
``BEGIN EXCLUSIVE``: readers cannot take even a shared lock. ``session_search`` must answer a
clear tool error within a few seconds (it used to inherit the 60 s write budget), and work
again once the lock is gone.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from hermes_memory_sessions.storage._store import SessionStore
from hermes_memory_sessions.tool import session_search

HOLDER = r"""
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
conn.close()
"""


@contextlib.contextmanager
def exclusive_lock_held_by_another_process(path: Path) -> Iterator[subprocess.Popen[str]]:
    """A real process holding ``BEGIN EXCLUSIVE`` on ``path`` until the block ends."""
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "held"
        try:
            yield holder
        finally:
            holder.stdin.write("release\n")
            holder.stdin.flush()
            assert holder.wait(timeout=30) == 0


def test_session_search_answers_a_clear_error_while_another_process_holds_the_lock(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sessions.db"
    with SessionStore(path, journal_mode="delete") as seed:
        seed.create_session("old", source="cli")
        seed.append_message("old", "user", "we configured pgBackRest for the 数据库 backups")
    store = SessionStore(path, journal_mode="delete", busy_timeout_ms=200, read_budget_s=1.0)
    assert store.journal_mode == "delete"
    try:
        with exclusive_lock_held_by_another_process(path):
            started = time.monotonic()
            out = json.loads(session_search({"query": "pgBackRest"}, store=store))
            waited = time.monotonic() - started
        assert out["success"] is False
        assert "session archive is busy" in out["error"]
        assert waited < 10.0  # the old behaviour waited the 60 s write budget
        found = json.loads(session_search({"query": "pgBackRest"}, store=store))
        assert found["success"] is True and found["results"], found
    finally:
        store.close()


def test_default_read_budget_is_short(tmp_path: Path) -> None:
    """With default settings a read gives up after about 5 s, not the 60 s write budget."""
    path = tmp_path / "sessions.db"
    store = SessionStore(path, journal_mode="delete")
    try:
        with exclusive_lock_held_by_another_process(path):
            started = time.monotonic()
            out = json.loads(session_search({}, store=store))  # recent sessions listing
            waited = time.monotonic() - started
        assert out["success"] is False and "session archive is busy" in out["error"]
        assert waited < 20.0
    finally:
        store.close()
