"""Fixtures for the RetainDB adapter tests: a fake service on 127.0.0.1 and a factory."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from retaindb_helpers import settings_for

sys.path.insert(0, str(Path(__file__).parent))

from retaindb_fake import FakeRetainDB

from hermes_memory_core.kit.testing import provider_factory
from hermes_memory_retaindb import RetainDBProvider


@pytest.fixture
def fake() -> Iterator[FakeRetainDB]:
    with FakeRetainDB() as running:
        yield running


@pytest.fixture
def make_provider(
    hermes_home: Path, fake: FakeRetainDB
) -> Iterator[Callable[..., RetainDBProvider]]:
    with provider_factory(RetainDBProvider, hermes_home, "retaindb") as factory:

        def make(*, url: str | None = None, init: bool = True, session_id: str = "s1",
                 **settings: Any) -> RetainDBProvider:  # fmt: skip
            return factory(init=session_id if init else None,
                           **settings_for(url or fake.url, **settings))  # fmt: skip

        yield make


@pytest.fixture
def make(make_provider: Callable[..., RetainDBProvider]) -> Callable[..., RetainDBProvider]:
    """``make(url, **settings)``: a provider not yet initialised (the kit suites' form)."""
    return lambda url, **settings: make_provider(url=url, init=False, **settings)
