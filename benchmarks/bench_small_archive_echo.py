"""Cost of the context-echo check of small archives (`hybrid.SMALL_POOL_OWN_TEXT`).

Below 20 dense candidates, a semantic-only message whose context scored at least as high
is embedded alone at query time (`hybrid._context_echoes`). This prints the discovery
latency with the check off and on, per query, on a small archive written here (our own
text; no external data), with the default embedder, and which rows the check removed.

    .venv/bin/python benchmarks/bench_small_archive_echo.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import hermes_memory_sessions.search._hybrid as hybrid
from hermes_memory_sessions import SessionStore
from hermes_memory_sessions.search import discover

CONVERSATIONS = [
    ("intro", ["Hi, I'm Lin. I maintain the company's MySQL backups. Be brief.", "Hello Lin!"]),
    ("fail", ["数据库备份昨晚又失败了，磁盘满了", "先清理旧的备份文件，再把保留期缩短。"]),
    ("job", ["The backup job dumps the database at 02:00 to the NAS.", "Understood."]),
    ("tea", ["I switched from coffee to green tea this month.", "Less caffeine, good."]),
    ("trip", ["我们下个月去京都，酒店已经订好了", "记得带上护照和充电器。"]),
]
QUERIES = ["备份", "how do we keep copies of the database", "旅行要带什么", "what do I drink now"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from hermes_memory_vectors import default_embedder

    embedder = default_embedder(threads=1)
    with tempfile.TemporaryDirectory() as tmp:
        store = SessionStore(Path(tmp) / "a.db", embedder=embedder, embed_in_background=False)
        for sid, turns in CONVERSATIONS:
            store.create_session(sid, source="cli")
            for i, text in enumerate(turns):
                store.append_message(sid, "user" if i == 0 else "assistant", text)
        store.embed_pending()
        print(f"{'query':40} {'off ms':>8} {'on ms':>8}  removed")
        for query in QUERIES:
            times: dict[bool, list[float]] = {False: [], True: []}
            rows: dict[bool, set[int]] = {}
            for _ in range(args.repeat):
                for flag in (False, True):
                    hybrid.SMALL_POOL_OWN_TEXT = flag
                    start = time.perf_counter()
                    found = discover(store, query, limit=10)
                    times[flag].append((time.perf_counter() - start) * 1000)
                    rows[flag] = {int(r["id"]) for r in (found.rows if found else [])}
            off, on = statistics.median(times[False]), statistics.median(times[True])
            print(f"{query:40} {off:8.1f} {on:8.1f}  {sorted(rows[False] - rows[True])}")
        hybrid.SMALL_POOL_OWN_TEXT = True
        store.close()


if __name__ == "__main__":
    main()
