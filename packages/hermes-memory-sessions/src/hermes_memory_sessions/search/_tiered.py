"""The dense side of discovery over two tiers (`hermes_memory_sessions.vectors._tiers`).

Each tier searches the messages it holds (each message is in one tier) with the query
embedded by its own model. Cosines of two models are not comparable: the default model
scores unrelated text around 0.8, the static one far lower. Each tier's cosines are put on
one scale: a candidate's score is how many spreads it stands above the mean of its own
tier's candidates for this query (`CALIBRATION`; the query's similarities to the reference
texts were measured as the background too, and ranked worse). The two lists are merged by
that score into one dense list for the usual fusion. The transform is affine per tier, and
the fusion min-max-normalises the dense scores, so with one tier holding every message the ranking
is that tier's alone (tests/sessions/test_tiers.py checks both ends; a tier alone with
candidates keeps its raw cosines, so the ends are exact).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from hermes_memory_sessions.search._cjk import has_cjk
from hermes_memory_sessions.search._reference_rows import stored_reference_rows

__all__ = [
    "CALIBRATION",
    "TierPart",
    "TieredDense",
    "calibration",
    "reference_rows",
    "start_query",
    "tiered_dense",
]

logger = logging.getLogger(__name__)

#: How a tier's cosines are put on the common scale: ``"pool"`` (mean and spread of the
#: tier's own dense candidates, shipped), ``"reference"`` (mean and spread of the query's
#: similarities to the reference texts) or ``"minmax"`` (each tier's candidates min-max
#: normalised on their own). Chosen on two LoCoMo dev conversations (bench_tiers.py
#: --calibration, hybrid R@5 / R@10 with 25 % / 50 % of the messages in the quality tier):
#: pool 59.8 / 70.8, 62.6 / 72.4; reference 49.2 / 64.9, 55.7 / 69.2 (worse than the fast
#: tier alone, 61.1 / 70.3: the default model's candidates stand many more reference
#: spreads above the background than the static model's, so they crowd the static tier
#: out); minmax 59.0 / 68.6, 62.4 / 71.4 (docs/benchmarks.md).
CALIBRATION = "pool"
#: Reference rows embedded at run time (embedder name -> script -> unit rows; None when
#: the embedder failed): for models without stored reference vectors (the static model
#: embeds the reference texts in milliseconds).
_RUNTIME: dict[str, dict[str, npt.NDArray[np.float32]] | None] = {}


@dataclass(frozen=True)
class TierPart:
    """One tier's share of a query: its index, the query's vector in its model, its own
    dense candidates (raw cosines, best first) and its calibration ``(mean, spread)``."""

    index: Any
    vector: npt.NDArray[np.float32]
    hits: list[Any]
    scale: tuple[float, float]


@dataclass(frozen=True)
class TieredDense:
    """The merged dense candidates of a tiered index: ``hits`` (score: calibrated, best
    first, at most the pool), ``cosine`` (raw cosine per message id, in its own tier's
    model) and ``parts`` (per tier, for the similarity floors)."""

    hits: list[Any]
    cosine: dict[int, float]
    parts: tuple[TierPart, ...]


def reference_rows(index: Any) -> dict[str, npt.NDArray[np.float32]] | None:
    """Unit rows of the reference texts per script for ``index``'s embedder: the stored
    ones (the default model), else embedded once per process; None when impossible."""
    name = str(getattr(index.embedder, "name", ""))
    stored = stored_reference_rows(name)
    if stored:
        return stored
    if name not in _RUNTIME:
        from hermes_memory_sessions.search._reference_texts import REFERENCE_TEXTS

        try:
            rows: dict[str, npt.NDArray[np.float32]] | None = {}
            for script, texts in REFERENCE_TEXTS.items():
                matrix = np.asarray(index.embedder.embed_documents(list(texts)), np.float32)
                norms = np.linalg.norm(matrix, axis=1, keepdims=True)
                unit = matrix / np.where(norms > 0, norms, 1.0)
                rows[script] = unit.astype(np.float32)  # type: ignore[index]
        except Exception as exc:  # no calibration: raw cosines (said in the log)
            logger.warning("session archive: reference texts not embedded by %s (%s)", name, exc)
            rows = None
        _RUNTIME[name] = rows
    return _RUNTIME[name]


def calibration(index: Any, vector: npt.NDArray[np.float32], script: str) -> tuple[float, float]:
    """``(mean, spread)`` of the query ``vector``'s cosines to the reference texts of
    ``script`` in ``index``'s model; ``(0, 1)`` (raw cosines) without reference rows."""
    rows = reference_rows(index)
    matrix = rows.get(script) if rows else None
    if matrix is None or matrix.shape[1] != vector.size:
        return 0.0, 1.0
    cos = matrix @ vector
    return float(cos.mean()), max(float(cos.std()), 1e-6)


def _scale(index: Any, vector: Any, script: str, hits: list[Any]) -> tuple[float, float]:
    if CALIBRATION == "reference":
        return calibration(index, vector, script)
    cos = np.asarray([float(h.score) for h in hits], dtype=np.float64)
    if cos.size == 0:
        return 0.0, 1.0
    if CALIBRATION == "minmax":
        return float(cos.min()), max(float(cos.max() - cos.min()), 1e-6)
    return float(cos.mean()), max(float(cos.std()), 1e-6)


def start_query(index: Any, query: str) -> Any:
    """``index.start_query(query)`` (the query's embedding, started on the index's thread);
    False for an index without it (it embeds when `tiered_dense` asks)."""
    start = getattr(index, "start_query", None)
    return False if start is None else start(query)


def tiered_dense(
    tiers: tuple[Any, ...],
    query: str,
    count: int,
    filters: dict[str, Any],
    started: list[Any] | None = None,
) -> TieredDense | None:
    """The dense candidates of ``tiers`` (best tier first) for ``query``, merged on one
    scale; None when no tier could embed the query (the search is lexical then). A tier
    whose search fails is left out (fail open). ``started``: per tier, the query embedding
    `start_query` started (else started here, every tier's before any is waited for: the
    fast model's time hides in the quality model's)."""
    script = "cjk" if has_cjk(query) else "latin"
    parts: list[TierPart] = []
    if started is None or len(started) != len(tiers):
        started = [start_query(index, query) for index in tiers]
    for index, future in zip(tiers, started, strict=True):
        vector = index.query_vector(query) if future is False else index.query_result(future)
        if vector is None:
            continue
        try:
            hits = list(index.search(vector, limit=count, **filters))
        except Exception as exc:
            logger.warning("session archive: dense search of %s failed (%s)", index.model, exc)
            hits = []
        parts.append(TierPart(index, vector, hits, _scale(index, vector, script, hits)))
    if not parts:
        return None
    merged: dict[int, Any] = {}
    cosine: dict[int, float] = {}
    alone = sum(bool(p.hits) for p in parts) <= 1
    for part in parts:
        # One tier with candidates (none caught up yet, or all of them): its own cosines,
        # bit for bit what a single-model archive fuses.
        mean, spread = (0.0, 1.0) if alone else part.scale
        for hit in part.hits:
            mid = int(hit.row["id"])
            if mid in merged:
                continue  # a message caught between two tiers: the better tier's vector
            merged[mid] = type(hit)(hit.row, (float(hit.score) - mean) / spread)
            cosine[mid] = float(hit.score)
    ranked = sorted(merged.values(), key=lambda h: (-h.score, int(h.row["id"])))[:count]
    kept = {int(h.row["id"]): cosine[int(h.row["id"])] for h in ranked}
    return TieredDense(ranked, kept, tuple(parts))
