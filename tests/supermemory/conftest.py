"""Fixtures for the Supermemory adapter tests: a loopback fake server and a provider factory."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from supermemory_fake import FakeSupermemory

from hermes_memory_supermemory import SupermemoryProvider

FAST: dict[str, Any] = {
    "api_key": "sm-test-key",
    "timeout": 2.0,
    "retries": 0,
    "prefetch_wait": 5.0,
}


@pytest.fixture
def fake() -> Iterator[FakeSupermemory]:
    server = FakeSupermemory()
    yield server
    server.close()


@pytest.fixture
def make(hermes_home: Path) -> Iterator[Callable[..., SupermemoryProvider]]:
    made: list[SupermemoryProvider] = []

    def build(url: str, **settings: Any) -> SupermemoryProvider:
        provider = SupermemoryProvider(
            hermes_home=hermes_home,
            config={"supermemory": {**FAST, "base_url": url, **settings}},
            environ={},
        )
        made.append(provider)
        return provider

    yield build
    for provider in made:
        provider.shutdown()
