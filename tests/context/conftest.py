"""Real directory trees for the context-file tests: a git repository with nested folders."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """``<tmp>/outer/repo`` with a ``.git`` directory and ``services/api`` below it."""
    root = tmp_path / "outer" / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "services" / "api").mkdir(parents=True)
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty Hermes home."""
    path = tmp_path / "hermes-home"
    path.mkdir()
    return path
