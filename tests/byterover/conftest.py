"""Fixtures for the ByteRover adapter tests: the stand-in CLI and a provider factory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from byterover_helpers import FAKE_COMMAND

from hermes_memory_byterover import ByteroverProvider


@pytest.fixture
def make_provider(hermes_home: Path):
    created: list[ByteroverProvider] = []

    def make(
        mode: str = "ok",
        *,
        settings: dict | None = None,
        config: dict | None = None,
        init: bool = True,
        extra_env: dict | None = None,
        **init_kwargs,
    ) -> ByteroverProvider:
        section = {"command": FAKE_COMMAND, "breaker_threshold": 3, **(settings or {})}
        environ = {"PATH": os.environ.get("PATH", ""), "FAKE_BRV_MODE": mode, **(extra_env or {})}
        provider = ByteroverProvider(
            hermes_home=hermes_home,
            config={"byterover": section, **(config or {})},
            environ=environ,
        )
        if init:
            provider.initialize("s1", hermes_home=str(hermes_home), platform="cli", **init_kwargs)
        created.append(provider)
        return provider

    yield make
    for provider in created:
        provider.shutdown()
