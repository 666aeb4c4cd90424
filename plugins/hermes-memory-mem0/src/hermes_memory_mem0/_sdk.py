"""Importing the mem0 SDK safely: telemetry off and its state directory under our home.

``mem0ai`` has import-time side effects (read in mem0 2.2.1 sources):

* ``mem0.memory.telemetry`` reads ``MEM0_TELEMETRY`` **once, at import** (default "True") and,
  when on, builds a PostHog client that reports to ``us.i.posthog.com``;
* ``mem0.memory.setup`` creates ``$MEM0_DIR`` (default ``~/.mem0``) and ``mem0.client.main``
  writes ``config.json`` with a random id there.

So before the first ``import mem0`` we set ``MEM0_TELEMETRY=False`` unless the user opted in
(config ``mem0.telemetry: true``) or set the variable themselves, and point ``MEM0_DIR`` at
``<home>/mem0`` unless the user chose a directory. Nothing here imports mem0 at module import:
`import_mem0` does, lazily, from a background thread.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import sys
import threading
from pathlib import Path
from types import ModuleType

__all__ = ["import_mem0", "prepare_environment", "sdk_installed", "telemetry_active"]

logger = logging.getLogger(__name__)
_lock = threading.Lock()


def sdk_installed() -> bool:
    """Whether the ``mem0`` package can be imported (checked without importing it)."""
    try:
        return importlib.util.find_spec("mem0") is not None
    except (ImportError, ValueError):
        return False


def prepare_environment(home: Path | None, *, telemetry_opt_in: bool) -> None:
    """Set mem0's switches before its first import (user-set variables are left alone)."""
    with _lock:
        if "MEM0_TELEMETRY" not in os.environ:
            os.environ["MEM0_TELEMETRY"] = "True" if telemetry_opt_in else "False"
        if home is not None and "MEM0_DIR" not in os.environ and "mem0" not in sys.modules:
            os.environ["MEM0_DIR"] = str(Path(home) / "mem0")


def telemetry_active() -> bool | None:
    """mem0's own telemetry switch as it was read at import (None: mem0 not imported yet)."""
    module = sys.modules.get("mem0.memory.telemetry")
    if module is None:
        return None
    return bool(getattr(module, "MEM0_TELEMETRY", False))


def import_mem0(home: Path | None, *, telemetry_opt_in: bool) -> ModuleType:
    """Import ``mem0`` with telemetry off unless opted in; warn when it is already on.

    :raises ImportError: the ``mem0ai`` package is not installed.
    """
    prepare_environment(home, telemetry_opt_in=telemetry_opt_in)
    module = importlib.import_module("mem0")
    if telemetry_active() and not telemetry_opt_in:
        logger.warning(
            "mem0 telemetry is on (MEM0_TELEMETRY=%s in the environment, or mem0 was imported "
            "before hermes-memory could switch it off); set MEM0_TELEMETRY=False to stop it",
            os.environ.get("MEM0_TELEMETRY"),
        )
    return module
