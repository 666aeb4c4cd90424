"""Hybrid discovery at scale on SQLite and PostgreSQL: lexical and hybrid p50 / p95.

Uses the archive ``bench_sessions.py --messages N`` builds (``benchmarks/_data``; build it
first, e.g. ``bench_sessions.py --messages 1000000 --build-only``), gives every user /
assistant message a *synthetic* int8 vector (``bench_sessions.add_synthetic_vectors``;
embedding a million messages for real takes days here) and times ``session_search``
discovery for the same query sets as ``bench_sessions.py``: without an embedder (lexical),
then with the vector index attached (hybrid; the question's embedding excluded: the
synthetic embedder is instant unless ``--query-ms`` says otherwise), alternating rounds.
A fifth set, questions of mid-frequency words, is picked from the archive's own vocabulary
by a fixed rule (`_mid_frequency`).
(The Hamming pass runs beside the lexical reads, on the thread that embeds the query, when
the vectors are in memory; running the whole dense side there, reads included, was measured
earlier and dropped: the SQLite archive serialises its reads on one connection.)

    .venv/bin/python benchmarks/bench_hybrid_scale.py [--messages 1000000] [--rounds 3]
        [--dsn postgresql://...]

``--dsn``: the same corpus is also bulk-loaded into a PostgreSQL archive (schema
``bench_hybrid_<N>`` of that database, created on first use and kept for reruns), given the
same kind of synthetic vectors in ``hm_vectors``, analysed, and timed the same way.

``--tiers``: also the two-tier index (`hermes_memory_sessions.vectors._tiers`) on a copy
of the archive (``sessions_<N>_tiers.db``, made once) whose older half of the vectors is
relabelled as a second, fast model's: the newest half in the quality tier (it catches up
newest first), the rest in the fast tier, each message in one tier; the query is embedded
by both (synthetic, instant) and each tier runs its own Hamming pass over its half.

``--in-process``: afterwards, the working tree's archives opened in this one process (no
other worker beside it) and every query timed ``--rounds`` times, one method after the other
(as a deployment runs one backend, not four side by side): p50, p95 and the slowest, over
all queries and per query set.

``--baseline REV``: the same timings for the packages of git revision ``REV`` too (exported
with ``git archive`` to a temporary directory and put first on that worker's path), query by
query alternating with the working tree's (which one goes first alternates too), so that
the machine's load hits both alike. Each version runs in its own worker process (its
archives opened, codes loaded and every query run once before timing); the figures are the
workers' own ``session_search`` times.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_sessions as bs

from hermes_memory_sessions import SessionStore, session_search

QUERIES = {
    "AND (word)": [
        "docker deployment",
        "postgres migration",
        "react component",
        "stripe webhook",
        "kubernetes helm",
        "sourdough starter",
        "kyoto hotel",
        "tls certificate",
    ],
    "NL fallback": [
        "what did we decide about the docker deployment last week",
        "how did we fix the postgres deadlock problem",
        "which hotel did we book in kyoto for the trip",
        "remember the sourdough hydration we talked about",
    ],
    "CJK 2-char": ["部署", "数据", "退款", "京都", "面包", "集群", "证书", "基金"],
    "no hit": ["zqxjkvw", "flurbogast", "不存在的词语", "qwpzv 锟斤拷"],
}
#: Questions of mid-frequency words (`_mid_frequency`): rare enough to be kept by the
#: natural-language fallback, frequent enough that together they match more messages than
#: its window, spread over the whole archive (the sets above are all-common words).
MID_FREQUENCY = "NL mid-freq"


def _mid_frequency(path: Path) -> list[str]:
    """Four questions of three words each, the words chosen by a fixed rule from the word
    indexes of ``path``, not by hand: the alphabetic words of 4+ letters that match from a
    fifth of `COMMON_TERM_CAP` up to just under it (messages and tool output together, as
    PostgreSQL's one word index counts them), twelve of them evenly spaced in order of
    frequency. Cached beside the archive (reading the vocabulary takes a while)."""
    from hermes_memory_sessions.search import COMMON_TERM_CAP

    cache = path.with_name(path.name + ".midfreq.json")
    if cache.exists():
        return list(json.loads(cache.read_text()))
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    docs: dict[str, int] = {}
    for table in ("hm_fts_words", "hm_fts_tools"):
        conn.execute(f"CREATE VIRTUAL TABLE temp.v_{table} USING fts5vocab(main, {table}, row)")
        for term, doc in conn.execute(f"SELECT term, doc FROM temp.v_{table}"):
            docs[str(term)] = docs.get(str(term), 0) + int(doc)
    conn.close()
    words = sorted(
        (
            w
            for w, n in docs.items()
            if COMMON_TERM_CAP // 5 <= n < COMMON_TERM_CAP
            and w.isascii()
            and w.isalpha()
            and len(w) >= 4
        ),
        key=lambda w: (-docs[w], w),
    )
    picked = [words[i * len(words) // 12] for i in range(12)] if len(words) >= 12 else []
    questions = [
        f"what did we say about {a}, {b} and {c}"
        for a, b, c in zip(picked[0::3], picked[1::3], picked[2::3], strict=True)
    ]
    cache.write_text(json.dumps(questions))
    return questions


def _query_sets(path: Path) -> dict[str, list[str]]:
    """`QUERIES` and, when the archive has such words, the mid-frequency questions."""
    mid = _mid_frequency(path)
    return {**QUERIES, **({MID_FREQUENCY: mid} if mid else {})}


class _Slow(bs.SyntheticEmbedder):
    """The synthetic embedder, taking ``ms`` per query embedding."""

    def __init__(self, ms: float) -> None:
        super().__init__()
        self.ms = ms

    def embed_query(self, text: str) -> list[float]:
        if self.ms:
            time.sleep(self.ms / 1000)
        return super().embed_query(text)


class _Fast(_Slow):
    """The fast tier's stand-in: the same synthetic vectors under another model name."""

    name = "synthetic:bench-fast-384"


def _tiers_copy(path: Path) -> Path:
    """``path``'s copy with its older half of vectors relabelled as the fast model's."""
    import shutil
    import sqlite3

    from hermes_memory_sessions.vectors import index_model

    tiers = path.with_name(f"{path.stem}_tiers.db")
    if tiers.exists():
        return tiers
    partial = tiers.with_suffix(".partial")
    shutil.copyfile(path, partial)
    conn = sqlite3.connect(partial)
    with conn:
        ids = [int(r[0]) for r in conn.execute("SELECT message_id FROM hm_vectors ORDER BY 1")]
        conn.execute(
            "UPDATE hm_vectors SET model = ? WHERE message_id < ?",
            (index_model(_Fast.name), ids[len(ids) // 2]),
        )
    conn.close()
    partial.rename(tiers)
    return tiers


def _time(store: object, queries: list[str]) -> float:
    started = time.perf_counter()
    for q in queries:
        json.loads(session_search({"query": q}, store=store))  # type: ignore[arg-type]
    return 1000 * (time.perf_counter() - started) / len(queries)


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[max(0, min(len(values) - 1, round(q * (len(values) - 1))))]


def _pg_archives(dsn: str, messages: int, query_ms: float) -> tuple[object, object]:
    """(lexical, hybrid) PostgreSQL archives of the corpus in schema bench_hybrid_<N>."""
    from urllib.parse import quote

    import numpy as np
    import psycopg

    from hermes_memory_postgres import PostgresSessionArchive
    from hermes_memory_postgres.archive._vector_rows import EMBEDDABLE
    from hermes_memory_sessions.vectors import index_model

    schema = f"bench_hybrid_{messages}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'.encode())
    sep = "&" if "?" in dsn else "?"
    scoped = f"{dsn}{sep}options={quote(f'-csearch_path={schema}')}"
    owner = "bench"
    lexical = PostgresSessionArchive(scoped, owner=owner, read_budget_s=60, write_budget_s=600)
    have = lexical.stats().get("messages", 0)
    if not have:
        started = time.perf_counter()
        with lexical.bulk_loading():
            sessions = list(bs.Corpus().sessions(messages))
            batches = (sessions[i : i + 250] for i in range(0, len(sessions), 250))
            lexical.bulk_import_batches(batches, streams=2)
        print(f"PostgreSQL: {messages:,} messages loaded in {time.perf_counter() - started:.0f} s")
    model = index_model(_Slow.name)

    def fill(conn: psycopg.Connection) -> int:
        if conn.execute("SELECT 1 FROM hm_vectors WHERE owner = %s LIMIT 1", (owner,)).fetchone():
            return 0
        ids = [
            int(r["id"])
            for r in conn.execute(
                f"SELECT m.id FROM hm_messages m WHERE m.owner = %s AND {EMBEDDABLE}", (owner,)
            )
        ]
        rng = np.random.default_rng(bs.SEED)
        centroids = rng.standard_normal((64, 384))
        with conn.cursor().copy("COPY hm_vectors (owner, message_id, model, vec) FROM STDIN") as cp:
            for start in range(0, len(ids), 50_000):
                part = ids[start : start + 50_000]
                v = centroids[rng.integers(0, 64, len(part))] + rng.standard_normal(
                    (len(part), 384)
                )
                scale = np.abs(v).max(axis=1, keepdims=True) / 127.0
                q = np.clip(np.rint(v / scale), -127, 127).astype(np.int8)
                head = scale.astype("<f4")
                for i, mid in enumerate(part):
                    cp.write_row((owner, mid, model, head[i].tobytes() + q[i].tobytes()))
        return len(ids)

    started = time.perf_counter()
    written = lexical._write(fill)
    # Statistics for the planner: hm_vectors was analysed while empty (at the end of the
    # bulk load); unanalysed, its lookups by id may be planned as sequential scans.
    lexical._write(lambda conn: conn.execute("ANALYZE hm_vectors, hm_messages"))
    if written:
        print(f"PostgreSQL: {written:,} synthetic vectors in {time.perf_counter() - started:.0f} s")
    hyb = PostgresSessionArchive(scoped, owner=owner, read_budget_s=60)
    hyb.attach_embedder(_Slow(query_ms), background=False)
    hyb.vector_index.refresh()
    return lexical, hyb


def _open(
    messages: int, dsn: str | None, query_ms: float, tiers: bool = False
) -> list[tuple[str, object]]:
    """The archives timed: SQLite lexical and hybrid (and PostgreSQL's with ``dsn``, the
    two tiers with ``tiers``)."""
    path = bs.DATA / f"sessions_{messages}.db"
    lexical = SessionStore(path)
    hyb = SessionStore(path, embedder=_Slow(query_ms), embed_in_background=False)
    assert hyb.vector_index is not None
    hyb.vector_index.refresh()  # load the codes once (as the worker does at start)
    methods: list[tuple[str, object]] = [("lexical", lexical), ("hybrid", hyb)]
    if tiers:
        two = SessionStore(
            _tiers_copy(path),
            embedder=_Slow(query_ms),
            fast_embedder=_Fast(query_ms),
            embed_in_background=False,
        )
        assert two.vector_index is not None
        assert hasattr(two.vector_index, "tiers")
        two.vector_index.refresh()
        methods.append(("hybrid, two tiers", two))
    if dsn:
        pg_lexical, pg_hybrid = _pg_archives(dsn, messages, query_ms)
        methods += [("PostgreSQL lexical", pg_lexical), ("PostgreSQL hybrid", pg_hybrid)]
    return methods


def _worker(args: argparse.Namespace) -> int:
    """Serve timings: one JSON request per line (method, query), one time (ms) per line."""
    methods = dict(_open(args.messages, args.dsn, args.query_ms, args.tiers))
    for store in methods.values():
        for queries in _query_sets(bs.DATA / f"sessions_{args.messages}.db").values():
            _time(store, queries)  # warm: every query once
    print(json.dumps({"ready": sorted(methods)}), flush=True)
    for line in sys.stdin:
        ask = json.loads(line)
        print(json.dumps(_time(methods[ask["method"]], [ask["query"]])), flush=True)
    for store in methods.values():
        store.close()  # type: ignore[attr-defined]
    return 0


class _Version:
    """A worker process timing one version of the packages."""

    def __init__(self, args: argparse.Namespace, source: Path | None) -> None:
        env = dict(os.environ)
        if source is not None:
            paths = [str(p) for p in sorted((source / "packages").glob("*/src"))]
            env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")])
        cmd = [sys.executable, __file__, "--worker", "--messages", str(args.messages)]
        cmd += ["--query-ms", str(args.query_ms)] + (["--dsn", args.dsn] if args.dsn else [])
        cmd += ["--tiers"] if args.tiers else []
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        assert self.proc.stdout is not None
        ready = self.proc.stdout.readline()
        if not ready:
            raise SystemExit(f"worker for {source or 'the working tree'} failed to start")
        self.methods: list[str] = json.loads(ready)["ready"]

    def time(self, method: str, query: str) -> float:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"method": method, "query": query}) + "\n")
        self.proc.stdin.flush()
        return float(json.loads(self.proc.stdout.readline()))

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=120)


