"""Helpers shared by the session-archive tests (no fixtures: plain functions)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["SCRIPT", "run_cli"]

#: The installed console script of this environment.
SCRIPT = shutil.which("hermes-memory", path=str(Path(sys.executable).parent))


def run_cli(home: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``hermes-memory ARGS`` on ``home`` through the console script, without progress bars
    and without the caller's ``HERMES_*``/``MEM0_*`` settings (the static model's row cache,
    ``HERMES_MEMORY_CACHE_DIR``, is kept: building rows is slow)."""
    assert SCRIPT is not None
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HERMES_", "MEM0_")) or k == "HERMES_MEMORY_CACHE_DIR"
    }
    env.update(HERMES_HOME=str(home), HERMES_MEMORY_NO_PROGRESS="1", PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [SCRIPT, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
