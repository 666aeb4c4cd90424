"""Cost of reading CJK text the new way: the CJK-index document of a message (folding:
full-width to ASCII, Traditional to Simplified) and the parsing of a CJK question
(segmentation), beside the previous rules (no folding, no segmentation), in one run.

No data is read: the messages are built here (Simplified, Traditional, mixed with English
and full-width forms, 20-400 characters), repeated to reach a stable time.

    .venv/bin/python benchmarks/bench_cjk_fold.py [--n 3000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

import hermes_memory_sessions.search._cjk as cjk_mod
import hermes_memory_sessions.search._query as query_mod
from hermes_memory_sessions.search._cjk import cjk_index_text
from hermes_memory_sessions.search._cjk_text import fold
from hermes_memory_sessions.search._query import parse_query

SIMPLIFIED = [
    "昨晚数据库备份失败了，磁盘满了，需要扩容",
    "这周慢查询特别多，订单接口的 p99 延迟从200ms涨到了1.8秒",
    "我们终于从 MySQL 5.7 升级到 8.0 了，报表错乱了一次",
    "十月想带爸妈去日本玩十天，预算三万左右",
]
TRADITIONAL = [
    "資料庫備份已經恢復，記得檢查軟體版本",
    "我在準備申請美國的資訊工程碩士，托福考了 98 分",
    "簽證面試約在六月十二號，在台北的美國在台協會",
]
FULLWIDTH = ["报错码是ＡＢＣ１２３，重启后消失", "回程１０月１９日关西飞上海"]
QUESTIONS = ["数据库备份失败", "怎么恢复数据库备份", "慢查询延迟", "資料庫備份", "ＡＢＣ１２３"]


def _messages(n: int) -> list[str]:
    rng = random.Random(7)
    pool = SIMPLIFIED * 4 + TRADITIONAL + FULLWIDTH
    out = []
    for _ in range(n):
        parts = rng.sample(pool, k=rng.randint(1, 6))
        out.append(" ".join(parts))
    return out


def _us_per_call(fn: Callable[[str], object], items: list[str], rounds: int = 3) -> float:
    best = []
    for _ in range(rounds):
        start = time.perf_counter()
        for item in items:
            fn(item)
        best.append((time.perf_counter() - start) / len(items) * 1e6)
    return min(best)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=3000)
    args = ap.parse_args()
    messages = _messages(args.n)
    start = time.perf_counter()
    fold("資料庫")  # first use: imports OpenCC and loads its dictionaries
    first_fold = time.perf_counter() - start
    start = time.perf_counter()
    parse_query("数据库备份")  # first use: imports rjieba
    first_cut = time.perf_counter() - start
    chars = statistics.mean(len(m) for m in messages)
    new_doc = _us_per_call(cjk_index_text, messages)
    saved = cjk_mod.fold
    cjk_mod.fold = lambda text: text  # type: ignore[assignment]
    try:
        old_doc = _us_per_call(cjk_index_text, messages)
    finally:
        cjk_mod.fold = saved  # type: ignore[assignment]
    questions = QUESTIONS * 200
    new_parse = _us_per_call(parse_query, questions)
    saved_fold, saved_words = query_mod.fold, query_mod._cjk_words
    query_mod.fold = lambda text: text  # type: ignore[assignment]
    query_mod._cjk_words = lambda piece: [piece]  # type: ignore[assignment]
    try:
        old_parse = _us_per_call(parse_query, questions)
    finally:
        query_mod.fold, query_mod._cjk_words = saved_fold, saved_words  # type: ignore[assignment]
    print(f"{args.n} CJK messages, mean {chars:.0f} characters")
    print(f"first use: OpenCC {1000 * first_fold:.0f} ms, rjieba {1000 * first_cut:.0f} ms")
    print(f"{'':<34}{'previous':>10}{'now':>10}")
    print(f"{'CJK-index document, us/message':<34}{old_doc:10.1f}{new_doc:10.1f}")
    print(f"{'parse a CJK question, us':<34}{old_parse:10.1f}{new_parse:10.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
