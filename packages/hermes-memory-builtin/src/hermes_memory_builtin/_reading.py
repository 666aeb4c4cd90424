"""Reading MEMORY.md / USER.md through the memories directory's descriptor.

Checking ``memories/`` with ``lstat`` and then opening ``memories/MEMORY.md`` by name leaves
the gap writes had (issue 21): the directory swapped for a link in between, and the link
target's file is read into the system prompt. A read therefore opens the directory once
(``O_DIRECTORY | O_NOFOLLOW``, see `MemoryDir`) and the file relative to it with
``O_NOFOLLOW``; a swap after the directory was opened changes nothing, a link at either
place is refused. Where ``os`` has no ``dir_fd`` (Windows) the directory is checked with
``lstat`` and the file opened by path, as before.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from hermes_memory_builtin._errors import MemoryFileError, UnsafeMemoryPath
from hermes_memory_builtin._format import (
    _BOM,
    MAX_FILE_BYTES,
    RawFile,
    _link_target,
    _q,
    normalize_newlines,
)
from hermes_memory_builtin._memory_dir import MemoryDir

__all__ = ["read_raw"]


def read_raw(path: Path, *, directory: MemoryDir | None = None) -> RawFile:
    """Read ``path`` as UTF-8 (a leading BOM is dropped), strictly and safely.

    A missing file is an empty store. A file that exists but cannot be used is reported with
    ``error`` (a short reason) and ``problem`` (a `MemoryFileError` with the full message and
    the fix) set, and is never treated as empty, so no caller can overwrite memory it failed
    to see. Refused, besides unreadable files: a symbolic link at ``path`` or at its directory
    (`UnsafeMemoryPath`; the link is never followed), a directory or any other non-regular
    file (a FIFO would block for ever), a file over `MAX_FILE_BYTES`, and text that is not
    UTF-8 (the message names the first bad byte and its offset).

    The file is opened relative to its directory's descriptor (see the module docstring);
    pass ``directory`` (``path``'s directory, already open) to read it from that very
    directory, as a write under its lock or a load reading the sidecar next does.
    """
    if directory is not None:
        return _read_in(directory, path)
    try:
        with MemoryDir.open_if_exists(path.parent) as opened:
            if opened is None:
                return RawFile(exists=False, text=None)
            return _read_in(opened, path)
    except MemoryFileError as exc:
        return _refused(exc)
    except OSError as exc:
        return _refused(_open_problem(path.parent, exc))


def _read_in(directory: MemoryDir, path: Path) -> RawFile:
    try:
        fd = directory.open_file(path.name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        if os.path.islink(path):  # a dangling link on a system without O_NOFOLLOW
            return _refused(_symlink_problem(path))
        return RawFile(exists=False, text=None)
    except OSError as exc:
        return _refused(_open_problem(path, exc))
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            return _refused(
                MemoryFileError(
                    path,
                    "is a directory, not a file",
                    f"move it out of the way (mv {_q(path)} {_q(str(path) + '.dir')}); the "
                    "memory file is created on the next write",
                    code=errno.EISDIR,
                )
            )
        if not stat.S_ISREG(info.st_mode):
            return _refused(
                UnsafeMemoryPath(
                    path,
                    "is not a regular file (a FIFO, socket or device)",
                    f"remove it (rm {_q(path)}); the memory file is created on the next write",
                    code=errno.EINVAL,
                )
            )
        if info.st_size > MAX_FILE_BYTES:
            return _refused(
                MemoryFileError(
                    path,
                    f"is too large to be a memory file ({info.st_size:,} bytes, the most "
                    f"accepted is {MAX_FILE_BYTES:,})",
                    "move it away and keep only the entries worth remembering",
                    code=errno.EFBIG,
                )
            )
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return _refused(_open_problem(path, exc))
    finally:
        os.close(fd)
    body = data[len(_BOM) :] if data.startswith(_BOM) else data
    try:
        text = body.decode("utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        offset = exc.start + (len(data) - len(body))
        bad = data[offset]
        problem = MemoryFileError(
            path,
            f"is not UTF-8 (byte 0x{bad:02x} at offset {offset})",
            f"convert it with iconv -f latin1 -t utf-8 {_q(path)} > {_q(str(path) + '.utf8')} "
            f"&& mv {_q(str(path) + '.utf8')} {_q(path)} (name its real encoding instead of "
            "latin1 if you know it); nothing was changed",
            code=errno.EILSEQ,
        )
        return RawFile(exists=True, text=None, error=problem.problem, data=data, problem=problem)
    return RawFile(exists=True, text=normalize_newlines(text), data=data)


def _refused(problem: MemoryFileError) -> RawFile:
    return RawFile(exists=True, text=None, error=problem.problem, problem=problem)


def _symlink_problem(path: Path) -> UnsafeMemoryPath:
    target = _link_target(path)
    return UnsafeMemoryPath(
        path,
        f"is a symbolic link{target}; memory files are never read or written through links, "
        "because a link would copy whatever it points at into the system prompt and replace "
        "it on the next write",
        "replace the link with a regular file holding only the entries you want the agent "
        f"to remember, or delete it (rm {_q(path)})",
        code=errno.ELOOP,
    )


def _open_problem(path: Path, exc: OSError) -> MemoryFileError:
    if exc.errno in (errno.ELOOP, errno.EMLINK) or os.path.islink(path):
        return _symlink_problem(path)
    if exc.errno in (errno.EACCES, errno.EPERM):
        owner = ""
        try:
            info = os.lstat(path)
            mode = stat.S_IMODE(info.st_mode)
            owner = f", mode {mode:04o}, owner uid {info.st_uid}"
            if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
                fix = (
                    f"it belongs to another user: sudo chown {os.geteuid()} {_q(path)} && "
                    f"chmod 600 {_q(path)}"
                )
            else:
                fix = f"give yourself read and write access: chmod 600 {_q(path)}"
        except OSError:
            fix = f"check the permissions of {_q(path)} and of its directory"
        return MemoryFileError(
            path, f"cannot be read: permission denied{owner}", fix, code=exc.errno
        )
    if exc.errno == errno.EISDIR:
        return MemoryFileError(
            path,
            "is a directory, not a file",
            f"move it out of the way ({_q(path)})",
            code=exc.errno,
        )
    reason = exc.strerror or str(exc)
    return MemoryFileError(
        path,
        f"cannot be read ({type(exc).__name__}: {reason})",
        "check the disk and the file, then retry; nothing was changed",
        code=exc.errno,
    )
