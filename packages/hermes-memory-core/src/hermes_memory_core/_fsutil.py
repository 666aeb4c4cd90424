"""Small filesystem primitives shared by the packages: atomic text writes, private dirs."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["PRIVATE_DIR_MODE", "atomic_write_text", "make_private_dirs"]

#: Mode of every directory the project creates: memory, archives and tokens are private.
PRIVATE_DIR_MODE = 0o700


def make_private_dirs(path: str | os.PathLike[str]) -> None:
    """Create ``path`` and any missing parents with mode 0700 (``mkdir(parents=True)``
    gives the parents the default 0755). Existing directories are left as they are."""
    target = Path(path)
    missing = []
    while not target.exists() and target != target.parent:
        missing.append(target)
        target = target.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir(mode=PRIVATE_DIR_MODE)


def atomic_write_text(
    path: str | os.PathLike[str],
    text: str,
    *,
    tmp_prefix: str = ".tmp_",
    mode: int | None = None,
    fsync: bool = True,
) -> None:
    """Replace ``path`` with ``text`` so that readers see the old or the new file, never half.

    The text goes to a temporary file in the same directory, is flushed and fsynced, and is
    then renamed over the target; the directory is fsynced too so the rename survives a
    crash. ``mode`` sets the permissions of the new file (default: keep the old file's mode,
    or 0600 for a new file). The temporary file is removed on any failure.

    ``fsync=False`` skips both fsyncs: the replacement is still atomic for readers, but after
    a power loss the file may hold the old text (or, on some filesystems, be empty). Use it
    only for data that can be rebuilt, where the two fsyncs would dominate the cost.
    """
    target = Path(path)
    directory = target.parent
    make_private_dirs(directory)
    if mode is None:
        try:
            mode = target.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = 0o600
    fd, tmp_name = tempfile.mkstemp(prefix=tmp_prefix, suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            if fsync:
                os.fsync(handle.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    if fsync:
        _fsync_directory(directory)


def _fsync_directory(directory: Path) -> None:
    # Not every platform lets a directory be opened for fsync (Windows); the rename is
    # still atomic there, only its durability across power loss is weaker.
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
