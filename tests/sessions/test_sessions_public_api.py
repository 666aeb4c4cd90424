"""The sessions package's public surface is its `__all__`s, and api.md lists all of it.

Every name a room (`storage`, `search`, `importers`, `vectors`) or the package exports must
import from that path and be named in the ``hermes_memory_sessions`` section of
``docs/reference/api.md``; every module inside a room is private (``_``-prefixed).
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import hermes_memory_sessions

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(hermes_memory_sessions.__file__).parent
ROOMS = ("storage", "search", "importers", "vectors")
PUBLIC_PATHS = ("hermes_memory_sessions", *(f"hermes_memory_sessions.{r}" for r in ROOMS))


def _sessions_section() -> str:
    text = (ROOT / "docs" / "reference" / "api.md").read_text(encoding="utf-8")
    start = text.index("## hermes_memory_sessions")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


@pytest.mark.parametrize("path", PUBLIC_PATHS)
def test_every_exported_name_imports_and_is_documented(path: str) -> None:
    module = importlib.import_module(path)
    section = _sessions_section()
    names = list(module.__all__)
    assert names, path
    for name in names:
        assert getattr(module, name) is not None, f"{path}.{name}"
    undocumented = [
        n for n in names if not re.search(rf"`[^`\n]*\b{re.escape(n)}\b[^`\n]*`", section)
    ]
    assert not undocumented, f"{path} exports names api.md does not list: {undocumented}"


def test_the_documented_room_paths_are_the_rooms() -> None:
    section = _sessions_section()
    paths = set(re.findall(r"`(hermes_memory_sessions\.[a-z_.]+)", section))
    allowed = {*PUBLIC_PATHS, "hermes_memory_sessions.protocol"}
    stray = sorted(p for p in paths if p.rsplit(".", 1)[0] not in allowed and p not in allowed)
    assert not stray, f"api.md names paths that are not public: {stray}"


@pytest.mark.parametrize("room", ROOMS)
def test_modules_inside_a_room_are_private(room: str) -> None:
    modules = [p.stem for p in (PACKAGE / room).glob("*.py") if p.stem != "__init__"]
    assert modules and all(m.startswith("_") for m in modules), modules
