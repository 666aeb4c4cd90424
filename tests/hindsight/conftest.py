"""Fixtures for the Hindsight adapter tests: a loopback fake server and a provider factory."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hindsight_fake import FakeHindsight
from hindsight_helpers import FAST

from hermes_memory_core.kit.testing import provider_factory
from hermes_memory_hindsight import HindsightProvider


@pytest.fixture
def fake() -> Iterator[FakeHindsight]:
    with FakeHindsight() as server:
        yield server


@pytest.fixture
def make(hermes_home: Path) -> Iterator[Callable[..., HindsightProvider]]:
    with provider_factory(HindsightProvider, hermes_home, "hindsight", FAST) as factory:
        yield lambda url, **settings: factory(api_url=url, **settings)
