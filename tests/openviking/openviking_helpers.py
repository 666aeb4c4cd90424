"""Helpers the openviking tests import by name (a conftest module cannot be imported safely:
every test folder has one and they share the module name)."""

from __future__ import annotations

from typing import Any

from openviking_fake import KEY


def settings_for(url: str, **extra: Any) -> dict[str, Any]:
    return {
        "url": url,
        "api_key": KEY,
        "account": "acme",
        "user": "alice",
        "timeout": 2.0,
        "recall_timeout": 1.0,
        "recall_total": 1.5,
        **extra,
    }
