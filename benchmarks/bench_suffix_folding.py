"""Cost of suffix folding on the lexical path: ``session_search`` with the natural-language
fallback's English words searched as they are written, inflected words only as stem
prefixes (``_query.SUFFIX_FOLDING``), and every word (``_query.FOLD_BARE_WORDS``), on the archive
``bench_sessions.py`` builds (no embedder: the lexical path alone).

The variants are interleaved query by query, in a random order each time, so both see
the same page cache and the same machine load. Query sets: ``bench_sessions.py``'s AND
and natural-language queries (folding only changes the second: the AND pass is untouched)
and questions worded unlike the archive's text (inflected forms: "deployed", "migrations",
"rotating"), where the prefixes match most.

    python benchmarks/bench_sessions.py --messages 100000 --build-only
    python benchmarks/bench_suffix_folding.py --messages 100000 [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import hermes_memory_sessions.search._query as query_mod
from hermes_memory_sessions import SessionStore, session_search

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sessions import DATA, _pct

AND_QUERIES = [
    "docker deployment",
    "postgres migration",
    "react component",
    "stripe webhook",
    "kubernetes helm",
    "sourdough starter",
    "kyoto hotel",
    "tls certificate",
]
NL_QUERIES = [
    "what did we decide about the docker deployment last week",
    "how did we fix the postgres deadlock problem",
    "which hotel did we book in kyoto for the trip",
    "remember the sourdough hydration we talked about",
    "what was the plan for rotating the tls certificates",
    "did we agree on the stripe subscription proration approach",
    "what happened with the kubernetes crashloop probe",
    "what budget did we set for the retirement savings",
]
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    path = DATA / f"sessions_{args.messages}.db"
    if not path.exists():
        print(f"{path} not found: run bench_sessions.py --messages {args.messages} first")
        return 2
    store = SessionStore(path)
    rng = random.Random(7)
    sets = {"AND (word)": AND_QUERIES, "NL fallback": NL_QUERIES, "NL inflected": INFLECTED}
    print(f"== suffix folding, lexical session_search, {args.messages:,} messages ==")
    modes = {"as written": (False, False), "inflected": (True, False), "all words": (True, True)}
    for label, queries in sets.items():
        times: dict[str, list[float]] = {m: [] for m in modes}
        count: dict[str, int] = dict.fromkeys(modes, 0)
        for _ in range(args.rounds):
            for q in queries:
                for mode in rng.sample(list(modes), len(modes)):
                    query_mod.SUFFIX_FOLDING, query_mod.FOLD_BARE_WORDS = modes[mode]
                    start = time.perf_counter()
                    payload = json.loads(session_search({"query": q}, store=store))
                    times[mode].append((time.perf_counter() - start) * 1000)
                    count[mode] += int(payload.get("count") or 0)
        for mode in modes:
            print(
                f"{label + ', ' + mode:<28} n={len(times[mode]):>4}"
                f"  p50 {_pct(times[mode], 0.5):7.2f} ms  p95 {_pct(times[mode], 0.95):7.2f} ms"
                f"  results {count[mode]}"
            )
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
