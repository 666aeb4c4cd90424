"""HonchoProvider inside the core `MemoryManager`, built from ``config.yaml`` through the
installed entry points, while Honcho hangs.

Real components throughout: the real honcho-ai SDK over a real socket to `FakeHoncho` served
on 127.0.0.1 by `LoopbackServer` (a fake built from the recorded real-server exchanges) that
accepts requests and never answers; the real builtin tier writing real files.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from honcho_fake import FakeHoncho, LoopbackServer

from hermes_memory_core._manager import MemoryManager
from hermes_memory_core.health import read_provider_status

pytest.importorskip("hermes_memory_builtin")


def test_builtin_tier_keeps_working_while_honcho_hangs(home: Path):
    """Real SDK + loopback fake that never answers: every agent-facing call stays bounded,
    the builtin memory tool still writes USER.md, and the outage is on record."""
    fake = FakeHoncho()
    fake.hang()
    with LoopbackServer(fake) as server:
        (home / "config.yaml").write_text(
            "memory:\n"
            "  provider: honcho\n"
            "  prefetch_timeout: 1.0\n"
            "honcho:\n"
            f"  base_url: {server.url}/v3\n"
            "  peer_name: alice\n"
            "  timeout: 0.5\n"
            "  max_retries: 0\n"
            "  tool_timeout: 1.0\n"
            "  flush_timeout: 1.0\n"
            "  shutdown_timeout: 1.0\n",
            encoding="utf-8",
        )
        manager = MemoryManager.from_config(home, shutdown_timeout=2.0)
        external = manager.external_provider
        assert external is not None and external.name == "honcho"
        started = time.monotonic()
        manager.initialize_all("s1", platform="cli", agent_context="primary")
        manager.on_turn_start(1, "I moved to Porto")
        assert isinstance(manager.prefetch_all("I moved to Porto"), str)
        manager.sync_all("I moved to Porto", "Noted.")
        added = json.loads(
            manager.handle_tool_call(
                "memory", {"action": "add", "target": "user", "content": "Lives in Porto"}
            )
        )
        assert added.get("success") is True, added
        honcho = json.loads(manager.handle_tool_call("honcho_search", {"query": "Porto"}))
        assert "error" in honcho
        manager.on_session_end([])
        manager.shutdown_all()
        elapsed = time.monotonic() - started
        assert elapsed < 15.0, elapsed
        # read while the server still hangs: once it is released, calls the manager
        # abandoned may still complete and rightly report Honcho reachable again
        status = read_provider_status(home, "honcho")
    assert "Lives in Porto" in (home / "memories" / "USER.md").read_text(encoding="utf-8")
    assert status is not None and status["state"] in ("degraded", "circuit_open")
