"""Shared fixtures for the curated-store tests: real directories, real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory_builtin import MemoryStore


@pytest.fixture
def mem_dir(tmp_path: Path) -> Path:
    """An empty memories directory."""
    path = tmp_path / "memories"
    path.mkdir()
    return path


@pytest.fixture
def store(mem_dir: Path) -> MemoryStore:
    """A loaded store with the default limits."""
    s = MemoryStore(mem_dir)
    s.load_from_disk()
    return s
