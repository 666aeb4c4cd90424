"""Compact vector storage: one int8 per dimension plus a scale, and scoring over it.

A 384-dimension float vector takes 1,540 bytes as float32 and 388 bytes here; cosine
rankings survive (measured on our English + Chinese check set: see
``tests/vectors/test_quant.py`` and ``docs/benchmarks.md``).

Blob format (what `quantize_int8` returns, what a vector index stores)::

    bytes 0..3   scale, float32 little-endian (max |x| / 127)
    bytes 4..    one signed byte per dimension: round(x / scale)

Symmetric per-vector quantisation: the scale cancels out of a cosine, so `cosine_scores`
needs only the int8 part; `dequantize_int8` gives back ``q * scale``.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = [
    "cosine_int8",
    "cosine_scores",
    "dequantize_int8",
    "dot_int8",
    "int8_matrix",
    "quantize_int8",
]

_HEADER = struct.Struct("<f")
_MIN_SCALE = float(np.finfo(np.float32).tiny)  # smallest normal float32
_MAX_PEAK = float(np.finfo(np.float32).max)


def quantize_int8(vector: Sequence[float]) -> bytes:
    """``vector`` as a scale followed by one signed byte per dimension.

    Each value comes back within half a step (``max |x| / 254``); a vector whose values are
    all below about 1e-36 in size is stored as the zero vector.

    :raises ValueError: empty, holds NaN / infinity, or values beyond the float32 range.
    """
    array = np.asarray(vector, dtype=np.float64)
    if array.ndim != 1 or array.size == 0:
        raise ValueError("quantize_int8 needs a non-empty one-dimensional vector")
    if not np.all(np.isfinite(array)):
        raise ValueError("quantize_int8: the vector holds NaN or infinity")
    peak = float(np.max(np.abs(array)))
    if peak > _MAX_PEAK:
        raise ValueError("quantize_int8: values beyond the float32 range")
    scale = float(np.float32(peak / 127.0))  # what the blob stores, so dequantising agrees
    if scale < _MIN_SCALE:  # |x| below ~1e-36 everywhere: stored as the zero vector
        return _HEADER.pack(1.0) + bytes(array.size)
    quantized = np.clip(np.rint(array / scale), -127, 127).astype(np.int8)
    return _HEADER.pack(scale) + quantized.tobytes()


def _split(blob: bytes) -> tuple[float, npt.NDArray[np.int8]]:
    if not isinstance(blob, bytes | bytearray | memoryview) or len(blob) < _HEADER.size + 1:
        raise ValueError("not an int8 vector blob (too short)")
    (scale,) = _HEADER.unpack_from(blob)
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError("not an int8 vector blob (bad scale)")
    return scale, np.frombuffer(blob, dtype=np.int8, offset=_HEADER.size)


def dequantize_int8(blob: bytes) -> list[float]:
    """The float vector a blob stands for (each value within ``scale / 2`` of the original).

    :raises ValueError: not a blob made by `quantize_int8`.
    """
    scale, values = _split(blob)
    result: list[float] = (values.astype(np.float64) * scale).tolist()
    return result


def dot_int8(a: bytes, b: bytes) -> float:
    """Dot product of the vectors two blobs stand for.

    :raises ValueError: a bad blob, or different lengths.
    """
    scale_a, qa = _split(a)
    scale_b, qb = _split(b)
    if qa.shape != qb.shape:
        raise ValueError(f"vector lengths differ: {qa.size} and {qb.size}")
    return float(np.dot(qa.astype(np.int32), qb.astype(np.int32))) * scale_a * scale_b


def cosine_int8(a: bytes, b: bytes) -> float:
    """Cosine similarity of two blobs (0.0 when either is all zeros)."""
    _, qa = _split(a)
    _, qb = _split(b)
    if qa.shape != qb.shape:
        raise ValueError(f"vector lengths differ: {qa.size} and {qb.size}")
    ia, ib = qa.astype(np.int32), qb.astype(np.int32)
    denominator = math.sqrt(float(np.dot(ia, ia)) * float(np.dot(ib, ib)))
    return float(np.dot(ia, ib)) / denominator if denominator else 0.0


def int8_matrix(blobs: Sequence[bytes]) -> npt.NDArray[np.float32]:
    """Blobs as rows of a float32 matrix, each row unit length (zero rows stay zero).

    Build it once per scan (or cache it) and score many queries with ``matrix @ query``.

    :raises ValueError: a bad blob, or blobs of different lengths.
    """
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    rows = [_split(blob)[1] for blob in blobs]
    width = rows[0].size
    if any(row.size != width for row in rows):
        raise ValueError("blobs hold vectors of different lengths")
    matrix = np.stack(rows).astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    normalized: npt.NDArray[np.float32] = (matrix / np.where(norms > 0, norms, 1.0)).astype(
        np.float32
    )
    return normalized


def cosine_scores(query: Sequence[float], blobs: Sequence[bytes]) -> list[float]:
    """Cosine similarity of a float query with each blob, in order.

    :raises ValueError: a bad blob or a length mismatch.
    """
    if not blobs:
        return []
    matrix = int8_matrix(blobs)
    q = np.asarray(query, dtype=np.float32)
    if q.ndim != 1 or q.size != matrix.shape[1]:
        raise ValueError(f"query has {q.size} dimensions, the blobs {matrix.shape[1]}")
    norm = float(np.linalg.norm(q))
    if norm == 0 or not math.isfinite(norm):
        return [0.0] * len(blobs)
    scores: list[float] = (matrix @ (q / norm)).astype(float).tolist()
    return scores
