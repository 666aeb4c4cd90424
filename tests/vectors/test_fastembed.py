"""FastEmbedEmbedder through fastembed's own classes, offline.

fastembed downloads catalogue models from a hub at run time, which this test machine cannot
reach. What runs here: a model registered with ``TextEmbedding.add_custom_model`` and loaded
from a local directory (``specific_model_path``), i.e. fastembed's real tokenizer loading,
onnxruntime session and pooling; and the failure path for a model that is not cached.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hermes_memory_vectors import EmbedderUnavailable, embedder_from_config

fastembed = pytest.importorskip("fastembed")
from fastembed.common.model_description import ModelSource, PoolingType  # noqa: E402

from hermes_memory_vectors._fastembed_embedder import FastEmbedEmbedder  # noqa: E402
from hermes_memory_vectors._onnx_embedder import OnnxEmbedder  # noqa: E402

CUSTOM = "hermes-test/all-MiniLM-L6-v2-int8"


@pytest.fixture(scope="module")
def custom_model() -> str:
    try:
        fastembed.TextEmbedding.add_custom_model(
            model=CUSTOM,
            pooling=PoolingType.MEAN,
            normalization=True,
            sources=ModelSource(hf=CUSTOM),
            dim=384,
            model_file="model.onnx",
        )
    except ValueError as exc:  # already registered by an earlier module in this process
        if "already registered" not in str(exc):
            raise
    return CUSTOM


def test_same_vectors_as_our_onnx_embedder(
    custom_model: str, minilm_dir: Path, tmp_path: Path
) -> None:
    embedder = FastEmbedEmbedder(
        custom_model,
        specific_model_path=str(minilm_dir),
        cache_dir=str(tmp_path),
        threads=1,
        batch_size=2,
    )
    assert embedder.dim == 384
    assert embedder.name == f"fastembed:{custom_model}"
    assert embedder.query_prefix == ""
    texts = ["the cat sat on the mat", "部署新版本", "", "third batch item"]
    ours = OnnxEmbedder(minilm_dir).embed_documents(texts)
    theirs = embedder.embed_documents(texts)
    assert len(theirs) == 4
    for a, b in zip(ours, theirs, strict=True):
        assert float(np.dot(a, b)) > 0.9999
    assert float(np.dot(embedder.embed_query("a cat"), ours[0])) > 0.3
    assert embedder.embed_documents([]) == []


def test_e5_names_get_prefixes(minilm_dir: Path, tmp_path: Path) -> None:
    name = "hermes-test/multilingual-e5-lookalike"
    try:
        fastembed.TextEmbedding.add_custom_model(
            model=name,
            pooling=PoolingType.MEAN,
            normalization=True,
            sources=ModelSource(hf=name),
            dim=384,
            model_file="model.onnx",
        )
    except ValueError as exc:
        if "already registered" not in str(exc):
            raise
    embedder = FastEmbedEmbedder(name, specific_model_path=str(minilm_dir), cache_dir=str(tmp_path))
    assert (embedder.query_prefix, embedder.document_prefix) == ("query: ", "passage: ")
    plain = OnnxEmbedder(minilm_dir)
    assert float(np.dot(embedder.embed_query("x"), plain.embed_documents(["query: x"])[0])) > 0.9999
    doc = embedder.embed_documents(["y"])[0]
    assert float(np.dot(doc, plain.embed_documents(["passage: y"])[0])) > 0.9999
    assert float(np.dot(doc, plain.embed_documents(["y"])[0])) < 0.9999


def test_uncached_model_offline_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailable, match="fastembed could not load"):
        FastEmbedEmbedder(
            "sentence-transformers/all-MiniLM-L6-v2", cache_dir=str(tmp_path), local_files_only=True
        )
    with pytest.raises(EmbedderUnavailable, match="not-a-model"):
        embedder_from_config({"embedder": "fastembed", "embedder_model": "not-a-model/x"})
