"""Exceptions for memory files that cannot be used as they are on disk.

Both carry a complete, human-readable message (what is wrong with which path, and how to fix
it) so a command-line tool can print ``str(exc)`` once and exit non-zero. They subclass
`OSError`, so code that already handles filesystem errors keeps working.
"""

from __future__ import annotations

import errno as errno_codes
import os
from pathlib import Path

__all__ = ["MemoryFileError", "UnsafeMemoryPath"]


class MemoryFileError(OSError):
    """A memory file or directory exists but cannot be read or written as it is.

    Examples: ``MEMORY.md`` is not UTF-8, is not readable by this user, or is a directory.

    :param path: the offending path.
    :param problem: what is wrong, phrased to follow the path (``"is not UTF-8 (…)"``).
    :param fix: what the user should do about it.
    :param code: the ``errno`` value stored on the exception (``EIO`` by default).

    ``str(exc)`` is ``"<path> <problem>: <fix>"``; the parts are also available as the
    attributes ``path``, ``problem`` and ``fix``.
    """

    def __init__(
        self, path: str | os.PathLike[str], problem: str, fix: str, *, code: int | None = None
    ) -> None:
        self.path = Path(path)
        self.problem = problem
        self.fix = fix
        self.message = f"{self.path} {problem}: {fix}"
        super().__init__(code if code is not None else errno_codes.EIO, self.message)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[object, ...]:  # keep pickling (multiprocessing) working
        return (_rebuild, (type(self), str(self.path), self.problem, self.fix, self.errno))


class UnsafeMemoryPath(MemoryFileError):
    """A memory file or the memories directory is a symbolic link (or another unsafe kind of
    path), so it is neither read into the prompt nor written.

    A link could make the agent copy any file the user can read (``/etc/passwd``, an SSH
    key) into its system prompt, or replace the link's target on the next write.
    """


def _rebuild(
    cls: type[MemoryFileError], path: str, problem: str, fix: str, code: int | None
) -> MemoryFileError:
    return cls(path, problem, fix, code=code)
