"""Fixtures of the side-by-side suite: one venv with the real Hermes Agent per test session."""

from __future__ import annotations

from pathlib import Path

import pytest
from hermes_agent import HermesAgent, install_hermes_agent


@pytest.fixture(scope="session")
def hermes(tmp_path_factory: pytest.TempPathFactory) -> HermesAgent:
    """The real ``hermes-agent`` package, installed into a private venv."""
    return HermesAgent(install_hermes_agent(tmp_path_factory.mktemp("hermes-agent-venv")))


@pytest.fixture
def two_homes(tmp_path: Path) -> tuple[Path, Path]:
    """A Hermes home and one of ours, side by side (each with ``memories/``)."""
    homes = (tmp_path / "hermes-home", tmp_path / "our-home")
    for home in homes:
        (home / "memories").mkdir(parents=True)
    return homes
