"""The core conformance suite on RetainDBProvider: reachable, unreachable, unconfigured."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from conftest import settings_for
from retaindb_fake import FakeRetainDB

from hermes_memory_core.testing import ProviderConformance
from hermes_memory_retaindb import RetainDBProvider


class TestRetainDBReachable(ProviderConformance):
    @pytest.fixture
    def provider(self, hermes_home: Path, fake: FakeRetainDB) -> RetainDBProvider:
        return RetainDBProvider(
            hermes_home=hermes_home, config={"retaindb": settings_for(fake.url)}, environ={}
        )


@pytest.fixture
def refused_url() -> str:
    """A loopback port nothing listens on (bound, then closed)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"


class TestRetainDBUnreachable(ProviderConformance):
    @pytest.fixture
    def provider(self, hermes_home: Path, refused_url: str) -> RetainDBProvider:
        return RetainDBProvider(
            hermes_home=hermes_home, config={"retaindb": settings_for(refused_url)}, environ={}
        )


class TestRetainDBUnconfigured(ProviderConformance):
    @pytest.fixture
    def provider(self, hermes_home: Path) -> RetainDBProvider:
        return RetainDBProvider(hermes_home=hermes_home, config={}, environ={})
