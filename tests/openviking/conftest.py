"""Fixtures for the OpenViking adapter tests: a fake server on 127.0.0.1 and a factory."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from openviking_helpers import settings_for

sys.path.insert(0, str(Path(__file__).parent))

from openviking_fake import FakeOpenViking

from hermes_memory_core.kit.testing import provider_factory
from hermes_memory_openviking import OpenVikingProvider


@pytest.fixture
def fake() -> Iterator[FakeOpenViking]:
    with FakeOpenViking() as running:
        yield running


@pytest.fixture
def make_provider(
    hermes_home: Path, fake: FakeOpenViking
) -> Iterator[Callable[..., OpenVikingProvider]]:
    with provider_factory(OpenVikingProvider, hermes_home, "openviking") as factory:

        def make(*, url: str | None = None, init: bool = True, session_id: str = "s1",
                 **settings: Any) -> OpenVikingProvider:  # fmt: skip
            return factory(init=session_id if init else None,
                           **settings_for(url or fake.url, **settings))  # fmt: skip

        yield make


@pytest.fixture
def make(make_provider: Callable[..., OpenVikingProvider]) -> Callable[..., OpenVikingProvider]:
    """``make(url, **settings)``: a provider not yet initialised (the kit suites' form)."""
    return lambda url, **settings: make_provider(url=url, init=False, **settings)
