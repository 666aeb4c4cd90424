"""pytest fixtures and a provider conformance suite for provider authors.

Installed as a pytest plugin (entry point ``pytest11``), so the fixtures are available in any
test suite once hermes-memory-testing is installed. Their names are namespaced, so they never
shadow a fixture of yours:

* ``hermes_memory_home``: an empty home directory, also exported as ``$HERMES_HOME``;
* ``hermes_memory_manager``: a `MemoryManager` on that home, shut down after the test;
* ``hermes_memory_no_network``: any attempt to open a non-loopback socket fails at once.

The short names ``hermes_home``, ``memory_manager`` and ``no_network`` are opt-in: set
``hermes_memory_short_fixtures = true`` in your pytest configuration.

Run the conformance suite against your provider by subclassing `ProviderConformance` and
overriding the ``provider`` fixture::

    import pytest
    from hermes_memory_testing import ProviderConformance
    from my_plugin import MyProvider

    class TestMyProvider(ProviderConformance):
        @pytest.fixture
        def provider(self, hermes_memory_home):
            return MyProvider(hermes_home=hermes_memory_home, config={})

The suite checks the contract every provider must keep: a usable name, ``is_available`` and
``initialize`` without network, valid and JSON-serialisable tool schemas, JSON tool results
even for bad arguments, a stable system prompt block, and a full session through the manager
(sync, flush, session end, shutdown) that never raises.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory_core import MemoryManager, MemoryProvider
from hermes_memory_core.plugins import PROVIDER_HOOK_NAMES, overridden_hooks

__all__ = [
    "ProviderConformance",
    "hermes_memory_home",
    "hermes_memory_manager",
    "hermes_memory_no_network",
]

#: Generous wall-clock bound for hooks that must not wait on the network.
NON_BLOCKING_BOUND_S = 2.0
_SCHEMA_FORBIDDEN_TOP_LEVEL = ("allOf", "anyOf", "oneOf", "enum", "not")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "hermes_memory_short_fixtures",
        "also offer hermes_home, memory_manager and no_network (hermes-memory-testing)",
        type="bool",
        default=False,
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getini("hermes_memory_short_fixtures"):
        config.pluginmanager.register(_ShortNames(), "hermes_memory_short_fixtures")


class _ShortNames:
    """The opt-in short fixture names, each the namespaced fixture under another name."""

    @pytest.fixture
    def hermes_home(self, hermes_memory_home: Path) -> Path:
        """Same as ``hermes_memory_home``."""
        return hermes_memory_home

    @pytest.fixture
    def memory_manager(self, hermes_memory_manager: MemoryManager) -> MemoryManager:
        """Same as ``hermes_memory_manager``."""
        return hermes_memory_manager

    @pytest.fixture
    def no_network(self, hermes_memory_no_network: None) -> None:
        """Same as ``hermes_memory_no_network``."""


@pytest.fixture
def hermes_memory_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty hermes home directory, exported as ``$HERMES_HOME`` for the test."""
    home = tmp_path / "hermes-home"
    home.mkdir(mode=0o700)  # private, like every home the project creates
    monkeypatch.setenv("HERMES_HOME", str(home))
    return home


@pytest.fixture
def hermes_memory_manager(hermes_memory_home: Path) -> Iterator[MemoryManager]:
    """A `MemoryManager` with no providers on ``hermes_memory_home``; shut down after the test."""
    manager = MemoryManager(
        hermes_home=hermes_memory_home, prefetch_timeout=2.0, shutdown_timeout=5.0
    )
    yield manager
    manager.shutdown_all()


