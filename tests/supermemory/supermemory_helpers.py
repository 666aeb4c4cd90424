"""Helpers the supermemory tests import by name (a conftest module cannot be imported safely:
every test folder has one and they share the module name)."""

from __future__ import annotations

from typing import Any

FAST: dict[str, Any] = {
    "api_key": "sm-test-key",
    "timeout": 2.0,
    "retries": 0,
    "prefetch_wait": 5.0,
}
