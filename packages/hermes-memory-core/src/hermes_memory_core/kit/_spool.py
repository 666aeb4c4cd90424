"""Files under the home directory holding a provider's writes not sent before a shutdown.

Each provider that shuts down with unsent writes saves them to its own file
``<name>_pending.<pid>.<time_ns>.json`` (mode 0600), so processes sharing a home never
overwrite each other. A starting provider *claims* a saved file by renaming it to
``<name>_pending.<its pid>.<time_ns>.sending`` (a rename succeeds for one process only) and
deletes it only once every write in it has been sent, dropped by the server, or saved again
at shutdown. A crash in between leaves the claimed file; the next provider to start takes it
over once the claiming process is gone. Delivery is therefore at-least-once.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from hermes_memory_core._fsutil import atomic_write_text

__all__ = ["Spool"]


class Spool:
    """The saved-writes files of provider ``name`` in ``home``."""

    def __init__(self, home: Path, name: str) -> None:
        self.home = home
        self.prefix = f"{name}_pending."

    def save(self, writes: list[dict[str, Any]]) -> Path:
        """Write ``writes`` (JSON-able) to a new file of this process, atomically."""
        path = self.home / f"{self.prefix}{os.getpid()}.{time.time_ns()}.json"
        atomic_write_text(path, json.dumps(writes, ensure_ascii=False), mode=0o600)
        return path

    def claim(self) -> list[Path]:
        """Claim every saved file (oldest first) and every file claimed by a process that
        is gone; returns the claimed paths, now owned by this process."""
        candidates: list[tuple[int, str, Path]] = []
        for path in self.home.glob(f"{self.prefix}*"):
            parts = path.name[len(self.prefix) :].split(".")
            if len(parts) != 3 or not (parts[0].isdigit() and parts[1].isdigit()):
                continue
            pid, stamp, suffix = int(parts[0]), int(parts[1]), parts[2]
            if suffix == "json" or (suffix == "sending" and not _process_alive(pid)):
                candidates.append((stamp, path.name, path))
        claimed: list[Path] = []
        last = 0
        for _, _, path in sorted(candidates):
            last = max(time.time_ns(), last + 1)  # claimed names keep the saved order
            target = self.home / f"{self.prefix}{os.getpid()}.{last}.sending"
            try:
                os.rename(path, target)
            except OSError:
                continue  # another process claimed it first
            claimed.append(target)
        return claimed

    @staticmethod
    def read(path: Path) -> list[dict[str, Any]]:
        """The writes in a claimed file.

        :raises OSError: the file cannot be read.
        :raises ValueError: it is not a JSON list.
        """
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            raise ValueError("not a list of writes")
        return [row for row in data if isinstance(row, dict)]

    @staticmethod
    def release(path: Path) -> None:
        """Delete a claimed file whose writes are all settled."""
        with contextlib.suppress(OSError):
            path.unlink()


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import ctypes

        handle = ctypes.windll.kernel32.OpenProcess(0x1000, False, pid)
        if not handle:
            return False
        code = ctypes.c_ulong()
        ctypes.windll.kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        ctypes.windll.kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True
