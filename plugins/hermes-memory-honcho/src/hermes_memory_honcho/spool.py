"""Files under the home directory holding Honcho writes not sent before a shutdown.

Each provider that shuts down with unsent writes saves them to its own file
``honcho_pending.<pid>.<time_ns>.json``, so processes sharing a home never overwrite each
other's writes. A starting provider *claims* a saved file by renaming it to
``honcho_pending.<its pid>.<time_ns>.sending`` (a rename succeeds for one process only) and
deletes it only once every write in it has been sent, dropped by the server, or saved
again at shutdown. A crash in between leaves the claimed file on disk; the next provider
to start takes it over once the claiming process is gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from hermes_memory_core.fsutil import atomic_write_text

__all__ = ["LEGACY_FILE", "claim_saved", "release", "save_writes"]

#: The single file older versions wrote (still read, then removed).
LEGACY_FILE = "honcho_pending.json"
_PREFIX = "honcho_pending."


def save_writes(home: Path, writes: list[dict[str, Any]]) -> Path:
    """Write ``writes`` (JSON-able) to a new file of this process, atomically, mode 0600."""
    path = home / f"{_PREFIX}{os.getpid()}.{time.time_ns()}.json"
    atomic_write_text(path, json.dumps(writes, ensure_ascii=False), mode=0o600)
    return path


def claim_saved(home: Path) -> list[Path]:
    """Claim every saved file (oldest first) and every file claimed by a process that is
    gone; returns the claimed paths, now owned by this process."""
    candidates: list[tuple[int, str, Path]] = []
    for path in home.glob(f"{_PREFIX}*"):
        parts = path.name.split(".")
        if path.name == LEGACY_FILE:
            candidates.append((0, path.name, path))
            continue
        if len(parts) != 4 or not (parts[1].isdigit() and parts[2].isdigit()):
            continue
        pid, stamp, suffix = int(parts[1]), int(parts[2]), parts[3]
        if suffix == "json" or (suffix == "sending" and not _process_alive(pid)):
            candidates.append((stamp, path.name, path))
    claimed: list[Path] = []
    last = 0
    for _, _, path in sorted(candidates):
        last = max(time.time_ns(), last + 1)  # claimed names keep the saved order
        target = home / f"{_PREFIX}{os.getpid()}.{last}.sending"
        try:
            os.rename(path, target)
        except OSError:
            continue  # another process claimed it first
        claimed.append(target)
    return claimed


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
