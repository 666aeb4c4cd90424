"""pytest fixtures for provider authors (the conformance suite lands with the manager)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty hermes home directory, exported as ``$HERMES_HOME`` for the test."""
    home = tmp_path / "hermes-home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    return home
