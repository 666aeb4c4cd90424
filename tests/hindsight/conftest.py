"""Fixtures for the Hindsight adapter tests: a loopback fake server and a provider factory."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hindsight_fake import FakeHindsight

from hermes_memory_hindsight import HindsightProvider

FAST: dict[str, Any] = {
    "mode": "local_external",
    "timeout": 2.0,
    "retries": 0,
    "prefetch_wait": 5.0,
    "retain_async": False,
}


@pytest.fixture
def fake() -> Iterator[FakeHindsight]:
    server = FakeHindsight()
    yield server
    server.close()


@pytest.fixture
def make(hermes_home: Path) -> Iterator[Callable[..., HindsightProvider]]:
    made: list[HindsightProvider] = []

    def build(url: str, **settings: Any) -> HindsightProvider:
        provider = HindsightProvider(
            hermes_home=hermes_home,
            config={"hindsight": {**FAST, "api_url": url, **settings}},
            environ={},
        )
        made.append(provider)
        return provider

    yield build
    for provider in made:
        provider.shutdown()
