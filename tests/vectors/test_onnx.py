"""OnnxEmbedder on a real model directory (all-MiniLM-L6-v2, int8 ONNX) and bad directories."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from vectors_helpers import recall_at_1

from hermes_memory_vectors import EmbedderConfigError, EmbedderUnavailable, embedder_from_config

onnx_embedder = pytest.importorskip("hermes_memory_vectors._onnx_embedder")
OnnxEmbedder = onnx_embedder.OnnxEmbedder


def cos(a, b) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_real_model_embeds_and_normalises(minilm_dir: Path, check_set) -> None:
    embedder = OnnxEmbedder(minilm_dir, threads=1)
    assert embedder.name == "onnx:all-MiniLM-L6-v2-int8"
    assert embedder.pooling == "mean"  # from 1_Pooling/config.json
    assert embedder.query_prefix == embedder.document_prefix == ""
    vectors = embedder.embed_documents(["the cat sat on the mat", "a feline rested on a rug"])
    assert embedder.dim == 384
    assert all(math.isclose(float(np.linalg.norm(v)), 1.0, rel_tol=1e-5) for v in vectors)
    assert cos(vectors[0], vectors[1]) > 0.5
    # Measured 1.00 on the English half (0.25 on Chinese: an English-only model).
    assert recall_at_1(embedder, check_set["en"]) >= 0.9


def test_padding_and_batch_size_do_not_change_vectors(minilm_dir: Path) -> None:
    texts = ["short", "a considerably longer sentence that forces padding of the short one"]
    alone = [OnnxEmbedder(minilm_dir, batch_size=1).embed_documents([t])[0] for t in texts]
    batched = OnnxEmbedder(minilm_dir, batch_size=8).embed_documents(texts)
    for a, b in zip(alone, batched, strict=True):
        assert cos(a, b) > 0.9999


def test_cls_pooling_and_no_normalisation(minilm_dir: Path) -> None:
    mean = OnnxEmbedder(minilm_dir).embed_query("pooling matters")
    cls = OnnxEmbedder(minilm_dir, pooling="cls", normalize=False)
    assert cls.name.endswith("+cls")
    raw = cls.embed_query("pooling matters")
    assert abs(float(np.linalg.norm(raw)) - 1.0) > 0.01  # not normalised
    assert cos(raw, mean) < 0.99  # first token, not the average


def test_prefixes_are_put_before_the_text(minilm_dir: Path) -> None:
    with_prefix = OnnxEmbedder(minilm_dir, query_prefix="query: ", document_prefix="passage: ")
    plain = OnnxEmbedder(minilm_dir)
    q = with_prefix.embed_query("find the invoice")
    assert q == pytest.approx(plain.embed_documents(["query: find the invoice"])[0], abs=1e-6)
    d = with_prefix.embed_documents(["the invoice"])[0]
    assert d == pytest.approx(plain.embed_query("passage: the invoice"), abs=1e-6)


def test_e5_directories_and_sentence_transformers_prompts(minilm_dir: Path, tmp_path: Path) -> None:
    e5 = tmp_path / "multilingual-e5-small"
    shutil.copytree(minilm_dir, e5, symlinks=True)
    embedder = OnnxEmbedder(e5)
    assert (embedder.query_prefix, embedder.document_prefix) == ("query: ", "passage: ")
    not_e5 = tmp_path / "bge5-small"  # "e5" inside a word is not an e5 model
    shutil.copytree(minilm_dir, not_e5, symlinks=True)
    assert OnnxEmbedder(not_e5).query_prefix == ""
    prompts = tmp_path / "nomic"
    shutil.copytree(minilm_dir, prompts, symlinks=True)
    (prompts / "config_sentence_transformers.json").write_text(
        json.dumps({"prompts": {"query": "search_query: ", "document": "search_document: "}})
    )
    (prompts / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    embedder = OnnxEmbedder(prompts)
    assert (embedder.query_prefix, embedder.document_prefix) == (
        "search_query: ",
        "search_document: ",
    )
    assert embedder.pooling == "cls"
    assert OnnxEmbedder(prompts, pooling="mean", query_prefix="").query_prefix == ""


def test_long_and_odd_text(minilm_dir: Path) -> None:
    embedder = OnnxEmbedder(minilm_dir, max_length=32)
    vectors = embedder.embed_documents(["word " * 5000, "", "\x00\ud800", "中文" * 100])
    assert len(vectors) == 4
    assert all(len(v) == 384 and all(math.isfinite(x) for x in v) for v in vectors)


def test_bad_directories_are_clear(tmp_path: Path, minilm_dir: Path) -> None:
    with pytest.raises(EmbedderUnavailable, match="not a directory"):
        OnnxEmbedder(tmp_path / "missing")
    with pytest.raises(EmbedderUnavailable, match=r"no model\.onnx"):
        OnnxEmbedder(tmp_path)
    (tmp_path / "model.onnx").write_bytes(b"not a model")
    with pytest.raises(EmbedderUnavailable, match=r"no tokenizer\.json"):
        OnnxEmbedder(tmp_path)
    (tmp_path / "tokenizer.json").write_text("{broken")
    with pytest.raises(EmbedderUnavailable, match=r"cannot read .*tokenizer\.json"):
        OnnxEmbedder(tmp_path)
    shutil.copy(minilm_dir / "tokenizer.json", tmp_path / "tokenizer.json")
    with pytest.raises(EmbedderUnavailable, match=r"cannot load .*model\.onnx"):
        OnnxEmbedder(tmp_path)
    with pytest.raises(ValueError, match="pooling"):
        OnnxEmbedder(minilm_dir, pooling="max")


def test_config_onnx(minilm_dir: Path, tmp_path: Path) -> None:
    embedder = embedder_from_config(
        {
            "embedder": "onnx",
            "embedder_model": str(minilm_dir),
            "embedder_threads": 2,
            "embedder_batch_size": "16",
        }
    )
    assert isinstance(embedder, OnnxEmbedder)
    assert (embedder.threads, embedder.batch_size) == (2, 16)
    with pytest.raises(EmbedderConfigError, match=r"sessions.embedder_model must name the model"):
        embedder_from_config({"embedder": "onnx"})
    with pytest.raises(EmbedderConfigError, match=r"sessions.embedder_model must be a directory"):
        embedder_from_config({"embedder": "onnx", "embedder_model": str(tmp_path / "nope")})
