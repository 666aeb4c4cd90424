"""Session archive: SQLite beside PostgreSQL in one run.

Ingest (single appends and bulk: SQLite import_session, PostgreSQL COPY), discovery p50/p95
(word AND, natural language, 1- and 2-character CJK) and scroll, on a synthetic corpus of
N messages (English with some Chinese). The bulk rows also give the CPU per message of the
benchmark process and (PostgreSQL on this host, /proc readable) of the server backends serving
the database. Needs ``--dsn`` or HERMES_MEMORY_PG_DSN (or
HERMES_MEMORY_TEST_PG_DSN); writes rows under a fresh owner, deleted at the end unless
``--keep``. The corpus is generated before the clock starts (ingest measures the archive, not
the text generator). PostgreSQL's bulk ingest is ``bulk_import_batches`` (batches of 250 sessions, two in
flight) inside ``bulk_loading()``: into an empty
database (a database of its own: ``createdb -O hermes_test bench1m``) the full-text indexes
are built once at the end, and that build is inside the measured time.

    uv run --all-packages python benchmarks/bench_postgres.py --messages 1000000 \
        --dsn postgresql://hermes_test:hermes_test@127.0.0.1:5432/bench1m
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
import uuid
from pathlib import Path

from hermes_memory_postgres import PostgresSessionArchive
from hermes_memory_sessions.storage import SessionStore

WORDS = [
    "deploy",
    "server",
    "database",
    "backup",
    "gateway",
    "billing",
    "invoice",
    "customer",
    "ticket",
    "refund",
    "python",
    "rust",
    "docker",
    "kubernetes",
    "cluster",
    "network",
    "latency",
    "metrics",
    "dashboard",
    "alert",
    "holiday",
    "flight",
    "hotel",
    "museum",
    "recipe",
    "garden",
    "bicycle",
    "guitar",
    "concert",
    "marathon",
]
CJK = "数据库服务器部署网关账单客户退款北京上海东京天气会议旅行酒店博物馆花园音乐"


def text(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(6, 18))
    if rng.random() < 0.2:
        start = rng.randrange(len(CJK) - 6)
        words.insert(rng.randrange(len(words)), CJK[start : start + rng.randint(2, 6)])
    return " ".join(words) + f" w{rng.randrange(50000)}"


def corpus(n: int, per_session: int = 40, seed: int = 7):
    rng = random.Random(seed)
    t = 1_700_000_000.0
    for s in range(n // per_session):
        msgs = []
        for i in range(per_session):
            t += 1.0
            msgs.append(
                {
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": text(rng),
                    "timestamp": t,
                }
            )
        yield {"id": f"s{s:07d}", "source": "cli", "started_at": msgs[0]["timestamp"]}, msgs


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def timed(fn, reps):
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def server_cpu_s(archive) -> float | None:
    """CPU seconds of the server processes serving this benchmark's database, when the
    server runs on this host and /proc is readable (None otherwise): the backends of the
    database's connections (the pool's) - enough for the bulk load, which runs on them."""
    if not hasattr(archive, "db"):
        return None
    pids = archive.db.run(
        lambda c: [
            int(r["pid"])
            for r in c.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
            ).fetchall()
        ]
    )
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        total += (int(fields[11]) + int(fields[12])) / tick  # utime + stime
    return total


def bench(archive, name, n, bulk_fn, rows):
    report = {}
    items = list(corpus(n))
    server0 = server_cpu_s(archive)
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    build_s = bulk_fn(archive, items)
    report["bulk msgs/s"] = n / (time.perf_counter() - t0)
    report["bulk: index build at the end, s"] = build_s if build_s is not None else "-"
    report["bulk client CPU µs/msg"] = (time.process_time() - cpu0) / n * 1e6
    server1 = server_cpu_s(archive)
    if server0 is not None and server1 is not None:
        report["bulk server CPU µs/msg"] = (server1 - server0) / n * 1e6
    else:
        report["bulk server CPU µs/msg"] = "-"
    print(f"{name}: {report}  load average {os.getloadavg()}", flush=True)
    del items
    if hasattr(archive, "db"):  # PostgreSQL: statistics for the planner before querying
        archive.db.run(lambda c: c.execute("ANALYZE hm_messages"))
        archive.db.run(lambda c: c.execute("ANALYZE hm_sessions"))
    archive.create_session("single")
    k = 2000
    t0 = time.perf_counter()
    for i in range(k):
        archive.append_message("single", "user", f"single append {i} deploy")
    report["append msgs/s"] = k / (time.perf_counter() - t0)
    rng = random.Random(3)
    queries = {
        "word AND": lambda: archive.find_hits(" ".join(rng.sample(WORDS, 2)), limit=24),
        "natural": lambda: archive.find_hits(
            "what did we say about the " + " and ".join(rng.sample(WORDS, 3)),
            any_terms=True,
            limit=50,
        ),
        "CJK 1 char": lambda: archive.find_hits(rng.choice(CJK), limit=24),
        "CJK 2 chars": lambda: archive.find_hits(
            CJK[(i := rng.randrange(len(CJK) - 2)) : i + 2], limit=24
        ),
    }
    for label, fn in queries.items():
        fn()
        xs = timed(fn, 60)
        report[f"{label} p50/p95 ms"] = f"{pct(xs, 50):.1f} / {pct(xs, 95):.1f}"
    sids = [f"s{rng.randrange(n // 40):07d}" for _ in range(60)]
    anchors = [archive.get_messages(s)[20]["id"] for s in sids[:60]]
    it = iter(range(10**9))
    xs = timed(
        lambda: archive.get_messages_around(sids[(j := next(it)) % 60], anchors[j % 60], 5), 60
    )
    report["scroll p50/p95 ms"] = f"{pct(xs, 50):.1f} / {pct(xs, 95):.1f}"
    rows.append((name, report))


def sqlite_bulk(store, items):
    for s, msgs in items:
        store.import_session(s, msgs)


def pg_bulk(archive, items):
    """Returns the seconds spent building the deferred indexes at the end (measured)."""
    with archive.bulk_loading() as deferred:
        print(f"PostgreSQL bulk load, indexes deferred: {deferred}", flush=True)
        batches = (items[start : start + 250] for start in range(0, len(items), 250))
        archive.bulk_import_batches(batches, streams=2)
        t_build = time.perf_counter()
    return time.perf_counter() - t_build


def _cell(v) -> str:
    if not isinstance(v, float):
        return str(v)
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--dsn", default=None, help="PostgreSQL DSN (default: the environment)")
    ap.add_argument("--keep", action="store_true", help="leave the PostgreSQL rows behind")
    ap.add_argument(
        "--only", choices=("sqlite", "postgresql"), help="run one backend (default: both)"
    )
    args = ap.parse_args()
    dsn = (
        args.dsn
        or os.environ.get("HERMES_MEMORY_PG_DSN")
        or os.environ.get("HERMES_MEMORY_TEST_PG_DSN")
    )
    rows: list = []
    print(f"load average before: {os.getloadavg()}", flush=True)
    if args.only != "postgresql":
        with tempfile.TemporaryDirectory() as tmp:
            store = SessionStore(Path(tmp) / "bench.db")
            bench(store, "SQLite", args.messages, sqlite_bulk, rows)
            store.close()
    if dsn and args.only != "sqlite":
        pg = PostgresSessionArchive(
            dsn, owner=f"bench-{uuid.uuid4().hex[:8]}", write_budget_s=600, read_budget_s=60
        )
        pg.count_open_sessions()
        try:
            bench(pg, "PostgreSQL", args.messages, pg_bulk, rows)
        finally:  # leave no bench rows behind (they would slow the next run's indexes)
            for table in () if args.keep else ("hm_messages", "hm_sessions", "hm_term_df"):
                pg.db.run(
                    lambda c, t=table: c.execute(f"DELETE FROM {t} WHERE owner = %s", (pg.owner,)),
                    budget=600,
                )
            pg.close()
    print(f"load average after: {os.getloadavg()}", flush=True)
    keys = list(rows[0][1])
    print(f"| {args.messages:,} messages | " + " | ".join(r[0] for r in rows) + " |")
    print("|---|" + "---|" * len(rows))
    for k in keys:
        vals = [r[1][k] for r in rows]
        print(f"| {k} | " + " | ".join(_cell(v) for v in vals) + " |")


if __name__ == "__main__":
    main()
