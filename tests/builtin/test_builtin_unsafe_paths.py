"""Links, odd files, bad encodings and permissions: refused with a message that names the fix."""

from __future__ import annotations

import errno
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from builtin_helpers import call, write_file

from hermes_memory_builtin import MemoryFileError, MemoryStore, PendingStore, UnsafeMemoryPath
from hermes_memory_builtin._memory_dir import DIR_FD_SUPPORTED
from hermes_memory_builtin._reading import _open_problem, read_raw

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX links and modes")
pytestmark = posix_only

SECRET = "root:x:0:0:root:/root:/bin/bash"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the Hermes home, standing in for /etc/passwd."""
    directory = tmp_path / "elsewhere"
    directory.mkdir()
    target = directory / "passwd"
    target.write_text(SECRET)
    target.chmod(0o644)
    return target


@pytest.fixture
def home_memories(tmp_path: Path) -> Path:
    path = tmp_path / "home" / "memories"
    path.mkdir(parents=True)
    return path


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path, follow_symlinks=False).st_mode)


def test_a_symlinked_memory_file_is_never_read_nor_replaced(
    home_memories: Path, outside: Path
) -> None:
    link = home_memories / "MEMORY.md"
    link.symlink_to(outside)
    store = MemoryStore(home_memories)
    store.load_from_disk()
    assert store.entries("memory") == []
    assert store.format_for_system_prompt("memory") is None
    problem = store.load_problems["memory"]
    assert isinstance(problem, UnsafeMemoryPath) and isinstance(problem, OSError)
    assert str(link) in str(problem) and "symbolic link" in str(problem)
    assert str(outside) in str(problem)  # where it points
    assert store.load_errors["memory"] == str(problem)
    with pytest.raises(UnsafeMemoryPath, match="symbolic link"):
        store.load_from_disk(strict=True)
    for result in (
        store.add("memory", "new fact"),
        store.replace("memory", "root", "x"),
        store.remove("memory", "root"),
        store.apply_batch("memory", [{"action": "add", "content": "y"}]),
        call(store, target="memory", action="add", content="via the tool"),
    ):
        assert result["success"] is False
        assert "symbolic link" in result["error"]
        assert SECRET not in json.dumps(result)
    assert link.is_symlink() and os.readlink(link) == str(outside)
    assert outside.read_text() == SECRET and mode(outside) == 0o644
    # USER.md, a real file beside it, is unaffected
    assert store.add("user", "Name: Ada")["success"] is True


def test_a_dangling_link_is_refused_not_taken_for_an_empty_store(home_memories: Path) -> None:
    link = home_memories / "USER.md"
    link.symlink_to(home_memories.parent / "does-not-exist")
    store = MemoryStore(home_memories)
    result = store.add("user", "Name: Ada")
    assert result["success"] is False and "symbolic link" in result["error"]
    assert link.is_symlink() and not (home_memories.parent / "does-not-exist").exists()


def test_a_symlinked_memories_directory_is_refused(tmp_path: Path, outside: Path) -> None:
    real = outside.parent
    (real / "MEMORY.md").write_text("planted entry")
    home = tmp_path / "home"
    home.mkdir()
    (home / "memories").symlink_to(real)
    store = MemoryStore(home / "memories")
    store.load_from_disk()
    assert store.format_for_system_prompt("memory") is None
    assert isinstance(store.load_problems["memory"], UnsafeMemoryPath)
    assert isinstance(store.load_problems["user"], UnsafeMemoryPath)
    with pytest.raises(UnsafeMemoryPath, match="memories directory is never used through a link"):
        store.load_from_disk(strict=True)
    result = store.add("memory", "new fact")
    assert result["success"] is False and "symbolic link" in result["error"]
    assert sorted(p.name for p in real.iterdir()) == ["MEMORY.md", "passwd"]  # no lock, no temp
    # the module-level reader (used by the MCP server and doctor) refuses it too
    assert isinstance(read_raw(home / "memories" / "MEMORY.md").problem, UnsafeMemoryPath)


def test_new_directory_and_files_are_private(tmp_path: Path) -> None:
    memories = tmp_path / "fresh-home" / "memories"
    store = MemoryStore(memories)
    store.load_from_disk()
    assert mode(memories) == 0o700
    assert mode(memories.parent) == 0o700
    assert store.add("memory", "a fact")["success"] is True
    assert mode(memories / "MEMORY.md") == 0o600
    assert mode(memories / "MEMORY.md.meta.json") == 0o600
    assert mode(memories / "MEMORY.md.lock") == 0o600


def test_an_existing_world_readable_file_becomes_private_on_write(home_memories: Path) -> None:
    path = home_memories / "USER.md"
    write_file(path, "Name: Ada")
    path.chmod(0o644)
    store = MemoryStore(home_memories)
    assert store.add("user", "Likes tea")["success"] is True
    assert mode(path) == 0o600


def test_a_file_that_is_not_utf8_names_the_byte_and_the_fix(home_memories: Path) -> None:
    path = home_memories / "MEMORY.md"
    path.write_bytes(b"caf\xe9 au lait")
    store = MemoryStore(home_memories)
    store.load_from_disk()
    problem = store.load_problems["memory"]
    assert type(problem) is MemoryFileError
    assert f"{path} is not UTF-8 (byte 0xe9 at offset 3)" in str(problem)
    assert "iconv -f latin1 -t utf-8" in str(problem)
    with pytest.raises(MemoryFileError, match=r"byte 0xe9 at offset 3"):
        store.load_from_disk(strict=True)
    answer = call(store, target="memory", action="add", content="x")
    assert answer["success"] is False
    assert answer["error"].startswith("Refusing to write MEMORY.md: the file exists on disk")
    assert "byte 0xe9 at offset 3" in answer["error"] and "iconv" in answer["error"]
    assert path.read_bytes() == b"caf\xe9 au lait"


def test_the_offset_counts_a_leading_bom(home_memories: Path) -> None:
    path = home_memories / "USER.md"
    path.write_bytes(b"\xef\xbb\xbfok \xff")
    assert "byte 0xff at offset 6" in str(read_raw(path).problem)


def test_a_directory_in_place_of_the_file(home_memories: Path) -> None:
    (home_memories / "MEMORY.md").mkdir()
    store = MemoryStore(home_memories)
    with pytest.raises(MemoryFileError, match="is a directory, not a file"):
        store.load_from_disk(strict=True)
    result = store.add("memory", "x")
    assert result["success"] is False and "is a directory" in result["error"]


def test_a_fifo_is_refused_without_blocking(home_memories: Path) -> None:
    os.mkfifo(home_memories / "MEMORY.md")
    # In a child process with a deadline: a reader that opened the FIFO would hang for ever.
    code = (
        "import sys\n"
        "from hermes_memory_builtin import MemoryStore\n"
        "s = MemoryStore(sys.argv[1]); s.load_from_disk()\n"
        "print(s.load_errors['memory'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(home_memories)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "is not a regular file" in done.stdout


def test_permission_denied_message_names_the_fix(home_memories: Path) -> None:
    path = home_memories / "MEMORY.md"
    write_file(path, "a fact")
    problem = _open_problem(path, PermissionError(errno.EACCES, "Permission denied"))
    assert str(problem).startswith(f"{path} cannot be read: permission denied")
    assert "chmod 600" in str(problem)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads anything")
def test_an_unreadable_file_is_refused_with_its_cause(home_memories: Path) -> None:
    path = home_memories / "MEMORY.md"
    write_file(path, "a fact")
    path.chmod(0)
    try:
        store = MemoryStore(home_memories)
        with pytest.raises(MemoryFileError, match="permission denied"):
            store.load_from_disk(strict=True)
        assert "chmod 600" in store.add("memory", "x")["error"]
    finally:
        path.chmod(0o600)


def test_old_temp_files_are_removed_under_the_lock_and_fresh_ones_kept(
    home_memories: Path,
) -> None:
    stale = home_memories / ".mem_abandoned.tmp"
    fresh = home_memories / ".mem_inflight.tmp"
    unrelated = home_memories / "notes.tmp"
    for path in (stale, fresh, unrelated):
        path.write_text("partial")
    an_hour_ago = time.time() - 3600
    os.utime(stale, (an_hour_ago, an_hour_ago))
    os.utime(unrelated, (an_hour_ago, an_hour_ago))
    store = MemoryStore(home_memories)
    store.load_from_disk()
    assert not stale.exists()
    assert fresh.exists() and unrelated.exists()
    os.utime(fresh, (an_hour_ago, an_hour_ago))
    assert store.add("memory", "a fact")["success"] is True  # writes clean up too
    assert not fresh.exists() and unrelated.exists()


KILLED_WRITER = """
import os, sys, time
from hermes_memory_builtin import MemoryStore
real_replace = os.replace
def stuck(src, dst, **kwargs):
    print("temp written", flush=True)
    time.sleep(120)
