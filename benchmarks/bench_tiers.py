"""Two embedding tiers, end to end: recall while the quality model catches up, backfill time.

**Recall while catching up.** Every LoCoMo conversation goes into a real `SessionStore` with
the default model as the quality tier and the static model (distilled from it) as the fast
tier (`hermes_memory_sessions.vectors._tiers`). The fast tier embeds every message; then the
quality tier embeds the newest 0 %, 25 %, 50 % and 100 % of the messages (newest first, as
``sessions embed`` and the background worker do), and at each step every question is asked
through the lexical policy (``session_search``'s) and through ``discover_messages`` (hybrid:
each message searched with its best vector, the tiers merged on one scale). R@5 / R@10 at
dialog level, as ``bench_locomo.py``. 0 % is the static model alone and 100 % the default
model alone (tests/sessions/test_tiers.py checks both equalities).

Data, read at run time and never copied: ``../shared/benchdata/locomo-dev.json`` (the 5 dev
conversations) and, with ``--data``, other files in the same layout, such as the held split
``/tmp/locomo-held.json`` (conv-30/42/44/48/50, built from snap-research/locomo
``data/locomo10.zip`` at commit e76cdff). LoCoMo is CC BY-NC 4.0. Embeddings come from the
cache in ``benchmarks/_data`` (``_vector_cache``; the static model's from its own table).

**Backfill.** A synthetic archive of ``--backfill`` messages (LoCoMo turns cycled with a
numbered suffix, 40 per session, two roles) is embedded by the fast tier alone and timed;
the quality model embeds ``--quality-sample`` of its messages live (no cache) and its rate
gives the quality tier's time for 100k and 1M (extrapolated, printed as such). Then
discovery latency on that archive: the tiered index against the fast tier alone, the
question's embeddings cached (second pass), so the figure is what the merge adds.

    .venv/bin/python benchmarks/bench_tiers.py [--data PATH ...] [--backfill 100000]
        [--quality-sample 64] [--threads 2] [--skip-locomo] [--skip-backfill]
        [--codes 1000000]

``--codes N`` times the fast tier's code set at N codes: the Hamming pass with and without
dropped codes (messages the quality tier took over, filtered until the next compaction) and
one compaction (a copy of every code, done once `COMPACT_AT` drops have gathered).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_locomo as bl

from hermes_memory_sessions.storage import SessionStore

FRACTIONS = (0.0, 0.25, 0.5, 1.0)


def tiered_store(path: Path, quality: Any, fast: Any) -> SessionStore:
    return SessionStore(path, embedder=quality, fast_embedder=fast, embed_in_background=False)


def catch_up(
    convs: list[bl.Conversation], quality: Any, fast: Any, fractions: Sequence[float]
) -> dict[float, dict[str, dict[str, bl.Score]]]:
    """Scores per quality fraction, method and bucket (``all``, ``1-4``, ``catN``)."""
    ks = (5, 10)
    out: dict[float, dict[str, dict[str, bl.Score]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(bl.Score))
    )
    with tempfile.TemporaryDirectory(prefix="tiers-") as tmp:
        for conv in convs:
            store = tiered_store(Path(tmp) / f"{conv.sample_id}.db", quality, fast)
            archive = bl.Archive(conv, Path(tmp), store=store)
            index: Any = store.vector_index
            index.fast.embed_pending(batch_size=256)
            total = int(store.vector_coverage()["total"])
            for fraction in sorted(fractions):
                have = int(store.vector_coverage()["embedded"])
                want = round(fraction * total)
                if want > have:
                    index.quality.embed_pending(want - have, batch_size=64)
                for q in conv.questions:
                    buckets = ["all", f"cat{q.category}"]
                    if q.category in (1, 2, 3, 4):
                        buckets.append("1-4")
                    ranked = {
                        "lexical": archive.tool_policy(q.text, max(ks)),
                        "hybrid": archive.hybrid(q.text, max(ks)),
                    }
                    for method, got in ranked.items():
                        for b in buckets:
                            out[fraction][method][b].add(q.gold, got, ks)
            print(f"  {conv.sample_id}: {total} messages", file=sys.stderr, flush=True)
            archive.close()
    return out


def print_catch_up(label: str, scores: dict[float, dict[str, dict[str, bl.Score]]]) -> None:
    print(f"\n{label}: R@5 / R@10 by quality-tier coverage (newest first)")
    print(f"{'coverage':<10}{'lexical':>16}{'hybrid':>16}{'hybrid cat. 1-4':>18}")
    for fraction in sorted(scores):
        per = scores[fraction]
        lex, hyb, h14 = per["lexical"]["all"], per["hybrid"]["all"], per["hybrid"]["1-4"]
        print(
            f"{fraction * 100:>7.0f} % "
            f"{lex.pct(lex.frac, 5):>8.1f} /{lex.pct(lex.frac, 10):>5.1f}"
            f"{hyb.pct(hyb.frac, 5):>9.1f} /{hyb.pct(hyb.frac, 10):>5.1f}"
            f"{h14.pct(h14.frac, 5):>11.1f} /{h14.pct(h14.frac, 10):>5.1f}"
        )
    print("hybrid R@5 / R@10 by category")
    names = [bl.CATEGORIES[c] for c in sorted(bl.CATEGORIES)]
    print(f"{'coverage':<10}" + "".join(f"{n:>16}" for n in names))
    for fraction in sorted(scores):
        cells = []
        for c in sorted(bl.CATEGORIES):
            sc = scores[fraction]["hybrid"][f"cat{c}"]
            cells.append(f"{sc.pct(sc.frac, 5):>9.1f} /{sc.pct(sc.frac, 10):>5.1f}")
        print(f"{fraction * 100:>7.0f} % " + "".join(cells))


def synthetic(store: SessionStore, convs: list[bl.Conversation], n: int) -> None:
    """``n`` messages of LoCoMo turns cycled, each with a numbered suffix (distinct texts)."""
    turns = [t.text for c in convs for s in c.sessions for t in s.turns]
    per_session, written, s = 40, 0, 0
    while written < n:
        sid = f"syn{s:06d}"
        store.create_session(sid, source="cli", started_at=1_700_000_000 + s * 600)
        count = min(per_session, n - written)
        store.append_messages(
            sid,
            [
                {
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": f"{turns[(written + i) % len(turns)]} (#{written + i})",
                }
                for i in range(count)
            ],
        )
        written += count
        s += 1


def backfill(
    convs: list[bl.Conversation], n: int, sample: int, threads: int, fast: Any
) -> dict[str, float]:
    """Seconds and rates of the fast tier over ``n`` messages, the quality tier's live rate
    on ``sample`` of them, and discovery p50/p95 tiered vs fast alone."""
    from hermes_memory_vectors import default_embedder

    quality = default_embedder(threads=threads)
    cached_quality = bl.CachedEmbedder(lambda: quality, quality.name, quality.dim)
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="tiers-backfill-") as tmp:
        path = Path(tmp) / "big.db"
        started = time.perf_counter()
        with SessionStore(path) as plain:
            synthetic(plain, convs, n)
        figures["ingest_s"] = time.perf_counter() - started
        store = SessionStore(
            path, embedder=quality, fast_embedder=fast.real, embed_in_background=False
        )
        index: Any = store.vector_index
        started = time.perf_counter()
        done = index.fast.embed_pending(batch_size=256)
        figures["fast_s"] = time.perf_counter() - started
        figures["fast_n"] = done
        started = time.perf_counter()
        q_done = index.quality.embed_pending(sample, batch_size=8)
        figures["quality_s"] = time.perf_counter() - started
        figures["quality_n"] = q_done
        store.close()
        questions = [q.text for c in convs for q in c.questions][:60]
        for label, kwargs in (
            ("tiered", {"embedder": cached_quality, "fast_embedder": fast.real}),
            ("fast_only", {"embedder": fast.real}),
        ):
            with SessionStore(path, embed_in_background=False, **kwargs) as s:
                s.vector_index.refresh()  # type: ignore[union-attr]
                for q in questions:  # first pass: codes loaded, query vectors cached
                    s.discover_messages(q, limit=10)
                times = []
                for q in questions:
                    t = time.perf_counter()
                    s.discover_messages(q, limit=10)
                    times.append((time.perf_counter() - t) * 1000)
                times.sort()
                figures[f"{label}_p50_ms"] = statistics.median(times)
                figures[f"{label}_p95_ms"] = times[int(0.95 * (len(times) - 1))]
    return figures


def print_backfill(n: int, f: dict[str, float]) -> None:
    fast_rate = f["fast_n"] / f["fast_s"] if f["fast_s"] else 0.0
    q_rate = f["quality_n"] / f["quality_s"] if f["quality_s"] else 0.0
    print(f"\nBackfill of {n:,} synthetic messages (ingest {f['ingest_s']:.0f} s)")
    print(f"fast tier (static): {f['fast_n']:,.0f} in {f['fast_s']:.1f} s = {fast_rate:,.0f} msg/s")
    print(f"  1,000,000 messages: {1_000_000 / fast_rate / 60:.1f} min (extrapolated)")
    print(
        f"quality tier (default, live, {f['quality_n']:.0f} messages): {q_rate:.2f} msg/s;"
        f" 100k: {100_000 / q_rate / 3600:.1f} h, 1M: {1_000_000 / q_rate / 3600:.0f} h"
        " (extrapolated)"
    )
    print(
        f"discovery at {n:,}, query vectors cached: tiered p50/p95"
        f" {f['tiered_p50_ms']:.1f} / {f['tiered_p95_ms']:.1f} ms; fast tier alone"
        f" {f['fast_only_p50_ms']:.1f} / {f['fast_only_p95_ms']:.1f} ms"
    )


def codes_cost(n: int) -> dict[str, float]:
    """ms of the Hamming pass over ``n`` random 384-bit codes with no dropped code and with
    `COMPACT_AT` - 1 dropped (filtered), and of one compaction of `COMPACT_AT` codes."""
    import numpy as np

    from hermes_memory_sessions.vectors import BinaryCodes
    from hermes_memory_sessions.vectors._binary_codes import COMPACT_AT

    rng = np.random.default_rng(0)
    codes = BinaryCodes()
    codes.words, codes.n = 6, n
    codes.codes = rng.integers(0, 2**63, size=(6, n), dtype=np.uint64)
    codes.ids = np.arange(n, dtype=np.int64)
    query = rng.normal(size=384).astype(np.float32)

    def best(run: Any, repeat: int = 5) -> float:
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            run()
            times.append((time.perf_counter() - started) * 1000)
        return min(times)

    out = {"plain_ms": best(lambda: codes.nearest(query, 1000))}
    codes.drop(list(range(0, n, max(1, n // (COMPACT_AT - 1))))[: COMPACT_AT - 1])
    out["filtered_ms"] = best(lambda: codes.nearest(query, 1000))
    codes.drop([n - 1])
    started = time.perf_counter()
    codes.compact()
    out["compact_ms"] = (time.perf_counter() - started) * 1000
    out["left"] = codes.n
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, nargs="+", default=[bl.DEFAULT_DATA])
    ap.add_argument("--backfill", type=int, default=100_000)
    ap.add_argument("--quality-sample", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--skip-locomo", action="store_true")
    ap.add_argument("--skip-backfill", action="store_true")
    ap.add_argument(
        "--calibration", choices=["reference", "pool", "minmax"], help="measure another scale"
    )
    ap.add_argument(
        "--fractions", type=float, nargs="+", default=list(FRACTIONS), help="quality shares"
    )
    ap.add_argument(
        "--codes", type=int, default=0, help="also time the code set's drop/compact at N codes"
    )
    args = ap.parse_args(argv)
    if args.codes:
        c = codes_cost(args.codes)
        print(
            f"{args.codes:,} codes: Hamming pass best {c['plain_ms']:.1f} ms, with 1,023 dropped"
            f" codes filtered {c['filtered_ms']:.1f} ms; compaction of 1,024"
            f" {c['compact_ms']:.1f} ms ({c['left']:,.0f} left); load {os.getloadavg()}"
        )
    if args.calibration:
        import hermes_memory_sessions.search._tiered as tiered_mod

        tiered_mod.CALIBRATION = args.calibration
    print(f"load average at start: {os.getloadavg()}")
    quality = bl._make_embedder("default", args.threads)
    fast = bl._make_static(args.threads)
    datasets = {path: bl.load(path) for path in args.data}
    if not args.skip_locomo:
        for path, convs in datasets.items():
            started = time.perf_counter()
            scores = catch_up(convs, quality, fast, args.fractions)
            print_catch_up(f"{path.name} ({time.perf_counter() - started:.0f} s)", scores)
            print(f"load average: {os.getloadavg()}", flush=True)
        if quality is not None and quality.query_failures:
            print(f"WARNING: {quality.query_failures} query embeddings failed")
    if not args.skip_backfill:
        convs = [c for cs in datasets.values() for c in cs]
        figures = backfill(convs, args.backfill, args.quality_sample, args.threads, fast)
        print_backfill(args.backfill, figures)
        print(f"load average at end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
