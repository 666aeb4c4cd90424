"""`MemoryBridge` in process: one worker thread, a free event loop, turns, lifecycle order."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_memory_core import MemoryProvider, tool_result
from hermes_memory_core._manager import MemoryManager
from hermes_memory_mcp_server import MemoryBridge
from hermes_memory_mcp_server._bridge import classify_result
from hermes_memory_mcp_server._ids import SESSION_ID_PATTERN

pytestmark = pytest.mark.timeout(60)


class RecordingProvider(MemoryProvider):
    """An external provider whose tool blocks for a while and which records its calls."""

    name = "recorder"

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []
        self.init_kwargs: dict[str, Any] = {}

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.init_kwargs = {"session_id": session_id, **kwargs}
        self.calls.append(("initialize", threading.get_ident()))

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [
            {
                "name": "slow_echo",
                "description": "Echo after a pause.",
                "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
            }
        ]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        self.calls.append(("tool", threading.get_ident()))
        time.sleep(0.5)
        return tool_result({"success": True, "echo": args.get("text")})

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        self.calls.append((f"turn {turn_number}", threading.get_ident()))

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self.calls.append(("session_end", threading.get_ident()))

    def shutdown(self) -> None:
        self.calls.append(("shutdown", threading.get_ident()))


def _factory(provider: RecordingProvider):
    def build(home: str | Path | None) -> MemoryManager:
        manager = MemoryManager.from_config(home)
        assert manager.add_provider(provider)
        return manager

    return build


def test_manager_calls_run_on_one_worker_thread_without_blocking_the_loop(tmp_path):
    provider = RecordingProvider()
    ticks = 0

    async def main() -> Any:
        nonlocal ticks
        bridge = MemoryBridge(tmp_path, manager_factory=_factory(provider))
        await bridge.start()
        stop = anyio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await anyio.sleep(0.01)

        async with anyio.create_task_group() as group:
            group.start_soon(ticker)
            outcome = await bridge.call_tool("slow_echo", {"text": "你好"})
            stop.set()
        await bridge.aclose()
        return bridge, outcome

    bridge, outcome = anyio.run(main)
    assert outcome.is_error is False and outcome.payload["echo"] == "你好"
    assert ticks >= 10, "the event loop stalled while the tool ran"
    names = [name for name, _ in provider.calls]
    assert names == ["initialize", "turn 1", "tool", "session_end", "shutdown"]
    threads = {ident for _, ident in provider.calls}
    assert len(threads) == 1 and threading.get_ident() not in threads
    assert provider.init_kwargs["platform"] == "mcp"
    assert provider.init_kwargs["hermes_home"] == str(tmp_path)
    assert SESSION_ID_PATTERN.match(provider.init_kwargs["session_id"])
    assert bridge.session_id == provider.init_kwargs["session_id"]


@pytest.mark.parametrize(("turn_gap", "capped"), [(3600.0, True), (0.0, False)])
def test_turns_reset_the_memory_failure_cap_after_a_pause(tmp_path, turn_gap, capped):
    (tmp_path / "config.yaml").write_text("memory:\n  memory_char_limit: 40\n", encoding="utf-8")
    too_long = {"action": "add", "target": "memory", "content": "x" * 60}

    async def main() -> list[Any]:
        bridge = MemoryBridge(tmp_path, turn_gap=turn_gap)
        await bridge.start()
        try:
            return [await bridge.call_tool("memory", too_long) for _ in range(4)]
        finally:
            await bridge.aclose()

    outcomes = anyio.run(main)
    assert all(o.is_error for o in outcomes)
    last = outcomes[-1].payload["error"]
    assert ("failed 4 times this turn" in last) is capped, last
    assert not (tmp_path / "memories" / "MEMORY.md").exists() or (
        "x" * 60 not in (tmp_path / "memories" / "MEMORY.md").read_text(encoding="utf-8")
    )


def test_calls_before_start_and_after_close_are_refused(tmp_path):
    async def main() -> None:
        bridge = MemoryBridge(tmp_path)
        with pytest.raises(RuntimeError, match="start"):
            await bridge.call_tool("memory", {})
        await bridge.start()
        await bridge.aclose()
        await bridge.aclose()  # idempotent
        with pytest.raises(RuntimeError):
            await bridge.call_tool("memory", {})

    anyio.run(main)


@pytest.mark.parametrize(
    ("text", "is_error"),
    [
        ('{"success": true, "count": 0}', False),
        ('{"success": false, "error": "no"}', True),
        ('{"error": "No memory provider handles tool \'x\'"}', True),
        ('{"error": ""}', False),
        ('["a list"]', False),
        ("plain text from a third-party provider", False),
    ],
)
def test_classify_result(text, is_error):
    assert classify_result(text).is_error is is_error
