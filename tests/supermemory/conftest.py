"""Fixtures for the Supermemory adapter tests: a loopback fake server and a provider factory."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from supermemory_fake import FakeSupermemory
from supermemory_helpers import FAST

from hermes_memory_core.kit.testing import provider_factory
from hermes_memory_supermemory import SupermemoryProvider


@pytest.fixture
def fake() -> Iterator[FakeSupermemory]:
    with FakeSupermemory() as server:
        yield server


@pytest.fixture
def make(hermes_home: Path) -> Iterator[Callable[..., SupermemoryProvider]]:
    with provider_factory(SupermemoryProvider, hermes_home, "supermemory", FAST) as factory:
        yield lambda url, **settings: factory(base_url=url, **settings)
