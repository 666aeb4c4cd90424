"""Benchmark of context compression's hot path (hermes-memory-context).

The agent loop asks ``should_compress`` before every model call, so the whole conversation
is counted again each time. Prints:

* `estimate_tokens` throughput on English and Chinese text (MB/s);
* ``should_compress`` on conversations of 50 / 200 / 1,000 messages: first call (every
  message counted) and later calls (the counter's cache answers), p50 and p95;
* ``compress`` on 200 messages with an instant summariser (the cut, the request built, the
  summary fitted), p50 and p95.

    .venv/bin/python benchmarks/bench_compression.py [--repeat 200]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from hermes_memory_context import ContextCompressor, estimate_tokens


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def conversation(n: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are helpful. " * 40}]
    for i in range(n // 2):
        messages.append(
            {"role": "user", "content": f"问题 {i}：备份应该保留多久？ and why {i}? " * 3}
        )
        messages.append({"role": "assistant", "content": f"Answer {i}: keep seven dumps. " * 12})
    return messages


def summarise(messages: list[dict[str, Any]], tools: list[Any]) -> dict[str, str]:
    return {"content": "Goal: backups. Decisions: keep seven daily dumps."}


def throughput(text: str, repeat: int) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        estimate_tokens(text)
    seconds = time.perf_counter() - started
    return len(text.encode()) * repeat / seconds / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    english = "The backup job rotates seven daily dumps and one weekly archive. " * 200
    chinese = "备份任务每天轮换七份转储，每周保留一份归档。" * 500
    print(
        f"estimate_tokens  english {throughput(english, args.repeat):6.0f} MB/s (ASCII: length only)"
    )
    print(f"estimate_tokens  chinese {throughput(chinese, args.repeat):6.1f} MB/s")
    for size in (50, 200, 1000):
        messages = conversation(size)
        c = ContextCompressor(context_window=1_000_000, summarize=summarise)
        started = time.perf_counter()
        c.should_compress(messages)
        first = (time.perf_counter() - started) * 1000
        later: list[float] = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            c.should_compress(messages)
            later.append((time.perf_counter() - started) * 1000)
        print(
            f"should_compress  {size:5d} msgs  first {first:7.2f} ms  later p50"
            f" {statistics.median(later):6.3f} ms  p95 {percentile(later, 0.95):6.3f} ms"
        )
    messages = conversation(200)
    c = ContextCompressor(context_window=8000, protect_last_n=10, summarize=summarise)
    samples: list[float] = []
    for _ in range(max(10, args.repeat // 10)):
        started = time.perf_counter()
        result = c.compress(messages)
        samples.append((time.perf_counter() - started) * 1000)
        assert result.compressed, result.error
    print(
        f"compress           200 msgs  p50 {statistics.median(samples):6.2f} ms"
        f"  p95 {percentile(samples, 0.95):6.2f} ms  ({result.tokens_before:,} ->"
        f" {result.tokens_after:,} tokens)"
    )


if __name__ == "__main__":
    main()