os.replace = stuck
MemoryStore(sys.argv[1]).add("memory", "never finished")
"""


def test_a_sigkilled_writer_leaves_a_temp_file_that_a_later_write_removes(
    home_memories: Path,
) -> None:
    store = MemoryStore(home_memories)
    assert store.add("memory", "kept fact")["success"] is True
    with subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(home_memories)],
        stdout=subprocess.PIPE,
        text=True,
    ) as child:
        try:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "temp written"
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    leftovers = list(home_memories.glob(".mem_*.tmp"))
    assert len(leftovers) == 1
    assert leftovers[0].read_text() == "kept fact\n§\nnever finished"
    # still fresh: a slow writer might own it, so it stays
    assert store.add("memory", "second fact")["success"] is True
    assert leftovers[0].exists()
    long_ago = time.time() - 3600
    os.utime(leftovers[0], (long_ago, long_ago))
    assert store.add("memory", "third fact")["success"] is True
    assert list(home_memories.glob(".mem_*.tmp")) == []
    assert store.entries("memory") == ["kept fact", "second fact", "third fact"]


def test_exceptions_pickle_with_their_message(tmp_path: Path) -> None:
    import pickle

    error = UnsafeMemoryPath(tmp_path / "MEMORY.md", "is a symbolic link", "remove it")
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is UnsafeMemoryPath and str(again) == str(error)


SWAPPING_WRITER = """
import os, sys
from pathlib import Path
from hermes_memory_builtin import MemoryStore
memories, elsewhere = Path(sys.argv[1]), Path(sys.argv[2])
if len(sys.argv) > 3:  # the check of the test itself: writes by path
    import hermes_memory_builtin._memory_dir as memory_dir
    memory_dir.DIR_FD_SUPPORTED = False
