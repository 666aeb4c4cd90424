"""JSON results for tools: every tool answers the model with one JSON string."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["tool_error", "tool_result"]


def tool_result(payload: dict[str, Any]) -> str:
    """Serialise a tool payload; non-ASCII (CJK) text stays readable for the model."""
    return json.dumps(payload, ensure_ascii=False, default=str)


def tool_error(message: str, **extra: Any) -> str:
    """``{"error": message, **extra}`` as a JSON string."""
    return tool_result({"error": message, **extra})
