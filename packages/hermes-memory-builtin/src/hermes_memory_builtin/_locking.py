"""The inter-process lock that serialises writers of one memory file.

Each data file has a sibling ``<file>.lock`` that never holds data, so the data file itself
can be replaced atomically. On POSIX the lock is ``flock(LOCK_EX)`` on a descriptor opened
with ``O_NOFOLLOW`` and mode 0600 (a symlinked lock file is refused, a pre-existing looser
lock file is tightened to 0600). Elsewhere `filelock.FileLock` is used. Readers never lock:
atomic replacement means they always see a whole file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_memory_core.kit import make_private_dirs

if TYPE_CHECKING:
    from hermes_memory_builtin._memory_dir import MemoryDir

__all__ = ["LOCK_TIMEOUT_S", "LockError", "exclusive_lock", "lock_path_for"]

#: How long a writer waits for another process's lock before giving up with `LockError`.
#: A stopped process (SIGSTOP, a debugger) keeps its lock; the agent's turn must not wait
#: for it for ever.
LOCK_TIMEOUT_S = 10.0


# flock() is per open file description, so two threads of one process that each open the
# lock file already exclude each other; the in-process lock only spares the kernel a wait
# queue and keeps the ordering fair between threads.
_THREAD_LOCKS: dict[str, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


class LockError(OSError):
    """The lock file could not be opened or locked safely (for example it is a symlink)."""


def lock_path_for(path: Path) -> Path:
    """The lock file guarding ``path``: ``<path>.lock``."""
    return path.with_name(path.name + ".lock")


def _thread_lock(lock_path: Path) -> threading.Lock:
    key = os.path.abspath(lock_path)
    with _THREAD_LOCKS_GUARD:
        lock = _THREAD_LOCKS.get(key)
        if lock is None:
            lock = _THREAD_LOCKS[key] = threading.Lock()
        return lock


def _open_lock_file(lock_path: Path, directory: MemoryDir | None = None) -> int:
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        if directory is not None:
            fd = directory.open_file(lock_path.name, os.O_RDWR | os.O_CREAT, 0o600)
        else:
            fd = os.open(lock_path, flags, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP or lock_path.is_symlink():
            raise LockError(
                exc.errno or errno.ELOOP,
                f"Refusing to use lock file {lock_path}: it is a symbolic link",
            ) from exc
        raise LockError(
            exc.errno or errno.EIO, f"Cannot open lock file {lock_path}: {exc}"
        ) from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise LockError(errno.EINVAL, f"Lock file {lock_path} is not a regular file")
        if info.st_mode & 0o777 != 0o600:
            # Tighten a lock file created by an older tool; not ours to chmod → keep going.
            with contextlib.suppress(OSError):
                os.fchmod(fd, 0o600)
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def exclusive_lock(
    path: Path, timeout: float | None = None, *, directory: MemoryDir | None = None
) -> Iterator[None]:
    """Hold the exclusive lock of data file ``path`` for the duration of the ``with`` block.

    With ``directory`` (``path``'s directory, held open) the lock file is opened relative to
    its descriptor, never by path.

    Waits up to ``timeout`` seconds (default `LOCK_TIMEOUT_S`) for the lock. Raises
    `LockError` when the lock file cannot be used or stays taken. The lock is released when
    the block ends or the process dies (the kernel drops it).
    """
    if timeout is None:
        timeout = LOCK_TIMEOUT_S
    lock_path = lock_path_for(path)
    if directory is None:
        make_private_dirs(lock_path.parent)
    with _thread_lock(lock_path):
        if sys.platform == "win32":  # pragma: no cover - no flock on Windows
            import filelock

            try:
                with filelock.FileLock(str(lock_path), mode=0o600, timeout=timeout):
                    yield
            except filelock.Timeout as exc:
                raise LockError(errno.EAGAIN, f"{lock_path} is held by another process") from exc
        else:
            import fcntl

            fd = _open_lock_file(lock_path, directory)
            try:
                _flock_with_deadline(fd, lock_path, timeout)
                try:
                    yield
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)


def _flock_with_deadline(fd: int, lock_path: Path, timeout: float) -> None:
    import fcntl

    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockError(
                    errno.EAGAIN,
                    f"{lock_path} has been held by another process for {timeout:.0f} s",
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
