"""Mem0Provider as the external provider of the core `MemoryManager`, beside the builtin tier.

The mem0 side is the stateful fake (`mem0_fake.FakeMem0`) — in-process through
``httpx.MockTransport`` with the real ``mem0.MemoryClient``, or served on 127.0.0.1 when the
manager is built from ``config.yaml`` through the installed entry point (no injection there).
"""

from __future__ import annotations

import json
import time
from importlib.metadata import entry_points
from pathlib import Path

from mem0_fake import FakeMem0, wait_until

from hermes_memory_builtin import BuiltinMemoryProvider
from hermes_memory_core import MemoryManager
from hermes_memory_core.health import read_provider_status
from hermes_memory_core.plugins import get_registry
from hermes_memory_mem0 import Mem0Provider


def _manager(home: Path, mem0: Mem0Provider, **options: float) -> MemoryManager:
    manager = MemoryManager(hermes_home=home, **options)
    assert manager.add_provider(BuiltinMemoryProvider(hermes_home=home, config={}))
    assert manager.add_provider(mem0)
    manager.initialize_all("s1", platform="cli", agent_context="primary", user_id="u1")
    return manager


def _platform(home: Path, fake: FakeMem0, **conf: object) -> Mem0Provider:
    section = {"mode": "platform", "api_key": fake.api_key, "prefetch_wait": 3.0, **conf}
    return Mem0Provider(hermes_home=home, config={"mem0": section}, transport=fake.transport())


def test_entry_point_and_registry_create_the_provider(home: Path):
    """The installed distribution registers 'mem0'; the registry builds it with home + config."""
    (ep,) = [e for e in entry_points(group="hermes_memory") if e.name == "mem0"]
    assert ep.value == "hermes_memory_mem0._plugin"
    registry = get_registry(refresh=True)
    provider = registry.create("mem0", hermes_home=home, config={"mem0": {"api_key": "k"}})
    assert isinstance(provider, Mem0Provider)
    assert provider.is_available()


def test_recall_builtin_and_mirroring_through_the_manager(home: Path):
    """Real MemoryClient + MockTransport fake: fenced recall, tools routed, builtin writes mirrored."""
    fake = FakeMem0("platform")
    fake.seed("User likes oolong tea")
    manager = _manager(home, _platform(home, fake))
    try:
        # the session start connects in the background (import + ping); a user types meanwhile
        assert wait_until(
            lambda: (read_provider_status(home, "mem0") or {}).get("state") == "ok", 30
        )
        assert "mem0_search" in manager.get_all_tool_names()
        recall = manager.prefetch_all("which tea do I like?")
        assert "<memory-context>" in recall
        assert "- User likes oolong tea" in recall

        result = json.loads(
            manager.handle_tool_call(
                "memory", {"action": "add", "target": "user", "content": "Prefers dark mode"}
            )
        )
        assert result["success"] is True
        manager.sync_all("Please use dark mode", "Done.")
        assert manager.flush_pending(timeout=10)
        manager.on_session_end([])
        adds = fake.calls("POST", "/v3/memories/add/")
        mirrored = [a for a in adds if a.body["metadata"].get("source") == "hermes-builtin"]
        assert [a.body["messages"][0]["content"] for a in mirrored] == ["Prefers dark mode"]
        assert mirrored[0].body["infer"] is False
        # the fact is in the builtin tier now: recall does not inject it a second time
        assert "Prefers dark mode" in [m["memory"] for m in fake.memories.values()]
        recall = manager.prefetch_all("prefers dark mode")
        assert "Please use dark mode" in recall  # mem0 answered this search...
        assert "Prefers dark mode" not in recall  # ...minus the fact the builtin tier shows

        found = json.loads(manager.handle_tool_call("mem0_search", {"query": "oolong"}))
        assert found["count"] == 1
    finally:
        manager.shutdown_all()


def test_hanging_mem0_does_not_stall_the_manager_or_the_builtin_tier(home: Path):
    """Platform fake that hangs every search: turns stay bounded, builtin memory keeps working."""
    fake = FakeMem0("platform")
    mem0 = _platform(home, fake, prefetch_wait=0.5, timeout=30.0)
    manager = _manager(home, mem0, prefetch_timeout=2.0, shutdown_timeout=2.0)
    try:
        manager.handle_tool_call("mem0_search", {"query": "warm up"})  # connected
        fake.hang(60.0, path="/search/")
        for turn in range(3):
            started = time.monotonic()
            manager.on_turn_start(turn + 1, f"tell me about project {turn}")
            manager.prefetch_all(f"tell me about project {turn}")
            result = json.loads(
                manager.handle_tool_call(
                    "memory",
                    {"action": "add", "target": "memory", "content": f"Project {turn} uses Rust"},
                )
            )
            manager.sync_all(f"tell me about project {turn}", "ok")
            assert time.monotonic() - started < 2.0 + 1.5  # prefetch_timeout + slack
            assert result["success"] is True
        store_text = (home / "memories" / "MEMORY.md").read_text(encoding="utf-8")
        assert all(f"Project {t} uses Rust" in store_text for t in range(3))
    finally:
        started = time.monotonic()
        manager.shutdown_all()
        fake.clear_faults()
        assert time.monotonic() - started < 15.0


def test_manager_from_config_with_a_loopback_server(home: Path):
    """config.yaml → entry point → Mem0Provider (self-hosted) against the fake on 127.0.0.1."""
    fake = FakeMem0("selfhosted", api_key=None)
    fake.seed("User's favourite editor is Helix")
    with fake.serve() as url:
        (home / "config.yaml").write_text(
            f"memory:\n  provider: mem0\nmem0:\n  host: {url}\n  prefetch_wait: 3\n",
            encoding="utf-8",
        )
        get_registry(refresh=True)
        manager = MemoryManager.from_config(home)
        try:
            assert isinstance(manager.external_provider, Mem0Provider)
            manager.initialize_all("s1", platform="cli", user_id="u1")
            recall = manager.prefetch_all("which editor do I use?")
            assert "Helix" in recall
            assert wait_until(
                lambda: (read_provider_status(home, "mem0") or {}).get("state") == "ok"
            )
        finally:
            manager.shutdown_all()
