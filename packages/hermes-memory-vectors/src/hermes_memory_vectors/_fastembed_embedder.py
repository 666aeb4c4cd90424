"""Models from fastembed's catalogue, downloaded and cached by fastembed on first use.

Needs the ``fastembed`` extra (``pip install 'hermes-memory-vectors[fastembed]'``). The
first construction of a model downloads it (tens to hundreds of MB) into fastembed's cache
(``cache_dir``, or ``FASTEMBED_CACHE_PATH``); later runs load it from there. On a machine
without network access use the bundled default embedder, or `OnnxEmbedder` on a directory
you copied, or pass ``specific_model_path`` (a directory holding the model's files).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from hermes_memory_vectors._base import EmbedderUnavailable, check_vectors, clean_text, clean_texts

__all__ = ["DEFAULT_FASTEMBED_MODEL", "FastEmbedEmbedder"]

#: Used when ``sessions.embedder_model`` is not set: fastembed's multilingual e5 model.
DEFAULT_FASTEMBED_MODEL = "intfloat/multilingual-e5-large"


class FastEmbedEmbedder:
    """A `fastembed.TextEmbedding` model behind the `Embedder` protocol.

    :param model_name: a name from ``TextEmbedding.list_supported_models()`` (or one added
        with ``TextEmbedding.add_custom_model``).
    :param cache_dir: where fastembed keeps downloaded models.
    :param threads: onnxruntime threads.
    :param batch_size: texts per inference call.
    :param query_prefix: / :param document_prefix: put before queries / documents; default
        ``"query: "`` / ``"passage: "`` for e5 models (fastembed does not add them), none
        otherwise.
    :param local_files_only: never download; use fastembed's cache only.
    :param specific_model_path: load the model files from this directory instead.
    :raises EmbedderUnavailable: fastembed is not installed, the name is unknown, or the
        model cannot be downloaded or loaded.
    """

    def __init__(
        self,
        model_name: str = DEFAULT_FASTEMBED_MODEL,
        *,
        cache_dir: str | None = None,
        threads: int | None = None,
        batch_size: int = 32,
        query_prefix: str | None = None,
        document_prefix: str | None = None,
        local_files_only: bool = False,
        specific_model_path: str | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if threads is not None and threads < 1:
            raise ValueError("threads must be at least 1")
        try:
            from fastembed import TextEmbedding  # type: ignore[import-not-found, unused-ignore]
        except ImportError as exc:
            raise EmbedderUnavailable(
                "the fastembed embedder needs fastembed: "
                "pip install 'hermes-memory-vectors[fastembed]'"
            ) from exc
        kwargs: dict[str, Any] = {}
        if local_files_only:
            kwargs["local_files_only"] = True
        if specific_model_path is not None:
            kwargs["specific_model_path"] = specific_model_path
        try:
            self._model = TextEmbedding(
                model_name=model_name, cache_dir=cache_dir, threads=threads, **kwargs
            )
            dim = int(self._model.embedding_size)
        except Exception as exc:
            raise EmbedderUnavailable(
                f"fastembed could not load {model_name!r}: {' '.join(str(exc).split())}"
            ) from exc
        is_e5 = re.search(r"(^|[^a-z0-9])e5([^a-z0-9]|$)", model_name.lower()) is not None
        default_query = "query: " if is_e5 else ""
        self.query_prefix = query_prefix if query_prefix is not None else default_query
        self.document_prefix = (
            document_prefix if document_prefix is not None else ("passage: " if is_e5 else "")
        )
        self.model_name = model_name
        self.batch_size = batch_size
        self.dim = dim
        self.name = f"fastembed:{model_name}"
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"FastEmbedEmbedder({self.model_name!r})"

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed documents with `document_prefix`."""
        cleaned = [self.document_prefix + t for t in clean_texts(texts)]
        if not cleaned:
            return []
        out = self._collect(lambda: self._model.embed(cleaned, batch_size=self.batch_size))
        check_vectors(out, len(cleaned), self.dim, self.name)
        return out

    def embed_query(self, text: str) -> list[float]:
        """Embed one query with `query_prefix`."""
        query = self.query_prefix + clean_text(text)
        out = self._collect(lambda: self._model.embed([query], batch_size=1))
        check_vectors(out, 1, self.dim, self.name)
        return out[0]

    def _collect(self, run: Any) -> list[list[float]]:
        try:
            with self._lock:
                vectors: Iterable[Any] = run()
                return [[float(x) for x in v] for v in vectors]
        except Exception as exc:
            raise EmbedderUnavailable(f"{self.name}: inference failed: {exc}") from exc
