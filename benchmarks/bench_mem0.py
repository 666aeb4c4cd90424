"""mem0 adapter: how long an agent's turn waits on mem0, healthy and broken (prints figures).

Uses the test fake (tests/mem0/mem0_fake.py) on 127.0.0.1 — no internet. Run:
    .venv/bin/python benchmarks/bench_mem0.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "mem0"))

from mem0_fake import FakeMem0

from hermes_memory_mem0 import Mem0Provider


def turn(provider: Mem0Provider, n: int) -> float:
    started = time.perf_counter()
    provider.on_turn_start(n, f"question {n} about tea")
    provider.prefetch(f"question {n} about tea", session_id="s1")
    provider.sync_turn(f"question {n} about tea", "answer", session_id="s1")
    return time.perf_counter() - started


def scenario(label: str, dialect: str, *, hang: float = 0.0, turns: int = 10) -> None:
    fake = FakeMem0(dialect, api_key="k" if dialect == "platform" else None)
    for i in range(200):
        fake.seed(f"fact number {i} about tea and coffee")
    with fake.serve() as url, tempfile.TemporaryDirectory() as home:
        conf = {
            "mode": dialect,
            "host": url,
            "api_key": fake.api_key,
            "timeout": 5.0,
            "prefetch_wait": 1.5,
            "shutdown_timeout": 2.0,
        }
        provider = Mem0Provider(hermes_home=home, config={"mem0": conf})
        started = time.perf_counter()
        provider.initialize("s1", hermes_home=home, platform="cli", user_id="u1")
        init = time.perf_counter() - started
        provider.handle_tool_call("mem0_search", {"query": "warm"})
        if hang:
            fake.hang(hang)
        times = [turn(provider, n) for n in range(turns)]
        started = time.perf_counter()
        provider.shutdown()
        down = time.perf_counter() - started
        fake.clear_faults()
    print(
        f"{label:42s} init {init * 1000:6.1f} ms"
        f" | turn median {statistics.median(times) * 1000:7.1f} ms"
        f" max {max(times) * 1000:7.1f} ms | shutdown {down * 1000:7.1f} ms"
    )


if __name__ == "__main__":
    scenario("platform, healthy (loopback)", "platform")
    scenario("selfhosted, healthy (loopback)", "selfhosted")
    scenario("selfhosted, server hangs 60 s (20 turns)", "selfhosted", hang=60.0, turns=20)
    scenario("platform, server hangs 60 s (20 turns)", "platform", hang=60.0, turns=20)
