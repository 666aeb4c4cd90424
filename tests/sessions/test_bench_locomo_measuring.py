"""``benchmarks/bench_locomo.py`` measures what it claims: its dense and hybrid retrievers
really use the query embedding.

The archive embeds queries on a worker thread (``VectorIndex.query_vector``); the benchmark's
embedding cache is a SQLite connection, and a connection made on one thread raised
``ProgrammingError`` on the other: every query embedding failed, the dense retriever
returned nothing and the published hybrid figures could not be reproduced. This test runs
the benchmark's own `evaluate` on a tiny synthetic conversation (no LoCoMo data, no model:
a bag-of-words embedder) and checks that the dense side answers.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("numpy")

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_locomo.py"


def _load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_locomo_under_test", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


class BagOfWords:
    """A deterministic embedder: hashed word counts (similar words -> similar vectors)."""

    name = "test-bag-of-words"
    dim = 64

    def _vector(self, text: str) -> list[float]:
        out = [0.0] * self.dim
        for word in re.findall(r"\w+", text.lower()):
            out[hashlib.sha256(word.encode()).digest()[0] % self.dim] += 1.0
        out[0] += 0.01  # never the zero vector
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


def _conversation(bench: ModuleType) -> object:
    lines = [
        ("Ann", "user", "I adopted a golden retriever puppy named Biscuit"),
        ("Bob", "assistant", "Lovely, how old is the puppy?"),
        ("Ann", "user", "Twelve weeks, she chews every shoe in the flat"),
        ("Bob", "assistant", "My violin lessons start next Tuesday evening"),
        ("Ann", "user", "Which teacher did you pick for violin?"),
        ("Bob", "assistant", "Mrs Keller from the conservatory"),
    ]
    turns = [
        bench.Turn(f"D1:{i + 1}", speaker, role, f"{speaker}: {text}")
        for i, (speaker, role, text) in enumerate(lines)
    ]
    questions = [
        bench.Question("What is the name of Ann's retriever puppy?", 4, frozenset({"D1:1"})),
        bench.Question("Who teaches Bob the violin?", 4, frozenset({"D1:6"})),
    ]
    return bench.Conversation("synthetic", [bench.Session(1, 1_700_000_000.0, turns)], questions)


def test_dense_retriever_gets_query_embeddings_from_the_cache(tmp_path: Path) -> None:
    bench = _load_bench()
    embedder = bench.CachedEmbedder(
        BagOfWords, BagOfWords.name, BagOfWords.dim, cache_dir=tmp_path / "cache"
    )
    scores, _latency, _examples = bench.evaluate(
        [_conversation(bench)],
        [5, 10],
        0,
        embedder=embedder,
        weights=[bench.hybrid_mod.DENSE_WEIGHT],
        with_mem0=False,
        baselines=False,
    )
    assert embedder.query_failures == 0
    dense = scores[bench.DENSE]["all"]
    assert dense.n == 2
    # Six messages, k = 5: the dense side must have ranked something for every question.
    assert dense.pct(dense.any_, 5) == 100.0
    hybrid = scores[bench.HYBRID]["all"]
    assert hybrid.pct(hybrid.any_, 5) == 100.0
    embedder.cache.close()
