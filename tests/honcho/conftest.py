"""Fixtures for the Honcho adapter tests: a stateful fake and a provider factory."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from honcho_fake import FakeHoncho
from honcho_helpers import wait_for  # noqa: F401  (re-exported for older imports)

from hermes_memory_honcho import HonchoProvider

BASE_SETTINGS: dict[str, Any] = {
    "base_url": "http://honcho.test",
    "workspace": "hermes",
    "peer_name": "alice",
    "ai_peer": "hermes",
    "max_retries": 0,
    "timeout": 2.0,
    "prefetch_wait": 3.0,
    "tool_timeout": 5.0,
    "cooldown": 60.0,
}


@pytest.fixture(autouse=True)
def _private_user_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``~/.honcho/config.json`` is read from ``$HOME``: never the real one in a test."""
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("user-home")))
    monkeypatch.delenv("USERPROFILE", raising=False)
    monkeypatch.delenv("HERMES_HONCHO_HOST", raising=False)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "hermes-home"
    path.mkdir()
    return path


@pytest.fixture
def fake() -> FakeHoncho:
    return FakeHoncho()


@pytest.fixture
def make_provider(home: Path, fake: FakeHoncho) -> Iterator[Callable[..., HonchoProvider]]:
    created: list[HonchoProvider] = []

    def make(
        *,
        settings: dict[str, Any] | None = None,
        transport: httpx.BaseTransport | None = None,
        init: bool = True,
        session_id: str = "cli-proj",
        **init_kwargs: Any,
    ) -> HonchoProvider:
        section = {**BASE_SETTINGS, **(settings or {})}
        provider = HonchoProvider(
            hermes_home=home,
            config={"honcho": section},
            transport=transport if transport is not None else fake.transport(),
            environ={},
        )
        if init:
            init_kwargs.setdefault("platform", "cli")
            provider.initialize(session_id, hermes_home=str(home), **init_kwargs)
        created.append(provider)
        return provider

    yield make
    for provider in created:
        provider.shutdown()
