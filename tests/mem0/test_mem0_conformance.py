"""The core provider conformance suite (`hermes_memory_testing`) against Mem0Provider.

Run in four set-ups: unconfigured, Platform mode on the real ``mem0.MemoryClient`` with a
``MockTransport`` fake, self-hosted mode against the fake served on 127.0.0.1, and OSS mode
on the real ``mem0.Memory`` with a local store and the offline model fakes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mem0_fake import FakeMem0

from hermes_memory_mem0 import Mem0Provider
from hermes_memory_testing import ProviderConformance

_FAST = {"prefetch_wait": 1.0, "timeout": 3.0, "connect_timeout": 1.0}


class TestUnconfigured(ProviderConformance):
    """No key, no host, no OSS block: unavailable, every hook a harmless no-op."""

    @pytest.fixture
    def provider(self, hermes_home: Path) -> Mem0Provider:
        return Mem0Provider(hermes_home=hermes_home, config={})


class TestPlatformMockTransport(ProviderConformance):
    """Real MemoryClient + MockTransport stateful fake (platform dialect)."""

    @pytest.fixture
    def provider(self, hermes_home: Path) -> Mem0Provider:
        fake = FakeMem0("platform")
        conf = {"mode": "platform", "api_key": fake.api_key, **_FAST}
        return Mem0Provider(
            hermes_home=hermes_home, config={"mem0": conf}, transport=fake.transport()
        )


class TestSelfHostedLoopback(ProviderConformance):
    """Our REST client + the self-hosted fake on a real 127.0.0.1 socket."""

    @pytest.fixture
    def provider(self, hermes_home: Path) -> Iterator[Mem0Provider]:
        fake = FakeMem0("selfhosted", api_key=None)
        with fake.serve() as url:
            conf = {"mode": "selfhosted", "host": url, **_FAST}
            yield Mem0Provider(hermes_home=hermes_home, config={"mem0": conf})


class TestOSSRealMemory(ProviderConformance):
    """Real mem0.Memory, local qdrant in the home, hashing embedder + scripted LLM."""

    @pytest.fixture
    def provider(self, hermes_home: Path) -> Iterator[Mem0Provider]:
        from mem0_oss_fakes import oss_section, register

        undo = register()
        conf = {"mode": "oss", "oss": oss_section(), **_FAST}
        provider = Mem0Provider(hermes_home=hermes_home, config={"mem0": conf})
        yield provider
        provider.shutdown()  # releases qdrant's lock before the next test
        undo()
