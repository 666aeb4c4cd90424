"""The lock file: 0600, never followed through a symlink, really exclusive across processes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_memory_builtin import MemoryStore
from hermes_memory_builtin._locking import LockError, exclusive_lock

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX lock semantics")


def test_lock_file_is_private(mem_dir: Path) -> None:
    store = MemoryStore(mem_dir)
    store.add("memory", "x")
    lock = mem_dir / "MEMORY.md.lock"
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600
    assert lock.read_bytes() == b""


def test_existing_loose_lock_is_tightened(mem_dir: Path) -> None:
    lock = mem_dir / "USER.md.lock"
    lock.touch()
    os.chmod(lock, 0o664)
    MemoryStore(mem_dir).add("user", "x")
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600


def test_symlinked_lock_is_refused(mem_dir: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("do not touch", encoding="utf-8")
    os.chmod(victim, 0o644)
    (mem_dir / "MEMORY.md.lock").symlink_to(victim)
    store = MemoryStore(mem_dir)
    result = store.add("memory", "x")
    assert result["success"] is False
    assert "symbolic link" in result["error"]
    assert victim.read_text(encoding="utf-8") == "do not touch"
    assert stat.S_IMODE(victim.stat().st_mode) == 0o644
    assert not (mem_dir / "MEMORY.md").exists()
    with pytest.raises(LockError):
        with exclusive_lock(mem_dir / "MEMORY.md"):
            pass


HOLDER = """
import sys, time
from pathlib import Path
from hermes_memory_core._fsutil import atomic_write_text
from hermes_memory_builtin._locking import exclusive_lock
path = Path(sys.argv[1])
with exclusive_lock(path):
    print("held", flush=True)
    time.sleep(0.5)
    atomic_write_text(path, "holder entry", tmp_prefix=".mem_")
"""


def test_lock_excludes_another_process(mem_dir: Path) -> None:
    # The holder writes its entry late while it holds the lock. Without real exclusion the
    # parent's add would land first and then be overwritten by the holder.
    path = mem_dir / "MEMORY.md"
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True
    ) as holder:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        result = MemoryStore(mem_dir).add("memory", "parent entry")
        assert holder.wait(timeout=30) == 0
    assert result["success"] is True
    assert path.read_text(encoding="utf-8") == "holder entry\n§\nparent entry"
