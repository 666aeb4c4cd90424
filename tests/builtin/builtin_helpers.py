"""Helpers shared by the curated-store tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_memory_builtin import MemoryStore, memory_tool


def call(store: MemoryStore | None, **args: Any) -> dict[str, Any]:
    """Run the memory tool and decode its JSON answer."""
    return json.loads(memory_tool(args, store))


def write_file(path: Path, text: str) -> None:
    """Write exact bytes of ``text`` (UTF-8, no newline translation)."""
    path.write_bytes(text.encode("utf-8"))
