"""Fixtures for the RetainDB adapter tests: a fake service on 127.0.0.1 and a factory."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from retaindb_fake import KEY, FakeRetainDB

from hermes_memory_retaindb import RetainDBProvider


def settings_for(url: str, **extra: Any) -> dict[str, Any]:
    return {"api_key": KEY, "base_url": url, "project": "p", "user_id": "alice",
            "timeout": 2.0, "recall_timeout": 1.0, **extra}  # fmt: skip


@pytest.fixture
def fake() -> Iterator[FakeRetainDB]:
    with FakeRetainDB() as running:
        yield running


@pytest.fixture
def make_provider(
    hermes_home: Path, fake: FakeRetainDB
) -> Iterator[Callable[..., RetainDBProvider]]:
    created: list[RetainDBProvider] = []

    def make(*, url: str | None = None, init: bool = True, session_id: str = "s1",
             **settings: Any) -> RetainDBProvider:  # fmt: skip
        config = {"retaindb": settings_for(url or fake.url, **settings)}
        provider = RetainDBProvider(hermes_home=hermes_home, config=config, environ={})
        if init:
            provider.initialize(session_id, hermes_home=str(hermes_home), platform="cli")
        created.append(provider)
        return provider

    yield make
    for provider in created:
        provider.shutdown()
