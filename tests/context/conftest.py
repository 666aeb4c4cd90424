"""Real directory trees for the context-file tests: a git repository with nested folders."""

from __future__ import annotations

from pathlib import Path

import pytest


def write(path: Path, text: str | bytes) -> Path:
    """Write ``text`` (UTF-8) or raw bytes at ``path``, creating parent folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


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
