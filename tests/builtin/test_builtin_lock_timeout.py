"""A writer never waits for ever on a lock held by a stopped or stuck process (real process)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from hermes_memory_builtin import MemoryStore, memory_tool
from hermes_memory_builtin import _locking as locking

HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(60)
"""


@pytest.fixture
def held_lock(tmp_path):
    memories = tmp_path / "memories"
    memories.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(memories / "MEMORY.md.lock")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "locked"
    yield memories
    holder.kill()
    holder.wait()
    holder.stdout.close()


def test_lock_held_elsewhere_times_out_with_lock_error(held_lock):
    started = time.monotonic()
    with pytest.raises(locking.LockError, match="held by another process"):
        with locking.exclusive_lock(held_lock / "MEMORY.md", timeout=0.3):
            pass
    assert time.monotonic() - started < 5


def test_memory_tool_reports_a_stuck_lock_and_changes_nothing(held_lock, monkeypatch):
    monkeypatch.setattr(locking, "LOCK_TIMEOUT_S", 0.3)
    store = MemoryStore(held_lock)
    store.load_from_disk()
    result = json.loads(
        memory_tool({"action": "add", "target": "memory", "content": "a fact"}, store)
    )
    assert result["success"] is False
    assert "Could not lock MEMORY.md" in result["error"]
    assert not (held_lock / "MEMORY.md").exists() or (held_lock / "MEMORY.md").read_text() == ""
