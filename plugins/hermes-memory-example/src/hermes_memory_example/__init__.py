"""A tiny reference memory provider: keyword-matched notes in one JSON file.

It exists to show the smallest complete provider (the docs tutorial walks through it) and to
exercise the plugin machinery in tests. It is not meant for real use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_memory_example.provider import NotesProvider

__all__ = ["NotesProvider"]


def __getattr__(name: str) -> Any:
    if name == "NotesProvider":
        from hermes_memory_example.provider import NotesProvider

        return NotesProvider
    raise AttributeError(f"module 'hermes_memory_example' has no attribute {name!r}")
