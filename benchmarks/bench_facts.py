"""LoCoMo-style fact recall of the local fact store (hermes-memory-facts).

Every LoCoMo conversation's *observations* (the dataset's per-session facts about each speaker,
e.g. "Caroline attended an LGBTQ support group recently…", each with the dialog id it came from)
are added to a fresh `FactStore` (category ``general``, the speaker as tag). Every question with
evidence is passed verbatim to `FactStore.search` (min_trust 0, so all facts compete); the
top-k facts are mapped back to their dialog ids and scored against the question's evidence:
``recall@k`` = |gold ∩ dialog ids of the top-k facts| / |gold| (mean over questions), ``any@k``
= at least one gold id found. Categories 1-4 (786 questions in locomo-dev.json) and all 5 are
reported, for the store with HRR (NumPy) and without, plus the median search latency and the
ceiling: the share of gold dialog ids that any observation cites at all.

The HRR capacity is measured too: recovery of bound items from complex-sum bundles of k pairs
(unbind + clean-up against 1,000 items) next to the circular-mean bundle.

The data (CC BY-NC 4.0) is read from ``../shared/benchdata/locomo-dev.json`` next to the repo
at run time (``--data PATH`` to override); it is never copied.

    .venv/bin/python benchmarks/bench_facts.py [--data PATH] [--k 5 10] [--dim 1024]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from pathlib import Path

from hermes_memory_facts import FactStore

# The HRR algebra is internal to the facts plugin; this benchmark measures it directly, as
# the plugin's own tests do, so it takes the private module on purpose.
from hermes_memory_facts import _hrr as hrr

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "benchdata" / "locomo-dev.json"


def dia_ids(value) -> set[str]:
    items = value if isinstance(value, list) else [value]
    out: set[str] = set()
    for item in items:
        out.update(re.findall(r"D\d+:\d+", str(item)))
    return out


def run(data: list[dict], *, use_hrr: bool, ks: list[int], dim: int) -> dict:
    per_cat: dict[str, dict[int, list[float]]] = {}
    anyhit: dict[str, dict[int, list[float]]] = {}
    latencies: list[float] = []
    ceiling: list[float] = []
    facts_total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, sample in enumerate(data):
            store = FactStore(Path(tmp) / f"{n}.db", use_hrr=use_hrr, hrr_dim=dim)
            sources: dict[int, set[str]] = {}
            for sessions in sample["observation"].values():
                for speaker, items in sessions.items():
                    for content, evidence in items:
                        fact_id, created = store.add(content, tags=speaker)
                        sources.setdefault(fact_id, set()).update(dia_ids(evidence))
                        facts_total += created
            for qa in sample["qa"]:
                gold = dia_ids(qa.get("evidence") or [])
                if not gold:
                    continue
                if qa["category"] != 5:
                    covered = set().union(*sources.values())
                    ceiling.append(len(gold & covered) / len(gold))
                started = time.perf_counter()
                found = store.search(
                    str(qa["question"]), min_trust=0.0, limit=max(ks), count_retrieval=False
                )
                latencies.append(time.perf_counter() - started)
                for cat in (f"cat{qa['category']}", "1-4" if qa["category"] != 5 else "5", "all"):
                    for k in ks:
                        got: set[str] = set()
                        for fact, _ in found[:k]:
                            got |= sources.get(fact.fact_id, set())
                        per_cat.setdefault(cat, {}).setdefault(k, []).append(
                            len(gold & got) / len(gold)
                        )
                        anyhit.setdefault(cat, {}).setdefault(k, []).append(float(bool(gold & got)))
            store.close()
    return {
        "facts": facts_total,
        "ceiling": 100 * statistics.mean(ceiling),
        "recall": {
            c: {k: 100 * statistics.mean(v) for k, v in ks_.items()} for c, ks_ in per_cat.items()
        },
        "any": {
            c: {k: 100 * statistics.mean(v) for k, v in ks_.items()} for c, ks_ in anyhit.items()
        },
        "questions": {c: len(next(iter(ks_.values()))) for c, ks_ in per_cat.items()},
        "p50_ms": 1000 * statistics.median(latencies),
        "p95_ms": 1000 * sorted(latencies)[int(0.95 * len(latencies))],
    }


def capacity(dim: int) -> None:
    import numpy as np

    keys = [hrr.atom(f"key:{i}", dim) for i in range(1000)]
    values = np.stack([hrr.atom(f"value:{i}", dim) for i in range(1000)])
    rng = np.random.default_rng(1)
    print(f"\nHRR recovery, dim {dim}, clean-up against 1,000 items (complex sum / circular mean):")
    for k in (16, 32, dim // 16, dim // 8, dim // 4):
        scores = []
        for circular in (False, True):
            hits = total = 0
            for _ in range(max(2, 512 // k)):
                a_ids = rng.choice(1000, k, replace=False)
                b_ids = rng.choice(1000, k, replace=False)
                memory = hrr.bundle(
                    *(hrr.bind(keys[a], values[b]) for a, b in zip(a_ids, b_ids, strict=True))
                )
                if circular:
                    memory = np.exp(1j * np.angle(memory)).astype(np.complex64)
                for a, b in zip(a_ids, b_ids, strict=True):
                    noisy = hrr.unbind(memory, keys[a])
                    hits += int(np.argmax(np.real(values @ np.conj(noisy)))) == b
                    total += 1
            scores.append(100 * hits / total)
        print(f"  k={k:4d}: {scores[0]:5.1f}% / {scores[1]:5.1f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--k", type=int, nargs="+", default=[5, 10])
    parser.add_argument("--dim", type=int, default=1024)
    args = parser.parse_args()
    data = json.loads(args.data.read_text(encoding="utf-8"))
    for use_hrr in (True, False):
        result = run(data, use_hrr=use_hrr, ks=args.k, dim=args.dim)
        label = f"with HRR (dim {args.dim})" if use_hrr else "without HRR (FTS5 + Jaccard)"
        print(
            f"\nFact store {label}: {result['facts']} facts, "
            f"search p50 {result['p50_ms']:.2f} ms, p95 {result['p95_ms']:.2f} ms; "
            f"evidence covered by any observation (cat 1-4): {result['ceiling']:.1f}%"
        )
        for cat in ("1-4", "cat1", "cat2", "cat3", "cat4", "5", "all"):
            if cat not in result["recall"]:
                continue
            cells = "  ".join(
                f"R@{k} {result['recall'][cat][k]:5.1f}  any@{k} {result['any'][cat][k]:5.1f}"
                for k in args.k
            )
            print(f"  {cat:>4} ({result['questions'][cat]:4d} q): {cells}")
    capacity(args.dim)


if __name__ == "__main__":
    main()