@pytest.fixture
def hermes_memory_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every connection to a non-loopback address fail at once with OSError."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded(address: Any) -> None:
        if not _is_loopback(address):
            raise OSError(f"network disabled by the no_network fixture: {address!r}")

    def connect(self: socket.socket, address: Any) -> None:
        guarded(address)
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        guarded(address)
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in (None, "localhost") and not _is_loopback((host, 0)):
            raise socket.gaierror(f"name resolution disabled by the no_network fixture: {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    real_getaddrinfo = socket.getaddrinfo
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def _is_loopback(address: Any) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return True
    host = address[0] if isinstance(address, tuple) and address else address
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(str(host)).is_loopback
    except ValueError:
        return False


class ProviderConformance:
    """The contract tests every `MemoryProvider` should pass. Override ``provider``."""

    @pytest.fixture
    def provider(self, hermes_memory_home: Path) -> MemoryProvider:
        """The provider under test; subclasses must override this fixture."""
        raise NotImplementedError(
            "override the `provider` fixture in your ProviderConformance subclass"
        )

    # ----------------------------------------------------------------- identity
    def test_is_a_memory_provider(self, provider: MemoryProvider) -> None:
        assert isinstance(provider, MemoryProvider)

    def test_name_is_a_plain_identifier(self, provider: MemoryProvider) -> None:
        name = provider.name
        assert isinstance(name, str) and name, "name must be a non-empty string"
        assert name == name.strip() and " " not in name, f"name {name!r} must not contain spaces"

    def test_is_available_answers_without_network(
        self, provider: MemoryProvider, hermes_memory_no_network: None
    ) -> None:
        started = time.monotonic()
        available = provider.is_available()
        assert isinstance(available, bool)
        assert time.monotonic() - started < NON_BLOCKING_BOUND_S
        if not available:
            assert isinstance(provider.unavailable_reason(), str)

    def test_initialize_does_not_block_on_network(
        self, provider: MemoryProvider, hermes_memory_home: Path, hermes_memory_no_network: None
    ) -> None:
        started = time.monotonic()
        provider.initialize(
            "conformance-session", hermes_home=str(hermes_memory_home), platform="cli"
        )
        assert time.monotonic() - started < NON_BLOCKING_BOUND_S
        provider.shutdown()

    # ----------------------------------------------------------------- tools
    def test_tool_schemas_are_valid(self, provider: MemoryProvider) -> None:
        schemas = provider.get_tool_schemas()
        assert isinstance(schemas, list)
        names = [schema.get("name") for schema in schemas]
        assert len(names) == len(set(names)), f"duplicate tool names: {names}"
        for schema in schemas:
            json.dumps(schema)
            assert isinstance(schema.get("name"), str) and schema["name"]
            assert isinstance(schema.get("description"), str) and schema["description"].strip()
            params = schema.get("parameters")
            assert isinstance(params, dict) and params.get("type") == "object"
            bad = [k for k in _SCHEMA_FORBIDDEN_TOP_LEVEL if k in params]
            assert not bad, f"{schema['name']}: strict backends reject top-level {bad}"

    def test_tools_answer_bad_arguments_with_json(
        self, provider: MemoryProvider, hermes_memory_home: Path, hermes_memory_no_network: None
    ) -> None:
        provider.initialize(
            "conformance-session", hermes_home=str(hermes_memory_home), platform="cli"
        )
        try:
            for schema in provider.get_tool_schemas():
                for args in ({}, {"unexpected": "値"}):
                    result = provider.handle_tool_call(schema["name"], args)
                    assert isinstance(result, str)
                    json.loads(result)
        finally:
            provider.shutdown()

    # ----------------------------------------------------------------- prompt and hooks
    def test_system_prompt_block_is_stable(
        self, provider: MemoryProvider, hermes_memory_home: Path
    ) -> None:
        provider.initialize(
            "conformance-session", hermes_home=str(hermes_memory_home), platform="cli"
        )
        try:
            first = provider.system_prompt_block()
            assert isinstance(first, str)
            assert provider.system_prompt_block() == first
        finally:
            provider.shutdown()

    def test_config_schema_fields(self, provider: MemoryProvider) -> None:
        fields = provider.get_config_schema()
        assert isinstance(fields, list)
        for field in fields:
            assert isinstance(field, dict)
            assert isinstance(field.get("key"), str) and field["key"]
            assert isinstance(field.get("description"), str)

    def test_backup_paths_are_absolute(self, provider: MemoryProvider) -> None:
        for path in provider.backup_paths():
            assert Path(path).is_absolute(), path

    def test_hook_signatures_accepted_by_manager(
        self, provider: MemoryProvider, hermes_memory_home: Path
    ) -> None:
        manager = MemoryManager(hermes_home=hermes_memory_home)
        assert manager.add_provider(provider), "the manager refused the provider (see the log)"
        assert set(overridden_hooks(provider)) <= set(PROVIDER_HOOK_NAMES)
        manager.shutdown_all()

    # ----------------------------------------------------------------- a whole session
    def test_full_session_through_manager(
        self, provider: MemoryProvider, hermes_memory_home: Path, hermes_memory_no_network: None
    ) -> None:
        manager = MemoryManager(
            hermes_home=hermes_memory_home, prefetch_timeout=2.0, shutdown_timeout=5.0
        )
        assert manager.add_provider(provider)
        started = time.monotonic()
        manager.initialize_all("conformance-session", platform="cli", agent_context="primary")
        assert isinstance(manager.build_system_prompt(), str)
        manager.on_turn_start(1, "我们用 docker 部署吧")
        recall = manager.prefetch_all("what did we decide about the docker deployment?")
        assert isinstance(recall, str)
        manager.sync_all("我们用 docker 部署吧", "好的，我们用 docker compose。")
        manager.queue_prefetch_all("docker")
        # a bound against hanging, with room for a loaded CI machine (the suite runs in parallel)
        assert manager.flush_pending(timeout=30.0), "queued syncs did not drain within 30 s"
        assert isinstance(manager.on_pre_compress([{"role": "user", "content": "hi"}]), str)
        manager.on_session_switch("conformance-session-2", parent_session_id="conformance-session")
        manager.on_session_end([{"role": "user", "content": "bye"}])
        manager.shutdown_all()
        assert time.monotonic() - started < 30.0
