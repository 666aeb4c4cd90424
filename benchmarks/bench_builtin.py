"""Benchmark of the curated store (hermes-memory-builtin) on real files.

Prints add / replace / remove latency (p50, p95) of `MemoryStore` on a temporary directory —
each call takes the lock, re-reads the file, writes it atomically with fsync and updates the
metadata sidecar —, the latency of a load (``load_from_disk``: both files, their sidecars,
the threat scan) and of the tool's view of a file (``visible_entries``), and the throughput
of 6 processes adding to one MEMORY.md at once. ``--by-path`` repeats the single-process
figures with files reached by path (the Windows fallback) instead of through the directory's
descriptor, to show what the descriptor costs.

    .venv/bin/python benchmarks/bench_builtin.py [--ops 200] [--workers 6] [--per-worker 25]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hermes_memory_builtin import MemoryStore
from hermes_memory_builtin._format import parse_entries

WRITER = """
import sys, uuid
from hermes_memory_builtin import MemoryStore
mem_dir, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
store = MemoryStore(mem_dir, memory_char_limit=10_000_000)
print("ready", flush=True)
sys.stdin.readline()
for i in range(count):
    assert store.add("memory", f"worker {worker} entry {i} {uuid.uuid4().hex}")["success"]
"""


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed(fn: Callable[[], dict], samples: list[float]) -> None:
    start = time.perf_counter()
    result = fn()
    samples.append((time.perf_counter() - start) * 1000)
    assert result["success"], result


def bench_ops(ops: int, prefill: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(Path(tmp), memory_char_limit=10_000_000)
        for i in range(prefill):
            store.add("memory", f"background fact number {i}: the build uses nox sessions {i}")
        samples: dict[str, list[float]] = {"add": [], "replace": [], "remove": []}
        for i in range(ops):
            timed(
                lambda i=i: store.add("memory", f"benchmark entry {i} about topic {i * 7}"),
                samples["add"],
            )
        for i in range(ops):
            timed(
                lambda i=i: store.replace(
                    "memory",
                    f"benchmark entry {i} about",
                    f"benchmark entry {i}, revised ({i * 3})",
                ),
                samples["replace"],
            )
        # reads: the session-start load and the tool's view (file and sidecar read
        # through one descriptor of the directory, or by path in the fallback)
        for kind, read in (
            ("load", lambda: store.load_from_disk() or {"success": True}),
            ("view", lambda: {"success": bool(store.visible_entries("memory"))}),
        ):
            samples[kind] = []
            for _ in range(ops):
                timed(read, samples[kind])
        for i in range(ops):
            timed(
                lambda i=i: store.remove("memory", f"benchmark entry {i}, revised"),
                samples["remove"],
            )
        return samples


def bench_concurrent(workers: int, per_worker: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WRITER, tmp, str(w), str(per_worker)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for w in range(workers)
        ]
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
        start = time.perf_counter()
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            proc.communicate(timeout=600)
            assert proc.returncode == 0
        elapsed = time.perf_counter() - start
        found = len(parse_entries((Path(tmp) / "MEMORY.md").read_text(encoding="utf-8")))
        return elapsed, found


def report(results: dict[str, list[float]]) -> None:
    for kind, samples in results.items():
        print(
            f"  {kind:<8} p50 {statistics.median(samples):7.2f} ms   "
            f"p95 {percentile(samples, 0.95):7.2f} ms   max {max(samples):7.2f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=200, help="calls per operation kind")
    parser.add_argument("--prefill", type=int, default=20, help="entries already in the store")
    parser.add_argument("--workers", type=int, default=6)
    parser.add_argument("--per-worker", type=int, default=25)
    parser.add_argument("--by-path", action="store_true", help="also time writes by path")
    args = parser.parse_args()

    print(f"hermes-memory-builtin benchmark (python {sys.version.split()[0]}, {sys.platform})")
    print(f"single process, {args.prefill} entries prefilled, {args.ops} calls each:")
    report(bench_ops(args.ops, args.prefill))
    if args.by_path:
        import hermes_memory_builtin._memory_dir as memory_dir

        memory_dir.DIR_FD_SUPPORTED = False
        print("the same, files reached by path (the fallback without dir_fd):")
        report(bench_ops(args.ops, args.prefill))
        memory_dir.DIR_FD_SUPPORTED = True
    elapsed, found = bench_concurrent(args.workers, args.per_worker)
    total = args.workers * args.per_worker
    print(
        f"{args.workers} concurrent writer processes x {args.per_worker} adds: "
        f"{total / elapsed:.1f} adds/s ({elapsed:.2f} s), {found}/{total} entries on disk"
    )


if __name__ == "__main__":
    main()