def _export(rev: str, into: Path) -> Path:
    """The ``packages/`` of git revision ``rev`` of this repository, under ``into``."""
    root = Path(__file__).resolve().parent.parent
    tar = subprocess.run(
        ["git", "-C", str(root), "archive", rev, "packages"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=tar, check=True)
    return into


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--query-ms",
        type=float,
        default=0.0,
        help="stand-in query embedding time (sleep, GIL released as in real inference); the"
        " default model took about 21 ms at load 1 (docs/benchmarks.md)",
    )
    ap.add_argument("--dsn", default=None, help="also PostgreSQL (see the module doc)")
    ap.add_argument("--baseline", default=None, help="also git revision REV (module doc)")
    ap.add_argument("--tiers", action="store_true", help="also the two tiers (module doc)")
    ap.add_argument("--in-process", action="store_true", help="also in one process (module doc)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    path = bs.DATA / f"sessions_{args.messages}.db"
    if not path.exists():
        print(f"{path} missing: run bench_sessions.py --messages {args.messages} --build-only")
        return 2
    if args.worker:
        return _worker(args)
    count, secs = bs.add_synthetic_vectors(path)
    print(f"{args.messages:,}-message archive, {count:,} synthetic vectors ({secs:.1f} s to write)")
    if args.tiers:
        print(f"two tiers: {_tiers_copy(path).name} (older half in the fast tier)")
    if args.dsn:  # load (first run) and analyse before any worker opens it
        for store in _pg_archives(args.dsn, args.messages, args.query_ms):
            store.close()  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory() as tmp:
        versions = [("current", _Version(args, None))]
        if args.baseline:
            versions.append((args.baseline, _Version(args, _export(args.baseline, Path(tmp)))))
        rng = random.Random(bs.SEED)
        times: dict[str, dict[tuple[str, str], list[float]]] = {}
        turn = 0
        sets = _query_sets(path)
        for _ in range(args.rounds):
            for label, queries in sets.items():
                order = queries[:]
                rng.shuffle(order)
                for q in order:
                    for method in versions[0][1].methods:
                        # Which version goes first alternates: the second one finds the
                        # pages and caches the first one warmed for the same query.
                        turn += 1
                        for name, version in versions[:: 1 if turn % 2 else -1]:
                            per = times.setdefault(label, {}).setdefault((method, name), [])
                            per.append(version.time(method, q))
        for _, version in versions:
            version.close()
    print(f"{'query set':<14}{'method':<22}{'version':<12}{'p50 ms':>9}{'p95 ms':>9}")
    for label, per in times.items():
        for (method, name), ts in per.items():
            print(f"{label:<14}{method:<22}{name:<12}{_pct(ts, 0.5):9.1f}{_pct(ts, 0.95):9.1f}")
    if args.in_process:
        _in_process(args)
    return 0


def _in_process(args: argparse.Namespace) -> None:
    """Every query timed ``args.rounds`` times in this process, per method (module doc)."""
    methods = _open(args.messages, args.dsn, args.query_ms, args.tiers)
    sets = _query_sets(bs.DATA / f"sessions_{args.messages}.db")
    queries = [q for qs in sets.values() for q in qs]
    print(f"in one process, {len(queries)} queries x {args.rounds}, after one warm-up pass:")
    for method, store in methods:
        _time(store, queries)
        per: dict[str, list[float]] = {label: [] for label in sets}
        for _ in range(args.rounds):
            for label, qs in sets.items():
                per[label] += [_time(store, [q]) for q in qs]
        ts = [t for values in per.values() for t in values]
        print(
            f"  {method:<22} p50 {_pct(ts, 0.5):6.1f}  p95 {_pct(ts, 0.95):6.1f}"
            f"  slowest {max(ts):6.1f} ms"
        )
        for label, values in per.items():  # a deployment runs one backend: each set alone
            print(f"    {label:<20} p50 {_pct(values, 0.5):6.1f}  p95 {_pct(values, 0.95):6.1f}")
        store.close()  # type: ignore[attr-defined]


if __name__ == "__main__":
    raise SystemExit(main())
