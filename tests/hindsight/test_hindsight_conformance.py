"""The core provider conformance suite (`hermes_memory_core.testing`) run on
HindsightProvider: with the real ``hindsight-client`` against a loopback fake server, against
a port nobody listens on, and with no configuration at all."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FAST
from hindsight_fake import FakeHindsight, refused_url

from hermes_memory_core.testing import ProviderConformance
from hermes_memory_hindsight import HindsightProvider


class TestHindsightReachable(ProviderConformance):
    @pytest.fixture
    def provider(self, hermes_home: Path) -> Iterator[HindsightProvider]:
        server = FakeHindsight()
        yield HindsightProvider(
            hermes_home=hermes_home,
            config={"hindsight": {**FAST, "api_url": server.url}},
            environ={},
        )
        server.close()


class TestHindsightRefused(ProviderConformance):
    @pytest.fixture
    def provider(self, hermes_home: Path) -> HindsightProvider:
        return HindsightProvider(
            hermes_home=hermes_home,
            config={"hindsight": {**FAST, "api_url": refused_url()}},
            environ={},
        )


class TestHindsightUnconfigured(ProviderConformance):
    @pytest.fixture
    def provider(self, hermes_home: Path) -> HindsightProvider:
        return HindsightProvider(hermes_home=hermes_home, config={}, environ={})
