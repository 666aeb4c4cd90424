"""Checking the arguments a model sent to a tool: clear ``ValueError`` messages, no traceback.

Raise from these inside your tool handler and turn the `ValueError` into
``tool_error(f"{tool}: {exc}")``; `check_tool_call` does the common first checks.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Mapping
from typing import Any

__all__ = [
    "blank",
    "check_tool_call",
    "choice_arg",
    "int_arg",
    "optional_text",
    "required_text",
    "visible_text",
]


def check_tool_call(tool_name: str, args: Any, known: Collection[str]) -> str | None:
    """Why a call cannot be run (unknown tool, arguments not an object), or None."""
    if tool_name not in known:
        return f"Unknown tool: {tool_name}"
    if not isinstance(args, Mapping):
        return f"{tool_name}: arguments must be a JSON object"
    return None


def required_text(args: Mapping[str, Any], key: str, *, max_chars: int = 4000) -> str:
    """A non-empty string argument, stripped and cut to ``max_chars``.

    :raises ValueError: missing, not a string, or blank.
    """
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"'{key}' is required and must be a non-empty string")
    return value.strip()[:max_chars]


def blank(text: str) -> bool:
    """Whether ``text`` shows nothing: only whitespace and invisible format characters
    (zero-width spaces and joiners, direction marks), which ``str.strip`` keeps."""
    return all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in text)


def visible_text(args: Mapping[str, Any], key: str, *, max_chars: int = 4000) -> str:
    """`required_text` that also refuses text made only of invisible characters.

    :raises ValueError: missing, not a string, blank or invisible.
    """
    text = required_text(args, key, max_chars=max_chars)
    if blank(text):
        raise ValueError(f"'{key}' is required and must be a non-empty string")
    return text


def optional_text(args: Mapping[str, Any], key: str) -> str | None:
    """A stripped string argument, or None when absent or blank.

    :raises ValueError: present but not a string.
    """
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"'{key}' must be a string")
    return value.strip() or None


def int_arg(args: Mapping[str, Any], key: str, default: int, *, low: int, high: int) -> int:
    """An integer argument clamped to ``[low, high]`` (``default`` when absent).

    :raises ValueError: not an integer (booleans and fractions refused).
    """
    value = args.get(key, default)
    if value is None:
        return default
    problem = f"'{key}' must be an integer from {low} to {high}, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(problem)
    try:
        number = int(value)
    except ValueError:
        raise ValueError(problem) from None
    return max(low, min(high, number))


def choice_arg(args: Mapping[str, Any], key: str, choices: Collection[str], default: str) -> str:
    """One of ``choices`` (``default`` when absent).

    :raises ValueError: another value.
    """
    value = args.get(key) or default
    if value not in choices:
        raise ValueError(f"'{key}' must be one of {', '.join(choices)}")
    return str(value)
