"""Where a running dashboard keeps its files under ``<home>/dashboard/``, and the one line it
prints (shared by the command and the server it starts)."""

from __future__ import annotations

import sys

__all__ = ["LOG_FILE", "STATE_DIR", "STATE_FILE", "TOKEN_FILE", "announce"]

STATE_DIR = "dashboard"
STATE_FILE = "state.json"
TOKEN_FILE = "token"  # noqa: S105 - a file name, not a secret
LOG_FILE = "dashboard.log"


def announce(url: str) -> None:
    """The one line people and scripts look for."""
    sys.stdout.write(f"Dashboard: {url}\n")
    sys.stdout.flush()
