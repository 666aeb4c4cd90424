"""Fixtures for the Hindsight adapter tests: a loopback fake server and a provider factory."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hindsight_fake import FakeHindsight

from hermes_memory_hindsight import HindsightProvider
from hermes_memory_testing import provider_factory

FAST: dict[str, Any] = {
    "mode": "local_external",
    "timeout": 2.0,
    "retries": 0,
    "prefetch_wait": 5.0,
    "retain_async": False,
}


@pytest.fixture
def fake() -> Iterator[FakeHindsight]:
    with FakeHindsight() as server:
        yield server


@pytest.fixture
def make(hermes_home: Path) -> Iterator[Callable[..., HindsightProvider]]:
    with provider_factory(HindsightProvider, hermes_home, "hindsight", FAST) as factory:
        yield lambda url, **settings: factory(api_url=url, **settings)
