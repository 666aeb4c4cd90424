"""Provider health records shared between a running agent and the CLI.

An adapter that detects trouble (its circuit breaker opened, the server answered 401) writes
a small JSON record under ``<home>/memory_providers/<name>.status.json``; ``hermes-memory
provider status`` reads it from another process. Records are advisory: a missing or corrupt
one reads as "no news".
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from hermes_memory_core._fsutil import atomic_write_text

__all__ = ["read_provider_status", "status_path", "write_provider_status"]


def status_path(home: str | os.PathLike[str], name: str) -> Path:
    """Where the health record of provider ``name`` lives under ``home``."""
    return Path(home) / "memory_providers" / f"{name}.status.json"


def write_provider_status(
    home: str | os.PathLike[str],
    name: str,
    *,
    state: str,
    detail: str = "",
    failures: int = 0,
    **extra: Any,
) -> None:
    """Record provider health: ``state`` is ``"ok"``, ``"degraded"`` or ``"circuit_open"``.

    Never raises: a health record must not turn a provider failure into an agent failure.
    """
    record = {
        "provider": name,
        "state": state,
        "detail": detail,
        "failures": failures,
        "updated_at": time.time(),
        **extra,
    }
    with contextlib.suppress(OSError):
        atomic_write_text(status_path(home, name), json.dumps(record, ensure_ascii=False))


def read_provider_status(home: str | os.PathLike[str], name: str) -> dict[str, Any] | None:
    """The last health record of provider ``name``, or None when there is none."""
    try:
        data = json.loads(status_path(home, name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
