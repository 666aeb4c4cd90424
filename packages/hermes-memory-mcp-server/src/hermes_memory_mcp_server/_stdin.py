"""A cancellable line reader for standard input.

The SDK's stdio transport reads stdin on a worker thread that cannot be interrupted, so a
server told to stop (SIGTERM) would wait for the client's next line. When stdin is a pipe,
socket or terminal on a POSIX system, this reader waits for data on the event loop instead,
and cancelling it is immediate.
"""

from __future__ import annotations

import os
import stat
import sys

import anyio

__all__ = ["StdinLines", "stdin_is_pollable"]

_CHUNK = 1 << 16


def stdin_is_pollable(fd: int = 0) -> bool:
    """Whether ``fd`` can be waited on by the event loop (POSIX pipe, socket or terminal)."""
    if sys.platform == "win32":
        return False
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


class StdinLines:
    """``async for line in StdinLines()`` yields decoded lines (with their newline) of ``fd``.

    Invalid UTF-8 is replaced, as the SDK's own reader does; iteration ends at end of file.
    """

    def __init__(self, fd: int = 0) -> None:
        self._fd = fd
        self._buffer = b""
        self._eof = False

    def __aiter__(self) -> StdinLines:
        return self

    async def __anext__(self) -> str:
        while b"\n" not in self._buffer and not self._eof:
            await anyio.wait_readable(self._fd)
            chunk = os.read(self._fd, _CHUNK)
            if chunk:
                self._buffer += chunk
            else:
                self._eof = True
        if not self._buffer:
            raise StopAsyncIteration
        line, newline, self._buffer = self._buffer.partition(b"\n")
        return (line + newline).decode("utf-8", errors="replace")