real_open = os.open
def open_then_swap(path, flags, mode=0o777, *, dir_fd=None):
    # the write has taken its lock and read the file; it now reads the sidecar: swap
    # memories/ for a link before anything is written
    if str(path).endswith(".meta.json") and not memories.is_symlink():
        os.rename(memories, memories.with_name("memories.moved"))
        os.symlink(elsewhere, memories)
    return real_open(path, flags, mode, dir_fd=dir_fd)
os.open = open_then_swap
print(MemoryStore(memories).add("memory", "written during the swap")["success"])
"""


def _swap_during(script: str, memories: Path, elsewhere: Path, *extra: str) -> str:
    """Run ``script`` in a real process that swaps ``memories`` for a link mid-operation;
    returns its output."""
    done = subprocess.run(
        [sys.executable, "-c", script, str(memories), str(elsewhere), *extra],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert memories.is_symlink()  # the swap happened during the operation
    return done.stdout


def _swap_during_a_write(memories: Path, elsewhere: Path, *extra: str) -> None:
    _swap_during(SWAPPING_WRITER, memories, elsewhere, *extra)


@pytest.mark.skipif(not DIR_FD_SUPPORTED, reason="files by descriptor need dir_fd (POSIX)")
def test_swapping_the_directory_for_a_link_mid_write_sends_nothing_there(
    home_memories: Path, tmp_path: Path
) -> None:
    store = MemoryStore(home_memories)
    assert store.add("memory", "kept fact")["success"] is True
    elsewhere = tmp_path / "attacker"
    elsewhere.mkdir()
    _swap_during_a_write(home_memories, elsewhere)
    assert sorted(p.name for p in elsewhere.iterdir()) == []  # nothing landed in the target
    moved = home_memories.with_name("memories.moved")
    assert (moved / "MEMORY.md").read_text() == "kept fact\n§\nwritten during the swap"
    assert (moved / "MEMORY.md.meta.json").exists() and (moved / "MEMORY.md.lock").exists()
    # the next write sees the link and refuses it, naming the fix
    again = MemoryStore(home_memories).add("memory", "after the swap")
    assert again["success"] is False and "symbolic link" in again["error"]
    assert list(elsewhere.iterdir()) == []


def test_the_swap_check_catches_writes_by_path(home_memories: Path, tmp_path: Path) -> None:
    """The control of the test above: writing by path (the Windows fallback) follows the link."""
    assert MemoryStore(home_memories).add("memory", "kept fact")["success"] is True
    elsewhere = tmp_path / "attacker"
    elsewhere.mkdir()
    _swap_during_a_write(home_memories, elsewhere, "by-path")
    assert (elsewhere / "MEMORY.md").read_text() == "kept fact\n§\nwritten during the swap"


def test_the_memories_directory_and_its_missing_parents_are_private(tmp_path: Path) -> None:
    memories = tmp_path / "a" / "b" / "memories"
    assert MemoryStore(memories).add("user", "Prefers tea")["success"] is True
    for directory in (tmp_path / "a", tmp_path / "a" / "b", memories):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
    assert stat.S_IMODE((memories / "USER.md").stat().st_mode) == 0o600


SWAPPING_READER = """
import json, os, sys
from pathlib import Path
from hermes_memory_builtin import MemoryStore, PendingStore
memories, elsewhere, what = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
if len(sys.argv) > 4:  # the check of the test itself: reads by path
    import hermes_memory_builtin._memory_dir as memory_dir
    memory_dir.DIR_FD_SUPPORTED = False
