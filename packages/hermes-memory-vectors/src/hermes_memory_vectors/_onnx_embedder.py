"""Your own ONNX embedding model: a directory with ``model.onnx`` and ``tokenizer.json``.

Needs the ``onnx`` extra (``pip install 'hermes-memory-vectors[onnx]'``: onnxruntime and
Hugging Face tokenizers). Any BERT-style encoder exported to ONNX works (all-MiniLM,
bge-small, e5-small, gte-small, ...): the model takes ``input_ids`` and ``attention_mask``
(and ``token_type_ids`` if it declares it) and returns token states ``[batch, seq, dim]`` or
a pooled ``[batch, dim]``.

What the directory may also hold, read when present (sentence-transformers' layout):

- ``1_Pooling/config.json``: ``pooling_mode_cls_token`` / ``pooling_mode_mean_tokens``;
- ``config_sentence_transformers.json``: ``prompts.query`` / ``prompts.passage`` (or
  ``document``) prefixes.

Otherwise pooling is mean and, for a directory whose name contains ``e5``, the prefixes are
``"query: "`` / ``"passage: "``. Arguments override all of this.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from hermes_memory_vectors._base import EmbedderUnavailable, check_vectors, clean_text, clean_texts

__all__ = ["OnnxEmbedder", "Pooling"]

Pooling = Literal["mean", "cls"]


class OnnxEmbedder:
    """Embeddings from a local ONNX model directory, on the CPU.

    :param model_dir: directory with ``model.onnx`` (or ``onnx/model.onnx``) and
        ``tokenizer.json``.
    :param pooling: ``"mean"`` (attention-masked average) or ``"cls"`` (first token);
        default from ``1_Pooling/config.json``, else mean.
    :param normalize: L2-normalise vectors (default true; cosine = dot product).
    :param query_prefix: text put before each query (e5: ``"query: "``).
    :param document_prefix: text put before each document (e5: ``"passage: "``).
    :param max_length: tokens per text, longer texts are cut (default 512).
    :param batch_size: texts per inference call.
    :param threads: onnxruntime intra-op threads (``None``: onnxruntime's default).
    :param name: identifier stored with the vectors (default ``onnx:<directory name>``).
    :raises EmbedderUnavailable: the extra is not installed, or the directory, model or
        tokenizer cannot be used (the message names the file).
    """

    def __init__(
        self,
        model_dir: str | Path,
        *,
        pooling: Pooling | None = None,
        normalize: bool = True,
        query_prefix: str | None = None,
        document_prefix: str | None = None,
        max_length: int = 512,
        batch_size: int = 32,
        threads: int | None = None,
        name: str | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if max_length < 2:
            raise ValueError("max_length must be at least 2")
        if threads is not None and threads < 1:
            raise ValueError("threads must be at least 1")
        if pooling not in (None, "mean", "cls"):
            raise ValueError(f"pooling must be 'mean' or 'cls', got {pooling!r}")
        try:
            import onnxruntime as ort  # type: ignore[import-untyped, import-not-found, unused-ignore]
            from tokenizers import Tokenizer  # type: ignore[import-not-found, unused-ignore]
        except ImportError as exc:
            raise EmbedderUnavailable(
                "the onnx embedder needs onnxruntime and tokenizers: "
                "pip install 'hermes-memory-vectors[onnx]'"
            ) from exc
        directory = Path(model_dir).expanduser()
        if not directory.is_dir():
            raise EmbedderUnavailable(f"onnx embedder: {directory} is not a directory")
        candidates = (directory / "model.onnx", directory / "onnx" / "model.onnx")
        model_file = next((p for p in candidates if p.is_file()), None)
        if model_file is None:
            raise EmbedderUnavailable(f"onnx embedder: no model.onnx in {directory}")
        tokenizer_file = directory / "tokenizer.json"
        if not tokenizer_file.is_file():
            raise EmbedderUnavailable(f"onnx embedder: no tokenizer.json in {directory}")

        st_pooling, st_query, st_doc = _sentence_transformers_hints(directory)
        is_e5 = re.search(r"(^|[^a-z0-9])e5([^a-z0-9]|$)", directory.name.lower()) is not None
        self.pooling: Pooling = pooling or st_pooling or "mean"
        self.query_prefix = (
            query_prefix if query_prefix is not None else st_query or ("query: " if is_e5 else "")
        )
        self.document_prefix = (
            document_prefix
            if document_prefix is not None
            else st_doc or ("passage: " if is_e5 else "")
        )
        self.normalize = normalize
        self.batch_size = batch_size
        self.threads = threads
        self.model_dir = directory

        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_file))
        except Exception as exc:
            raise EmbedderUnavailable(
                f"onnx embedder: cannot read {tokenizer_file}: {exc}"
            ) from exc
        tokenizer.enable_truncation(max_length=max_length)
        pad_id = tokenizer.token_to_id("[PAD]")
        if pad_id is None:
            pad_id = tokenizer.token_to_id("<pad>") or 0
        tokenizer.enable_padding(pad_id=pad_id)
        self._tokenizer = tokenizer

        options = ort.SessionOptions()
        if threads is not None:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
        try:
            self._session = ort.InferenceSession(
                str(model_file), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise EmbedderUnavailable(f"onnx embedder: cannot load {model_file}: {exc}") from exc
        self._inputs = {i.name for i in self._session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - self._inputs
        if missing:
            raise EmbedderUnavailable(
                f"onnx embedder: {model_file} lacks input(s) {', '.join(sorted(missing))}"
            )
        output = self._session.get_outputs()[0]
        self._output_name = output.name
        self._lock = threading.Lock()
        declared = output.shape[-1] if output.shape else None
        self._dim: int | None = declared if isinstance(declared, int) else None
        suffix = f"+{self.pooling}" if self.pooling != "mean" else ""
        self.name = name or f"onnx:{directory.name}{suffix}"

    def __repr__(self) -> str:
        return f"OnnxEmbedder({str(self.model_dir)!r}, pooling={self.pooling!r})"

    @property
    def dim(self) -> int:
        """Vector length (read from the model, or learnt from one inference)."""
        if self._dim is None:
            self._dim = len(self.embed_query("dimension probe"))
        return self._dim

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed documents with `document_prefix`, `batch_size` texts per inference."""
        cleaned = [self.document_prefix + t for t in clean_texts(texts)]
        out: list[list[float]] = []
        for start in range(0, len(cleaned), self.batch_size):
            out.extend(self._run(cleaned[start : start + self.batch_size]))
        self._dim = check_vectors(out, len(cleaned), self._dim, self.name) or self._dim
        return out

    def embed_query(self, text: str) -> list[float]:
        """Embed one query with `query_prefix`."""
        out = self._run([self.query_prefix + clean_text(text)])
        self._dim = check_vectors(out, 1, self._dim, self.name)
        return out[0]

    def _run(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
        try:
            with self._lock:
                result = self._session.run([self._output_name], feeds)[0]
        except Exception as exc:
            raise EmbedderUnavailable(f"{self.name}: inference failed: {exc}") from exc
        states = np.asarray(result, dtype=np.float32)
        if states.ndim == 3:
            if self.pooling == "cls":
                pooled = states[:, 0, :]
            else:
                weights = mask[:, :, None].astype(np.float32)
                pooled = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        elif states.ndim == 2:
            pooled = states
        else:
            raise EmbedderUnavailable(f"{self.name}: unexpected output shape {states.shape}")
        if self.normalize:
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            pooled = pooled / np.maximum(norms, 1e-12)
        rows: list[list[float]] = pooled.astype(float).tolist()
        return rows


def _sentence_transformers_hints(directory: Path) -> tuple[Pooling | None, str | None, str | None]:
    pooling: Pooling | None = None
    query: str | None = None
    document: str | None = None
    pooling_config = _read_json(directory / "1_Pooling" / "config.json")
    if pooling_config.get("pooling_mode_cls_token") is True:
        pooling = "cls"
    elif pooling_config.get("pooling_mode_mean_tokens") is True:
        pooling = "mean"
    prompts = _read_json(directory / "config_sentence_transformers.json").get("prompts")
    if isinstance(prompts, dict):
        q = prompts.get("query")
        d = prompts.get("passage", prompts.get("document"))
        query = q if isinstance(q, str) else None
        document = d if isinstance(d, str) else None
    return pooling, query, document


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
