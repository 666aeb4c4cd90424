"""MemoryManager per-turn overhead with the real builtin tier and an external provider (prints figures).

Measures what the manager adds to an agent's turn on top of the providers themselves:
``prefetch_all`` (scrubbing, fencing, the bounded thread of the external provider),
``sync_all`` (scrubbing and enqueueing: the write itself runs on the worker),
``handle_tool_call`` routing for ``session_search``, and the drain of 200 queued syncs.
Run: ``uv run --all-packages python benchmarks/bench_manager.py``
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hermes_memory_core import MemoryManager

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
            "sync_all (enqueue only)",
            args.turns,
            lambda i: manager.sync_all(f"{TURN_USER} {i}", TURN_ASSISTANT),
        )
        started = time.perf_counter()
        assert manager.flush_pending(120)
        drained = time.perf_counter() - started
        print(f"  drain of {args.turns} queued syncs to SQLite      {drained * 1000:9.1f} ms total")
        query = {"query": "docker compose healthcheck"}
        timed(
            "handle_tool_call(session_search)",
            100,
            lambda i: json.loads(manager.handle_tool_call("session_search", query)),
        )
        timed("build_system_prompt", 100, lambda i: manager.build_system_prompt())
        manager.shutdown_all()


if __name__ == "__main__":
    main()
