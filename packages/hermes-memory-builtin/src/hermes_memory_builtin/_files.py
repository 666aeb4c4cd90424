"""The memories directory: safe creation, refusal of links, cleanup of stale temp files.

* The directory (and any missing parent) is created with mode 0700; memory files are written
  0600 by the store.
* A memories directory that is a symbolic link is refused (`UnsafeMemoryPath`), so are the
  files themselves (see `hermes_memory_builtin._reading.read_raw`).
* The atomic writer leaves ``.mem_<random>.tmp`` behind when its process is killed between
  creating and renaming the temp file (SIGKILL, power loss). `clean_stale_temps` removes
  such files once they are older than `STALE_TEMP_AGE_S`; no write takes that long, so a
  temp file another process is still writing is never touched.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_memory_builtin._errors import MemoryFileError
from hermes_memory_builtin._format import directory_symlink_problem, not_a_directory_problem

if TYPE_CHECKING:
    from hermes_memory_builtin._memory_dir import MemoryDir

__all__ = ["STALE_TEMP_AGE_S", "TEMP_PREFIX", "clean_stale_temps", "ensure_memory_dir"]

logger = logging.getLogger(__name__)

#: Prefix of the atomic writer's temporary files in the memories directory.
TEMP_PREFIX = ".mem_"
#: A temp file older than this (seconds) belongs to a writer that died.
STALE_TEMP_AGE_S = 600.0


def ensure_memory_dir(directory: Path) -> None:
    """Make sure ``directory`` is a real directory, creating it (and parents) with mode 0700.

    :raises UnsafeMemoryPath: ``directory`` is a symbolic link.
    :raises MemoryFileError: ``directory`` exists but is not a directory, or cannot be made.
    """
    try:
        info = os.lstat(directory)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise MemoryFileError(
            directory, f"cannot be inspected ({exc.strerror or exc})", "check its permissions"
        ) from exc
    if info is not None:
        if stat.S_ISLNK(info.st_mode):
            raise directory_symlink_problem(directory)
        if not stat.S_ISDIR(info.st_mode):
            raise not_a_directory_problem(directory)
        return
    missing: list[Path] = []
    probe = directory
    while not os.path.lexists(probe) and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    try:
        for path in reversed(missing):
            with contextlib.suppress(FileExistsError):
                os.mkdir(path, 0o700)
    except OSError as exc:
        raise MemoryFileError(
            directory,
            f"cannot be created ({exc.strerror or exc})",
            "check the permissions of its parent directory",
            code=exc.errno,
        ) from exc
    # A concurrent creator may have raced us with something else: check once more.
    if os.path.islink(directory):
        raise directory_symlink_problem(directory)


def clean_stale_temps(
    directory: Path, max_age: float = STALE_TEMP_AGE_S, *, opened: MemoryDir | None = None
) -> list[Path]:
    """Delete ``.mem_*.tmp`` files in ``directory`` last modified over ``max_age`` s ago.

    Only regular files and links are removed (a link is removed, never followed). Returns
    the removed paths; errors are logged, never raised. Call it while holding a memory
    file's lock. With ``opened`` (``directory`` held open) names are listed, checked and
    removed through its descriptor.
    """
    removed: list[Path] = []
    cutoff = time.time() - max_age
    try:
        names = opened.names() if opened is not None else os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        if not (name.startswith(TEMP_PREFIX) and name.endswith(".tmp")):
            continue
        where = directory / name
        try:
            info = opened.lstat(name) if opened is not None else os.lstat(where)
            if stat.S_ISDIR(info.st_mode) or info.st_mtime > cutoff:
                continue
            if opened is not None:
                opened.unlink(name)
            else:
                os.unlink(where)
        except FileNotFoundError:
            continue
        except OSError as exc:
            logger.warning("could not remove stale temp file %s: %s", where, exc)
            continue
        logger.info("removed stale temp file %s (left by a killed writer)", where)
        removed.append(where)
    return removed
