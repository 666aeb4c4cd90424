"""Why a memory file cannot be read, and the command that fixes it.

The builtin store reports an unreadable ``MEMORY.md`` / ``USER.md`` to the model in words
meant for the model. A person at the terminal needs the real cause (not UTF-8, permission
denied, a file where a folder should be, a symbolic link) and what to type; this module
finds both by looking at the path itself, reading only.
"""

from __future__ import annotations

import errno
import os
import shlex
import stat
from pathlib import Path

from hermes_memory_cli._i18n import cli_gettext as _

__all__ = [
    "blocking_ancestor",
    "diagnose",
    "explain_memory_error",
    "explain_unreadable",
    "symlink_reason",
    "symlinked_paths",
]


def _q(path: Path) -> str:
    return shlex.quote(str(path))


def blocking_ancestor(path: Path) -> Path | None:
    """The nearest ancestor of ``path`` that exists but is not a directory."""
    for parent in reversed(path.parents):
        if parent.is_symlink() and not parent.exists():
            return parent
        if parent.exists() and not parent.is_dir():
            return parent
    return None


def symlinked_paths(memories: Path) -> list[tuple[Path, str]]:
    """The memory folder or files that are symbolic links, each with where it points."""
    found: list[tuple[Path, str]] = []
    for candidate in (memories, memories / "MEMORY.md", memories / "USER.md"):
        if candidate.is_symlink():
            try:
                target = os.readlink(candidate)
            except OSError:
                target = "?"
            found.append((candidate, target))
    return found


def _symlink_parts(path: Path, target: str) -> tuple[str, str]:
    """``(problem, fix)`` for a symlinked memory path."""
    folder = path.name == "memories"
    real = Path(target) if os.path.isabs(target) else path.parent / target
    copy = "cp -R" if folder else "cp"
    problem = (
        _(
            "{path} is a symbolic link (to {target}); memory is only read and written through "
            "a real folder, so that no link can redirect a write"
        )
        if folder
        else _(
            "{path} is a symbolic link (to {target}); memory is only read and written through "
            "a real file, so that no link can redirect a write"
        )
    ).format(path=path, target=target)
    fix = _("replace the link by a copy ({command}), or point --home at the real location").format(
        command=f"rm {_q(path)} && {copy} {_q(real)} {_q(path)}"
    )
    return problem, fix


def symlink_reason(path: Path, target: str) -> str:
    """Why a symlinked memory path is refused, with the commands that replace it."""
    problem, fix = _symlink_parts(path, target)
    return f"{problem}: {fix}"


def diagnose(path: Path, error: str | None = None) -> tuple[str, str]:
    """``(problem, fix)`` for a memory file that cannot be read, found by looking at it.

    ``problem`` starts with the path; ``fix`` is what to do or type. ``error`` is the
    reason the store gave, used when nothing more specific is found.
    """
    blocker = blocking_ancestor(path)
    if blocker is not None:
        if blocker.is_symlink():
            return (
                _("cannot read {path}: {blocker} is a dangling symbolic link").format(
                    path=path, blocker=blocker
                ),
                _("remove it"),
            )
        old = _q(blocker.with_name(blocker.name + ".old"))
        return (
            _("cannot read {path}: {blocker} is a file where a folder should be").format(
                path=path, blocker=blocker
            ),
            _("move it away ({command})").format(command=f"mv {_q(blocker)} {old}"),
        )
    for link, target in symlinked_paths(path.parent):
        if link == path or link == path.parent:
            problem, fix = _symlink_parts(link, target)
            return _("cannot use {path}: {problem}").format(path=path, problem=problem), fix
    if path.is_dir():
        return (
            _("cannot read {path}: it is a folder where a file should be").format(path=path),
            _("move it away ({command})").format(
                command=f"mv {_q(path)} {_q(path.with_name(path.name + '.old'))}"
            ),
        )
    try:
        data = _read_regular(path)
    except FileNotFoundError:
        return _cannot_read(path, error or _disappeared()), _("try again")
    except PermissionError:
        folder = path.parent
        if not os.access(folder, os.X_OK | os.R_OK):
            return (
                _("cannot read {path}: permission denied on the folder {folder}").format(
                    path=path, folder=folder
                ),
                f"chmod u+rwx {_q(folder)}",
            )
        return _("cannot read {path}: permission denied").format(path=path), (
            f"chmod u+rw {_q(path)}"
        )
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            return (
                _("cannot read {path}: it is a folder where a file should be").format(path=path),
                _("move it away"),
            )
        return _cannot_read(path, exc.strerror or exc), _("check the disk and the file")
    if data is None:
        return _cannot_read(path, error or _unknown()), _("check the file")
    try:
        data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = data[exc.start]
        tmp = _q(path.with_name(path.name + ".utf8"))
        return (
            _(
                "cannot read {path}: it is not UTF-8 text (byte 0x{byte:02x} at offset {offset})"
            ).format(path=path, byte=bad, offset=exc.start),
            _("convert it, e.g. {command}").format(
                command=f"iconv -f latin1 -t utf-8 {_q(path)} > {tmp} && mv {tmp} {_q(path)}"
            ),
        )
    return _cannot_read(path, error or _unknown()), _("check the file")


def _read_regular(path: Path) -> bytes | None:
    """The bytes of ``path`` when it is a regular file (``None`` for a FIFO, socket or
    device), never through a link and never waiting on a FIFO."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return handle.read(16 * 1024 * 1024)


def _disappeared() -> str:  # a message: looked up in the language of the run
    return _("it disappeared while reading")


def _unknown() -> str:
    return _("unknown reason")


def _cannot_read(path: Path, reason: object) -> str:
    return _("cannot read {path}: {reason}").format(path=path, reason=reason)


def explain_unreadable(path: Path, error: str | None = None) -> str:
    """One line: why ``path`` (a memory file) cannot be read, and how to fix it."""
    problem, fix = diagnose(path, error)
    return f"{problem}: {fix}"


def explain_memory_error(exc: BaseException, memories: Path) -> str:
    """A one-line reason for an exception raised while loading the memory files.

    Understands the builtin's ``UnsafeMemoryPath`` (a symlinked memory path) and
    ``MemoryFileError`` (an unreadable or non-UTF-8 file) by name, so it works with any
    version of the builtin; anything else is described by its type and message.
    """
    if getattr(exc, "problem", None) and getattr(exc, "fix", None):
        return " ".join(str(exc).split())  # the builtin's MemoryFileError: cause and fix
    path_attr = getattr(exc, "path", None)
    path = Path(path_attr) if path_attr else None
    name = type(exc).__name__
    if name == "UnsafeMemoryPath" or (path is None and symlinked_paths(memories)):
        links = symlinked_paths(memories)
        if links:
            link, target = links[0]
            return _("refusing to use {path}: {reason}").format(
                path=link, reason=symlink_reason(link, target)
            )
        return _("refusing to use {path}: {reason}").format(
            path=memories, reason=" ".join(str(exc).split())
        )
    if path is not None:
        return explain_unreadable(path, str(exc))
    for candidate in (memories / "MEMORY.md", memories / "USER.md"):
        if candidate.exists() or candidate.is_symlink() or blocking_ancestor(candidate):
            text = explain_unreadable(candidate, str(exc))
            if _unknown() not in text and _disappeared() not in text:
                return text
    detail = " ".join(str(exc).split())
    return _("cannot load the memory files in {folder}: {error}").format(
        folder=memories, error=f"{name}: {detail}"
    )
