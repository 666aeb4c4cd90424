"""The core conformance suite on OpenVikingProvider: reachable, unreachable, unconfigured."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from conftest import settings_for
from openviking_fake import FakeOpenViking

from hermes_memory_core.testing import ProviderConformance
from hermes_memory_openviking import OpenVikingProvider


class TestOpenVikingReachable(ProviderConformance):
    @pytest.fixture
    def provider(self, hermes_home: Path, fake: FakeOpenViking) -> OpenVikingProvider:
        return OpenVikingProvider(
            hermes_home=hermes_home, config={"openviking": settings_for(fake.url)}, environ={}
        )


@pytest.fixture
def refused_url() -> str:
    """A loopback port nothing listens on (bound, then closed)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"


class TestOpenVikingUnreachable(ProviderConformance):
    @pytest.fixture
    def provider(self, hermes_home: Path, refused_url: str) -> OpenVikingProvider:
        return OpenVikingProvider(
            hermes_home=hermes_home, config={"openviking": settings_for(refused_url)}, environ={}
        )


class TestOpenVikingUnconfigured(ProviderConformance):
    @pytest.fixture
    def provider(self, hermes_home: Path) -> OpenVikingProvider:
        return OpenVikingProvider(hermes_home=hermes_home, config={}, environ={})
