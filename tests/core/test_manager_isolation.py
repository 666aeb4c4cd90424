"""A hung external provider never holds the agent: every hook is bounded, the archive keeps
every turn, a stuck provider is skipped, its queue is bounded, and tier identity is not a name.

The local tiers are the real ones (builtin and sessions from their installed entry points,
through `MemoryManager.from_config` on a temporary home); the external provider is a real
plugin module registered in the same registry, hanging on a `threading.Event` that is only
set after the assertions. The wall-clock checks are "did not hang" bounds (bound + 2 s).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory_core import MemoryManager, MemoryProvider, hookimpl
from hermes_memory_core.plugins import PluginRegistry

BOUND = 0.3  # every timeout of the manager under test
DID_NOT_HANG = BOUND + 2.0  # generous: a call that waited for the hung hook would take 60 s+
HOOKS = [
    "initialize",
    "system_prompt_block",
    "on_turn_start",
    "prefetch",
    "queue_prefetch",
    "sync_turn",
    "handle_tool_call",
    "on_memory_write",
    "on_pre_compress",
    "on_delegation",
    "on_session_switch",
    "on_session_end",
    "shutdown",
]


#: Hooks whose result only matters now: skipped (never queued) while the provider is stuck.
READS = {"system_prompt_block", "prefetch", "queue_prefetch", "on_pre_compress", "handle_tool_call"}


class HungProvider(MemoryProvider):
    """An external provider whose hook ``hang`` blocks until ``release`` is set."""

    name = "hung"

    def __init__(self, hang: str, release: threading.Event) -> None:
        self.hang = hang
        self.release = release
        self.calls: list[str] = []
        self.synced: list[str] = []
        self.entered = threading.Event()

    def _hook(self, hook: str) -> None:
        self.calls.append(hook)
        if hook == self.hang:
            self.entered.set()
            self.release.wait()

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self._hook("initialize")

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [{"name": "hung_tool", "description": "d", "parameters": {"type": "object"}}]

    def system_prompt_block(self) -> str:
        self._hook("system_prompt_block")
        return "[hung block]"

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        self._hook("on_turn_start")

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        self._hook("prefetch")
        return "hung recall"

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        self._hook("queue_prefetch")

    def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None):
        self._hook("sync_turn")
        self.synced.append(user_content)

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        self._hook("handle_tool_call")
        return json.dumps({"ok": True})

    def on_memory_write(self, action, target, content, metadata=None):
        self._hook("on_memory_write")

    def on_pre_compress(self, messages):
        self._hook("on_pre_compress")
        return "keep this"

    def on_delegation(self, task, result, *, child_session_id="", **kwargs):
        self._hook("on_delegation")

    def on_session_switch(self, new_session_id, **kwargs):
        self._hook("on_session_switch")

    def on_session_end(self, messages):
        self._hook("on_session_end")

    def shutdown(self) -> None:
        self._hook("shutdown")


def registry_with(factory: Callable[..., MemoryProvider], name: str = "hung") -> PluginRegistry:
    """The installed plugins (real builtin and sessions) plus one test plugin module."""
    registry = PluginRegistry.from_entry_points(environ={})
    module = types.ModuleType(f"hm_test_{name}")

    @hookimpl
    def register_memory_providers(register: Callable[..., None]) -> None:
        register(factory, name=name)

    module.register_memory_providers = register_memory_providers  # type: ignore[attr-defined]
    registry.register_plugin(module, name=name, distribution=f"hm-test-{name}", version="1.0")
    return registry


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()  # only now: lets the daemon threads of the hung provider end


def build(home: Path, registry: PluginRegistry, **options: Any) -> MemoryManager:
    (home / "config.yaml").write_text("memory:\n  provider: hung\n", encoding="utf-8")
    for key in ("prefetch_timeout", "hook_timeout", "tool_timeout", "shutdown_timeout"):
        options.setdefault(key, BOUND)
    return MemoryManager.from_config(home, registry=registry, **options)


def archived(manager: MemoryManager, session_id: str) -> list[str]:
    """Message contents in the archive, read through a separate read-only connection."""
    assert manager.config is not None
    db = manager.config.sessions.db_path
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT content FROM messages WHERE session_id = ? ORDER BY id", (session_id,)
        ).fetchall()
    finally:
        conn.close()
    return [r[0] for r in rows]


def timed(step: Callable[[], Any]) -> Any:
    started = time.monotonic()
    result = step()
    elapsed = time.monotonic() - started
    assert elapsed < DID_NOT_HANG, f"blocked for {elapsed:.1f}s (bound {BOUND}s)"
    return result


@pytest.mark.parametrize("hook", HOOKS)
def test_a_hung_hook_never_holds_the_agent_and_the_archive_keeps_every_turn(
    hermes_home, release, hook
):
    provider = HungProvider(hook, release)
    manager = build(hermes_home, registry_with(lambda: provider))
    assert [p.name for p in manager.providers] == ["builtin", "sessions", "hung"]
    assert manager.is_local("builtin") and manager.is_local("sessions")
    assert not manager.is_local("hung")

    first, second = "20261201_100000_aaaaaa", "20261201_110000_bbbbbb"
    timed(lambda: manager.initialize_all(first, platform="cli"))
    timed(manager.build_system_prompt)
    for i in range(10):
        timed(lambda i=i: manager.on_turn_start(i + 1, f"question {i}"))
        timed(lambda i=i: manager.prefetch_all(f"what did we decide about docker, {i}?"))
        timed(lambda i=i: manager.sync_all(f"question {i}：部署", f"answer {i}"))
        # durable when sync_all returns: another connection sees the committed turn
        assert len(archived(manager, first)) == 2 * (i + 1)
    saved = timed(
        lambda: manager.handle_tool_call(
            "memory", {"action": "add", "target": "user", "content": "喜欢简洁的回答"}
        )
    )
    assert json.loads(saved)["success"] is True
    assert isinstance(json.loads(timed(lambda: manager.handle_tool_call("hung_tool", {}))), dict)
    timed(lambda: manager.queue_prefetch_all("docker"))
    timed(lambda: manager.on_pre_compress([{"role": "user", "content": "hi"}]))
    timed(lambda: manager.on_delegation("task", "result", child_session_id="child"))
    timed(lambda: manager.on_session_switch(second, parent_session_id=first))
    timed(lambda: manager.sync_all("after the switch", "still recorded"))
    assert archived(manager, second) == ["after the switch", "still recorded"]
    timed(lambda: manager.on_session_end([]))
    timed(lambda: manager.shutdown_all())

    assert provider.entered.is_set(), f"{hook} was never called"
    assert provider.calls.count(hook) == 1, "a stuck provider must not be called again"
    assert manager.is_degraded("hung")
    stuck_at = provider.calls.index(hook)
    release.set()  # whatever was queued behind the stuck call now runs, then the thread ends
    for thread in threading.enumerate():
        if thread.name == "hermes-memory-hung":
            thread.join(10)
    late = provider.calls[stuck_at + 1 :]
    assert not [c for c in late if c in READS], f"reads queued while degraded: {late}"
    contents = archived(manager, first)
    assert contents[::2] == [f"question {i}：部署" for i in range(10)]
    assert contents[1::2] == [f"answer {i}" for i in range(10)]


def test_the_local_tiers_do_not_wait_for_an_external_sync(hermes_home, release, monkeypatch):
    from hermes_memory_sessions.provider import SessionArchiveProvider

    threads: list[threading.Thread] = []
    real_sync = SessionArchiveProvider.sync_turn

    def recording_sync(self, *args, **kwargs):
        threads.append(threading.current_thread())
        return real_sync(self, *args, **kwargs)

    monkeypatch.setattr(SessionArchiveProvider, "sync_turn", recording_sync)
    provider = HungProvider("sync_turn", release)
    manager = build(hermes_home, registry_with(lambda: provider))
    manager.initialize_all("20261201_120000_cccccc")
    manager.sync_all("one", "two")
    assert provider.entered.wait(10)
    # The external provider is stuck inside sync_turn right now: the archive still takes turns.
    for i in range(5):
        manager.sync_all(f"turn {i}", f"reply {i}")
    assert archived(manager, "20261201_120000_cccccc")[-2:] == ["turn 4", "reply 4"]
    assert threads == [threading.current_thread()] * 6, "the archive writes on the caller's thread"
    assert manager.flush_pending(0.2) is False
    manager.shutdown_all()


def test_a_full_queue_drops_the_oldest_call_with_a_warning(hermes_home, release, caplog):
    provider = HungProvider("never", release)
    gate = threading.Event()
    running = threading.Event()
    original = provider.sync_turn

    def slow_sync(user_content, assistant_content, **kwargs):
        running.set()
        gate.wait()
        original(user_content, assistant_content, **kwargs)

    provider.sync_turn = slow_sync  # type: ignore[method-assign]
    manager = build(hermes_home, registry_with(lambda: provider), max_queued=3)
    manager.initialize_all("20261201_130000_dddddd")
    with caplog.at_level(logging.WARNING):
        manager.sync_all("turn 0", "ok")
        # the worker holds turn 0 before the queue fills (on a loaded machine it may not
        # have dequeued it yet, and turn 0 would be the oldest queued call, dropped first)
        assert running.wait(10)
        for i in range(1, 10):
            manager.sync_all(f"turn {i}", "ok")  # never blocks, even with the queue full
    assert "dropped the oldest queued task hung.sync_turn" in caplog.text
    gate.set()
    assert manager.flush_pending(10)
    # turn 0 was running when the queue filled; turns 1-6 were dropped, oldest first
    assert provider.synced == ["turn 0", "turn 7", "turn 8", "turn 9"]
    assert len(archived(manager, "20261201_130000_dddddd")) == 20, "local tiers lose nothing"
    manager.shutdown_all()


def test_each_external_call_runs_on_the_providers_own_thread(hermes_home, release):
    seen: list[str] = []

    class Where(HungProvider):
        def sync_turn(self, user_content, assistant_content, **kwargs):
            seen.append(threading.current_thread().name)

    provider = Where("never", release)
    manager = build(hermes_home, registry_with(lambda: provider))
    manager.initialize_all("20261201_140000_eeeeee")
    manager.sync_all("hello", "world")
    assert manager.flush_pending(10)
    assert seen == ["hermes-memory-hung"]
    manager.shutdown_all()


def test_a_provider_recovers_once_its_stuck_call_returns(release):
    provider = HungProvider("prefetch", release)
    manager = MemoryManager(prefetch_timeout=BOUND)
    assert manager.add_provider(provider)
    assert "hung recall" not in manager.prefetch_all("what about the docker plan?")
    assert manager.is_degraded("hung")
    assert "hung recall" not in manager.prefetch_all("and the database plan?")
    assert provider.calls.count("prefetch") == 1
    release.set()
    assert provider.entered.is_set()
    deadline = time.monotonic() + 10
    while manager.is_degraded("hung") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not manager.is_degraded("hung")
    assert manager.flush_pending(10)
    assert provider.calls.count("prefetch") == 1, "the skipped prefetch was not queued"
    assert "hung recall" in manager.prefetch_all("and now the docker plan?")
    assert provider.calls.count("prefetch") == 2
    manager.shutdown_all()


def test_a_third_party_class_named_sessions_is_not_a_local_tier(release):
    class Impostor(HungProvider):
        name = "sessions"

    impostor = Impostor("sync_turn", release)
    manager = MemoryManager(hook_timeout=BOUND, shutdown_timeout=BOUND)
    assert manager.add_provider(impostor)
    assert not manager.is_local("sessions"), "tier identity must not come from the name"
    timed(lambda: manager.sync_all("a turn", "a reply"))  # queued on its worker, not inline
    assert impostor.entered.wait(10)
    timed(lambda: manager.sync_all("another turn", "another reply"))
    timed(manager.shutdown_all)


def test_the_real_tiers_added_by_hand_are_local(hermes_home):
    from hermes_memory_sessions.provider import SessionArchiveProvider

    manager = MemoryManager(hermes_home=hermes_home)
    assert manager.add_provider(SessionArchiveProvider(hermes_home=hermes_home))
    assert manager.is_local("sessions")
    manager.shutdown_all()


def test_a_provider_calling_itself_by_another_name_is_refused(hermes_home, release, caplog):
    class Renamed(HungProvider):
        name = "sessions"

    registry = registry_with(lambda: Renamed("never", release), name="innocent")
    (hermes_home / "config.yaml").write_text("memory:\n  provider: innocent\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        manager = MemoryManager.from_config(hermes_home, registry=registry)
    assert manager.is_local("sessions"), "the real archive keeps the name"
    assert [p.name for p in manager.providers] == ["builtin", "sessions"]
    assert "calls itself 'sessions'" in caplog.text
    manager.shutdown_all()


def test_a_provider_hanging_while_created_is_skipped(hermes_home, release, caplog):
    def factory() -> MemoryProvider:
        release.wait()
        return HungProvider("never", release)

    with caplog.at_level(logging.WARNING):
        manager = timed(lambda: build(hermes_home, registry_with(factory)))
    assert [p.name for p in manager.providers] == ["builtin", "sessions"]
    assert "was not created within" in caplog.text
    manager.shutdown_all()


def test_a_provider_hanging_in_get_tool_schemas_is_refused(release, caplog):
    class NoSchemas(HungProvider):
        def get_tool_schemas(self):
            release.wait()
            return []

    manager = MemoryManager(hook_timeout=BOUND)
    with caplog.at_level(logging.WARNING):
        accepted = timed(lambda: manager.add_provider(NoSchemas("never", release)))
    assert not accepted
    assert manager.external_provider is None
    assert "did not answer" in caplog.text
    manager.shutdown_all()


def test_a_hung_tool_call_returns_an_error_naming_the_bound(release):
    provider = HungProvider("handle_tool_call", release)
    manager = MemoryManager(tool_timeout=BOUND)
    manager.add_provider(provider)
    first = json.loads(timed(lambda: manager.handle_tool_call("hung_tool", {})))
    assert "did not answer within 0.3s" in first["error"]
    second = json.loads(timed(lambda: manager.handle_tool_call("hung_tool", {})))
    assert "not responding" in second["error"]
    assert provider.calls.count("handle_tool_call") == 1
    manager.shutdown_all()