trigger = "pending.json" if what == "pending" else "MEMORY.md"
real_open = os.open
def open_then_swap(path, flags, mode=0o777, *, dir_fd=None):
    # the reader has checked (or opened) memories/ and now opens the file: swap the
    # directory for a link to one whose files say something else
    if str(path).endswith(trigger) and not memories.is_symlink():
        os.rename(memories, memories.with_name("memories.moved"))
        os.symlink(elsewhere, memories)
    return real_open(path, flags, mode, dir_fd=dir_fd)
store = MemoryStore(memories)
os.open = open_then_swap
if what == "snapshot":
    store.load_from_disk()
    out = store.format_for_system_prompt("memory")
elif what == "tool":
    out = store.visible_entries("memory")
elif what == "metadata":
    out = store.entry_metadata("memory")
else:
    out = PendingStore(memories).proposals()
print(json.dumps(out))
"""


@pytest.mark.parametrize("what", ["snapshot", "tool", "metadata", "pending"])
@pytest.mark.parametrize("by_path", [False, True], ids=["by-descriptor", "by-path-control"])
def test_swapping_the_directory_for_a_link_mid_read_reads_nothing_there(
    home_memories: Path, tmp_path: Path, what: str, by_path: bool
) -> None:
    if not by_path and not DIR_FD_SUPPORTED:
        pytest.skip("files by descriptor need dir_fd (POSIX)")
    store = MemoryStore(home_memories)
    assert store.add("memory", "kept fact")["success"] is True
    staged, _ = PendingStore(home_memories).stage(
        "memory", [{"action": "add", "content": "held note"}], reason="r", origin="o", single=True
    )
    elsewhere = tmp_path / "attacker"
    elsewhere.mkdir()
    (elsewhere / "MEMORY.md").write_text("OUTSIDE-SECRET planted note")
    planted = (home_memories / "pending.json").read_text().replace(staged, "OUTSIDE-SECRET")
    (elsewhere / "pending.json").write_text(planted)
    extra = ["by-path"] if by_path else []
    out = _swap_during(SWAPPING_READER, home_memories, elsewhere, what, *extra)
    if by_path:  # the control: reading by name follows the swapped-in link
        assert "OUTSIDE-SECRET" in out
        return
    assert "OUTSIDE-SECRET" not in out
    assert (staged if what == "pending" else "kept fact") in out
