"""Cost of suffix folding (each English word of the natural-language fallback searched as
any of its word forms, ``painting`` → paint, paints, painted, …) on the archive
``bench_sessions.py`` builds.

Two comparisons, each interleaved query by query in a random order so both sides see the
same page cache and machine load:

* **fallback search** — the lexical fallback alone (``search_messages(any_terms=True)``,
  snippets included) with the question's words as written and folded (`folded`): what
  folding would cost the lexical-only path, which does not use it;
* **hybrid** — ``session_search`` with a vector index of synthetic vectors
  (``bench_sessions.add_synthetic_vectors``; the question's embedding is instant) and
  ``_hybrid.SUFFIX_FOLDING`` off and on: what hybrid discovery pays for it.

Query sets: ``bench_sessions.py``'s natural-language questions and questions worded unlike
the archive's text (inflected forms: "deployed", "migrations", "rotating").

    python benchmarks/bench_sessions.py --messages 100000 --build-only
    python benchmarks/bench_suffix_folding.py --messages 100000 [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

import hermes_memory_sessions.search._hybrid as hybrid_mod
from hermes_memory_sessions import SessionStore, session_search
from hermes_memory_sessions.search._query import folded, parse_query

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_sessions as bs

NL_QUERIES = bs.NL_QUESTIONS
INFLECTED = [
    "when were the containers deployed to staging",
    "which migrations touched the indexes",
    "who was rotating the certificates and tokens",
    "what were the refunds and invoices about",
    "how were the pods crashing after the rollouts",
    "what recipes were we baking with the starters",
    "which hotels and temples were we visiting",
    "what models were we training and evaluating",
]


def _compare(label: str, queries: list[str], run: Callable[[str, bool], int], rounds: int) -> None:
    rng = random.Random(7)
    times: dict[bool, list[float]] = {False: [], True: []}
    found: dict[bool, int] = {False: 0, True: 0}
    for _ in range(rounds):
        for q in queries:
            for fold in rng.sample([False, True], 2):
                start = time.perf_counter()
                found[fold] += run(q, fold)
                times[fold].append((time.perf_counter() - start) * 1000)
    for fold in (False, True):
        name = f"{label}, {'folded' if fold else 'as written'}"
        print(
            f"{name:<36} n={len(times[fold]):>4}  p50 {bs._pct(times[fold], 0.5):7.2f} ms"
            f"  p95 {bs._pct(times[fold], 0.95):7.2f} ms  results {found[fold]}"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    path = bs.DATA / f"sessions_{args.messages}.db"
    if not path.exists():
        print(f"{path} not found: run bench_sessions.py --messages {args.messages} first")
        return 2
    bs.add_synthetic_vectors(path)
    lexical = SessionStore(path)
    hybrid = SessionStore(path, embedder=bs.SyntheticEmbedder(), embed_in_background=False)

    def fallback(q: str, fold: bool) -> int:
        parsed = folded(parse_query(q)) if fold else parse_query(q)
        return len(lexical.search_messages(parsed, any_terms=True, limit=5))  # type: ignore[arg-type]

    def fused(q: str, fold: bool) -> int:
        hybrid_mod.SUFFIX_FOLDING = fold
        return int(json.loads(session_search({"query": q}, store=hybrid)).get("count") or 0)

    for q in NL_QUERIES:  # warm both: codes loaded, pages cached
        fallback(q, True)
        fused(q, True)
    print(f"== suffix folding, {args.messages:,} messages, {args.rounds} rounds ==")
    for label, queries in (("NL", NL_QUERIES), ("NL inflected", INFLECTED)):
        _compare(f"fallback search, {label}", queries, fallback, args.rounds)
        _compare(f"hybrid session_search, {label}", queries, fused, args.rounds)
    lexical.close()
    hybrid.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
