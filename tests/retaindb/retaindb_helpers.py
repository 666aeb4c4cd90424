"""Helpers the retaindb tests import by name (a conftest module cannot be imported safely:
every test folder has one and they share the module name)."""

from __future__ import annotations

from typing import Any

from retaindb_fake import KEY


def settings_for(url: str, **extra: Any) -> dict[str, Any]:
    return {
        "api_key": KEY,
        "base_url": url,
        "project": "p",
        "user_id": "alice",
        "timeout": 2.0,
        "recall_timeout": 1.0,
        **extra,
    }
