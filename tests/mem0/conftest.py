"""Fixtures for the mem0 adapter tests (no network: fakes on MockTransport or 127.0.0.1)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# mem0 reads these once, at import: keep its state out of $HOME for the whole test run.
# (The subprocess tests in test_mem0_telemetry.py check that the provider itself switches
# telemetry off when nothing set it.)
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-test-dir-"))
os.environ.setdefault("MEM0_TELEMETRY", "False")

from mem0_fake import FakeMem0

from hermes_memory_mem0 import Mem0Provider

_ENV_KEYS = (
    "MEM0_API_KEY", "MEM0_HOST", "MEM0_MODE", "MEM0_USER_ID", "MEM0_AGENT_ID", "MEM0_ORG_ID",
    "MEM0_PROJECT_ID", "MEM0_RERANK", "MEM0_TIMEOUT",
)  # fmt: skip


@pytest.fixture(autouse=True)
def _clean_mem0_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in _ENV_KEYS:
        monkeypatch.delenv(key, raising=False)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


ProviderFactory = Callable[..., Mem0Provider]


@pytest.fixture
def make_provider(home: Path) -> Iterator[ProviderFactory]:
    """Build (and finally shut down) providers wired to a fake's transport."""
    made: list[Mem0Provider] = []

    def factory(
        fake: FakeMem0 | None = None,
        *,
        transport: Any = None,
        initialize: bool = True,
        init_kwargs: dict[str, Any] | None = None,
        **section: Any,
    ) -> Mem0Provider:
        conf: dict[str, Any] = {"prefetch_wait": 5.0, "timeout": 5.0, "connect_timeout": 2.0}
        if fake is not None:
            conf["mode"] = fake.dialect
            if fake.dialect == "platform":
                conf["api_key"] = fake.api_key
            else:
                conf["host"] = "http://mem0.test"
                if fake.api_key:
                    conf["api_key"] = fake.api_key
            transport = transport or fake.transport()
        conf.update(section)
        provider = Mem0Provider(hermes_home=home, config={"mem0": conf}, transport=transport)
        made.append(provider)
        if initialize:
            kwargs = {"hermes_home": str(home), "platform": "cli", "user_id": "u1"}
            kwargs.update(init_kwargs or {})
            provider.initialize("s1", **kwargs)
        return provider

    yield factory
    for provider in made:
        provider.shutdown()
