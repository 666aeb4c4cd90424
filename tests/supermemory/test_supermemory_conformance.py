"""The core provider conformance suite (`hermes_memory_core.testing`) run on
SupermemoryProvider: with the real ``supermemory`` SDK against a loopback fake server,
against a port nobody listens on, and with no configuration at all."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FAST
from supermemory_fake import FakeSupermemory, refused_url

from hermes_memory_core.testing import ProviderConformance
from hermes_memory_supermemory import SupermemoryProvider


class TestSupermemoryReachable(ProviderConformance):
    @pytest.fixture
    def provider(self, hermes_home: Path) -> Iterator[SupermemoryProvider]:
        server = FakeSupermemory()
        yield SupermemoryProvider(
            hermes_home=hermes_home,
            config={"supermemory": {**FAST, "base_url": server.url}},
            environ={},
        )
        server.close()


class TestSupermemoryRefused(ProviderConformance):
    @pytest.fixture
    def provider(self, hermes_home: Path) -> SupermemoryProvider:
        return SupermemoryProvider(
            hermes_home=hermes_home,
            config={"supermemory": {**FAST, "base_url": refused_url()}},
            environ={},
        )


class TestSupermemoryUnconfigured(ProviderConformance):
    @pytest.fixture
    def provider(self, hermes_home: Path) -> SupermemoryProvider:
        return SupermemoryProvider(hermes_home=hermes_home, config={}, environ={})
