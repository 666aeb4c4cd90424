"""Fixtures for the OpenViking adapter tests: a fake server on 127.0.0.1 and a factory."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from openviking_fake import KEY, FakeOpenViking

from hermes_memory_openviking import OpenVikingProvider


def settings_for(url: str, **extra: Any) -> dict[str, Any]:
    return {"url": url, "api_key": KEY, "account": "acme", "user": "alice",
            "timeout": 2.0, "recall_timeout": 1.0, "recall_total": 1.5, **extra}  # fmt: skip


@pytest.fixture
def fake() -> Iterator[FakeOpenViking]:
    with FakeOpenViking() as running:
        yield running


@pytest.fixture
def make_provider(
    hermes_home: Path, fake: FakeOpenViking
) -> Iterator[Callable[..., OpenVikingProvider]]:
    created: list[OpenVikingProvider] = []

    def make(*, url: str | None = None, init: bool = True, session_id: str = "s1",
             **settings: Any) -> OpenVikingProvider:  # fmt: skip
        config = {"openviking": settings_for(url or fake.url, **settings)}
        provider = OpenVikingProvider(hermes_home=hermes_home, config=config, environ={})
        if init:
            provider.initialize(session_id, hermes_home=str(hermes_home), platform="cli")
        created.append(provider)
        return provider

    yield make
    for provider in created:
        provider.shutdown()
