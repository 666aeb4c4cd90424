"""The memories directory held open by descriptor for the length of one write.

Checking a path with ``lstat`` and then using it by name leaves a gap: ``memories/`` can be
swapped for a symbolic link in between, and the data file, its lock and temp files then land
in the link's target. A write therefore opens the directory once (``O_DIRECTORY |
O_NOFOLLOW``: a link there is refused) and creates, locks, replaces and removes every file
relative to that descriptor (``dir_fd=``). A swap during the write changes nothing: the files
land in the directory that was opened.

Reads go the same way (`MemoryDir.open_if_exists`, `MemoryDir.read_bytes`): a file read by
name after an ``lstat`` of its directory could come from a link's target swapped in between.

Where ``os`` takes no ``dir_fd`` (Windows) the same calls use ``<directory>/<name>`` paths
after an ``lstat`` of the directory, the behaviour before this module; `DIR_FD_SUPPORTED`
says which one runs.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from hermes_memory_builtin._errors import MemoryFileError
from hermes_memory_builtin._format import directory_symlink_problem, not_a_directory_problem

__all__ = ["DIR_FD_SUPPORTED", "MemoryDir"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

#: Whether files are reached through the directory's descriptor (POSIX) or by path.
DIR_FD_SUPPORTED: bool = (
    hasattr(os, "O_DIRECTORY")
    and _NOFOLLOW != 0
    and {os.open, os.rename, os.unlink, os.stat} <= os.supports_dir_fd
    and os.scandir in os.supports_fd
)


class MemoryDir:
    """One open memories directory; use `MemoryDir.open` as a context manager."""

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path = path
        self.fd = fd

    @classmethod
    @contextlib.contextmanager
    def open(cls, path: Path) -> Iterator[MemoryDir]:
        """Open ``path`` (which must exist) for the ``with`` block.

        :raises UnsafeMemoryPath: ``path`` is a symbolic link.
        :raises MemoryFileError: ``path`` is not a directory.
        :raises OSError: it cannot be opened.
        """
        if not DIR_FD_SUPPORTED:  # pragma: no cover - Windows keeps the path-based calls
            yield cls(path, None)
            return
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW | _CLOEXEC)
        except OSError as exc:
            if exc.errno == errno.ELOOP or os.path.islink(path):
                raise directory_symlink_problem(path) from exc
            if exc.errno == errno.ENOTDIR and os.path.lexists(path):  # not a folder above it
                raise not_a_directory_problem(path) from exc
            raise
        try:
            yield cls(path, fd)
        finally:
            os.close(fd)

    @classmethod
    @contextlib.contextmanager
    def open_if_exists(cls, path: Path) -> Iterator[MemoryDir | None]:
        """`open` for a reader: ``None`` when ``path`` does not exist (nothing to read).

        :raises UnsafeMemoryPath: ``path`` is a symbolic link.
        :raises MemoryFileError: ``path`` is not a directory.
        :raises OSError: it cannot be opened.
        """
        if not DIR_FD_SUPPORTED:  # pragma: no cover - Windows: check by lstat, read by path
            problem = _lstat_problem(path)
            if problem is not None:
                raise problem
            yield cls(path, None) if os.path.lexists(path) else None
            return
        with contextlib.ExitStack() as stack:
            try:
                opened: MemoryDir | None = stack.enter_context(cls.open(path))
            except FileNotFoundError:
                opened = None
            yield opened

    def _where(self, name: str) -> str:
        return name if self.fd is not None else str(self.path / name)

    def open_file(self, name: str, flags: int, mode: int = 0o600) -> int:
        """``os.open`` of ``name`` in this directory, never through a symbolic link."""
        return os.open(self._where(name), flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=self.fd)

    def lstat(self, name: str) -> os.stat_result:
        return os.stat(self._where(name), dir_fd=self.fd, follow_symlinks=False)

    def exists(self, name: str) -> bool:
        try:
            self.lstat(name)
        except FileNotFoundError:
            return False
        return True

    def unlink(self, name: str) -> None:
        os.unlink(self._where(name), dir_fd=self.fd)

    def read_bytes(self, name: str, limit: int) -> bytes:
        """At most ``limit`` bytes of regular file ``name``, never through a symbolic link.

        :raises FileNotFoundError: there is no ``name``.
        :raises OSError: ``name`` is a link (``ELOOP``), not a regular file (``EINVAL``; a
            FIFO is never waited on) or cannot be read.
        """
        fd = self.open_file(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, "not a regular file", str(self.path / name))
            with os.fdopen(fd, "rb", closefd=False) as handle:
                return handle.read(limit)
        finally:
            os.close(fd)

    def names(self) -> list[str]:
        """The names in this directory (read through the descriptor)."""
        with os.scandir(self.fd if self.fd is not None else self.path) as scanner:
            return [item.name for item in scanner]

    def write_atomic(
        self,
        name: str,
        text: str,
        *,
        tmp_prefix: str,
        mode: int | None = None,
        fsync: bool = True,
    ) -> None:
        """Replace ``name`` with ``text`` so that readers see the old or the new file.

        The temp file is created here with ``O_EXCL | O_NOFOLLOW``, fsynced (unless
        ``fsync=False``) and renamed over ``name`` inside this directory; then the directory
        is fsynced. ``mode`` defaults to the old file's mode, else 0600.
        """
        if mode is None:
            try:
                mode = stat.S_IMODE(self.lstat(name).st_mode)
            except FileNotFoundError:
                mode = 0o600
        tmp = f"{tmp_prefix}{secrets.token_hex(8)}.tmp"
        fd = self.open_file(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
                handle.flush()
                if fsync:
                    os.fsync(handle.fileno())
                if hasattr(os, "fchmod"):
                    os.fchmod(handle.fileno(), mode)
            if not hasattr(os, "fchmod"):  # pragma: no cover - Windows
                os.chmod(self._where(tmp), mode)
            os.replace(self._where(tmp), self._where(name), src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            with contextlib.suppress(OSError):
                self.unlink(tmp)
            raise
        if fsync and self.fd is not None:
            with contextlib.suppress(OSError):  # not every filesystem fsyncs a directory
                os.fsync(self.fd)


def _lstat_problem(path: Path) -> MemoryFileError | None:  # pragma: no cover - Windows
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return directory_symlink_problem(path)
    if not stat.S_ISDIR(info.st_mode):
        return not_a_directory_problem(path)
    return None
