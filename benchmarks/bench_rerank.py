"""Cost of the ranking after fusion (``search._rerank``) per query, at the candidate counts
hybrid discovery produces: about 100-150 fused candidates for ``discover_messages`` (pools
of 50), up to ~300 for ``session_search`` (pool 80 and larger pools), spread over a few
to a hundred sessions. Synthetic scores (seeded); no data read.

    .venv/bin/python benchmarks/bench_rerank.py [--repeat 2000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from hermes_memory_sessions.search._rerank import (
    background_normalised,
    diversified,
    minmax,
    session_supported,
)


def _time(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(p50, p95) in microseconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(1e6 * (time.perf_counter() - start))
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=2000)
    args = ap.parse_args()
    rng = random.Random(22)
    print(f"{'candidates':>10}{'sessions':>10}{'limit':>7}  step{'':<24}{'p50 us':>9}{'p95 us':>9}")
    for n, sessions, limit in ((150, 10, 10), (150, 100, 10), (300, 100, 80)):
        score = {i: rng.random() for i in range(n)}
        session = {i: f"s{rng.randrange(sessions)}" for i in range(n)}
        cosines = [rng.uniform(0.7, 0.9) for _ in range(n // 2)]
        steps: dict[str, Callable[[], object]] = {
            "minmax (previous)": lambda c=cosines: minmax(c),
            "background_normalised": lambda c=cosines: background_normalised(c),
            "session_supported": lambda s=score, se=session: session_supported(s, se, 0.5, 3),
            "sorted (previous order)": lambda s=score: sorted(s, key=lambda m: (-s[m], m)),
            "diversified 0.05": lambda s=score, se=session, k=limit: diversified(s, se, 0.05, k),
            "diversified 0.15": lambda s=score, se=session, k=limit: diversified(s, se, 0.15, k),
        }
        for name, fn in steps.items():
            p50, p95 = _time(fn, args.repeat)
            print(f"{n:>10}{sessions:>10}{limit:>7}  {name:<28}{p50:9.1f}{p95:9.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
