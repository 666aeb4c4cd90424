"""The core provider conformance suite (`hermes_memory_testing`) run on HonchoProvider.

Three set-ups: a reachable Honcho (the real honcho-ai SDK over ``httpx.MockTransport``
backed by `FakeHoncho`, built from the recorded real-server exchanges), an unreachable one
(real sockets, every non-loopback connection refused by the suite's ``no_network``), and no
configuration at all.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from honcho_fake import FakeHoncho

from hermes_memory_honcho import HonchoProvider
from hermes_memory_testing import ProviderConformance

SETTINGS = {"peer_name": "alice", "max_retries": 0, "timeout": 1.0, "prefetch_wait": 0.5}


class TestHonchoReachable(ProviderConformance):
    """Real SDK + MockTransport fake: a healthy server."""

    @pytest.fixture
    def provider(self, hermes_home: Path) -> HonchoProvider:
        return HonchoProvider(
            hermes_home=hermes_home,
            config={"honcho": {**SETTINGS, "base_url": "http://honcho.test"}},
            transport=FakeHoncho().transport(),
            environ={},
        )


class TestHonchoUnreachable(ProviderConformance):
    """Real SDK over real sockets to a host the suite's no_network fixture refuses."""

    @pytest.fixture
    def provider(self, hermes_home: Path) -> HonchoProvider:
        return HonchoProvider(
            hermes_home=hermes_home,
            config={"honcho": {**SETTINGS, "base_url": "http://honcho.example.com:8000"}},
            transport=httpx.HTTPTransport(retries=0),
            environ={},
        )


class TestHonchoUnconfigured(ProviderConformance):
    """No key and no base URL: unavailable, inert, and still well-behaved."""

    @pytest.fixture
    def provider(self, hermes_home: Path) -> HonchoProvider:
        return HonchoProvider(hermes_home=hermes_home, config={}, environ={})
