"""MemoryManager per-turn overhead with the real builtin tier and an external provider (prints figures).

Measures what the manager adds to an agent's turn on top of the providers themselves:
``prefetch_all`` (scrubbing, fencing, the bounded thread of the external provider),
``sync_all`` (scrubbing, the local tiers' durable SQLite commit on the caller's thread, and
enqueueing for the external provider), the same with ``messages=`` (tool calls included) and
with an external provider hung for ever, ``handle_tool_call`` routing for ``session_search``,
and the drain of the external provider's queued syncs.
Run: ``uv run --all-packages python benchmarks/bench_manager.py``
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from hermes_memory_core import MemoryManager, MemoryProvider
from hermes_memory_sessions import SessionStore

TURN_USER = "我们下周把 billing 服务迁到 docker compose 吧，healthcheck 用 /healthz。" * 3
TURN_ASSISTANT = "Sounds good. I'll draft the compose file with a healthcheck on /healthz. " * 8


def timed(label: str, runs: int, fn: Callable[[int], object]) -> None:
    samples = []
    for i in range(runs):
        started = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    p95 = samples[int(0.95 * (len(samples) - 1))]
    print(
        f"  {label:<38} p50 {statistics.median(samples):7.3f} ms   p95 {p95:7.3f} ms   ({runs} runs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / "config.yaml").write_text("memory:\n  provider: example\n", encoding="utf-8")
        manager = MemoryManager.from_config(home)
        manager.initialize_all("20261130_120000_bench0", platform="cli")
        print(f"providers: {[p.name for p in manager.providers]}")
        timed(
            "prefetch_all (builtin + sessions + ext)",
            args.turns,
            lambda i: manager.prefetch_all(f"{TURN_USER} {i}"),
        )
        timed(
            "sync_all (archive commit + enqueue)",
            args.turns,
            lambda i: manager.sync_all(f"{TURN_USER} {i}", TURN_ASSISTANT),
        )
        started = time.perf_counter()
        assert manager.flush_pending(120)
        drained = time.perf_counter() - started
        print(f"  drain of {args.turns} queued external syncs     {drained * 1000:9.1f} ms total")
        timed(
            "sync_all with messages= (4 messages)",
            args.turns,
            lambda i: manager.sync_all(
                f"{TURN_USER} m{i}", TURN_ASSISTANT, messages=turn_messages(f"m{i}")
            ),
        )
        assert manager.flush_pending(120)
        query = {"query": "docker compose healthcheck"}
        timed(
            "handle_tool_call(session_search)",
            100,
            lambda i: json.loads(manager.handle_tool_call("session_search", query)),
        )
        timed("build_system_prompt", 100, lambda i: manager.build_system_prompt())
        manager.shutdown_all()
    hung_external(args.turns)


def turn_messages(tag: str) -> list[dict[str, object]]:
    call = {"id": f"call_{tag}", "type": "function"}
    call["function"] = {"name": "session_search", "arguments": '{"query": "docker"}'}
    return [
        {"role": "user", "content": f"{TURN_USER} {tag}"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"call_{tag}", "content": '{"results": []}'},
        {"role": "assistant", "content": TURN_ASSISTANT},
    ]


class Hung(MemoryProvider):
    """An external provider whose sync_turn never returns."""

    name = "hung"

    def __init__(self) -> None:
        self.forever = threading.Event()

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: object) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, object]]:
        return []

    def sync_turn(self, user_content: str, assistant_content: str, **kwargs: object) -> None:
        self.forever.wait()


def hung_external(turns: int) -> None:
    """sync_all while the external provider is stuck: the archive still commits every turn."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        hung = Hung()
        with MemoryManager.from_config(home, shutdown_timeout=0.5) as manager:
            assert manager.add_provider(hung)
            manager.initialize_all("20261130_130000_bench1", platform="cli")
            print(f"providers: {[p.name for p in manager.providers]} (hung sync_turn)")
            timed(
                "sync_all, external hung",
                turns,
                lambda i: manager.sync_all(f"{TURN_USER} {i}", TURN_ASSISTANT),
            )
            assert manager.config is not None
            store = SessionStore(manager.config.sessions.db_path)
            stored = len(store.get_messages("20261130_130000_bench1"))
            store.close()
            print(f"  archived while the external hung: {stored} of {2 * turns} messages")
            started = time.perf_counter()
        print(f"  shutdown with a hung external: {(time.perf_counter() - started) * 1000:.0f} ms")
        hung.forever.set()


if __name__ == "__main__":
    main()
