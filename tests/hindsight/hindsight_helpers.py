"""Helpers the hindsight tests import by name (a conftest module cannot be imported safely:
every test folder has one and they share the module name)."""

from __future__ import annotations

from typing import Any

FAST: dict[str, Any] = {
    "mode": "local_external",
    "timeout": 2.0,
    "retries": 0,
    "prefetch_wait": 5.0,
    "retain_async": False,
}
