"""The Hamming pass of dense search (`BinaryCodes.nearest`) at archive scale, in memory.

Random 384-bit codes stand in for the codes of a large archive (the cost does not depend on
what the vectors mean): prints p50 / p95 of ``nearest(query, 1000)`` for the shipped
implementation and for the previous one (a temporary array per word, ``argpartition``),
alternating rounds in one run so that machine load hits both alike.

    .venv/bin/python benchmarks/bench_hamming.py [--codes 745718] [--rounds 5]
"""

from __future__ import annotations

import argparse
import struct
import time

import numpy as np
import numpy.typing as npt

from hermes_memory_sessions.vectors import BinaryCodes


def previous(codes: BinaryCodes, query: npt.NDArray[np.float32], count: int) -> list[int]:
    """The implementation before chunking and histogram selection (for comparison)."""
    bits = np.packbits(query > 0)
    qwords = bits.view(np.uint64)
    distance = np.zeros(codes.n, dtype=np.uint16)
    for w in range(codes.words):
        distance += np.bitwise_count(np.bitwise_xor(codes.codes[w, : codes.n], qwords[w]))
    top = np.argpartition(distance, count)[:count]
    return [int(i) for i in codes.ids[top]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--codes", type=int, default=745_718, help="user/assistant messages of 1M")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--queries", type=int, default=20)
    args = ap.parse_args()
    rng = np.random.default_rng(7)
    codes = BinaryCodes()
    for start in range(0, args.codes, 50_000):
        m = min(50_000, args.codes - start)
        rows = rng.integers(-127, 128, (m, 384), dtype=np.int8)
        codes.add(range(start, start + m), [struct.pack("<f", 0.01) + r.tobytes() for r in rows])
    queries = rng.standard_normal((args.queries, 384)).astype(np.float32)
    times: dict[str, list[float]] = {"shipped": [], "previous": []}
    for q in queries[:2]:  # both agree on the nearest (up to ties at the cut-off)
        same = len(set(codes.nearest(q, 1000)) & set(previous(codes, q, 1000)))
        print(f"agreement on the 1,000 nearest: {same / 10:.1f} %")
    for _ in range(args.rounds):
        for name, fn in (("shipped", codes.nearest), ("previous", None)):
            for q in queries:
                t = time.perf_counter()
                if fn is None:
                    previous(codes, q, 1000)
                else:
                    fn(q, 1000)
                times[name].append(1000 * (time.perf_counter() - t))
    print(f"Hamming pass over {args.codes:,} codes of 384 bits, 1,000 nearest:")
    for name, ts in times.items():
        ts.sort()
        print(
            f"  {name:<9} p50 {ts[len(ts) // 2]:7.2f} ms  p95 {ts[int(0.95 * (len(ts) - 1))]:7.2f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
