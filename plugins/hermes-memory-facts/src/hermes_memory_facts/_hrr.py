"""Holographic reduced representations over unit-modulus complex vectors (needs NumPy).

An *atom* is a deterministic vector of ``dim`` unit phasors ``e^{iθ}`` (θ from SHA-256 of the
word, so the same word gives the same atom on every machine). The algebra:

* ``bind(a, b) = a * b`` (elementwise complex product; phases add);
* ``unbind(m, k) = m * conj(k)`` — exact inverse of binding by a unit-modulus key;
* ``bundle(v1, …, vn) = v1 + … + vn`` (complex sum, no renormalisation).

Because binding distributes over the sum, ``unbind(bundle(bind(k1, v1), …), k1)`` is ``v1``
plus ``n - 1`` terms that look like random phasor vectors; a clean-up against a codebook
(`cleanup`) then recovers ``v1`` with high probability while ``n`` stays well below ``dim``
(`CAPACITY_RATIO`). A circular-mean bundle (renormalising every element to unit modulus, as
the reference implementation does) throws the magnitudes away and with them this property.

`similarity` is the cosine ``Re<a, b> / (|a| |b|)`` in ``[-1, 1]``: about 0 for unrelated
vectors, 1 for identical ones.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Vector = NDArray[np.complex64]
else:
    Vector = Any

__all__ = [
    "BLOB_MAGIC",
    "CAPACITY_RATIO",
    "ROLE_CONTENT",
    "ROLE_ENTITY",
    "atom",
    "available",
    "bind",
    "bundle",
    "capacity",
    "cleanup",
    "from_blob",
    "similarity",
    "to_blob",
    "unbind",
    "zeros",
]

#: Blob header of a stored vector: magic, then little-endian complex64 values.
BLOB_MAGIC = b"HRC1"

#: Items a bundle of ``dim`` dimensions holds with >= 99% clean-up accuracy against a
#: codebook of 1,000 items: ``dim / CAPACITY_RATIO`` (measured in tests/facts/test_facts_hrr.py).
CAPACITY_RATIO = 16

ROLE_CONTENT = "__role_content__"
ROLE_ENTITY = "__role_entity__"


def available() -> bool:
    """Whether NumPy is installed (checked without importing it)."""
    return importlib.util.find_spec("numpy") is not None


def capacity(dim: int) -> int:
    """Items one bundle of ``dim`` dimensions is documented to hold (see `CAPACITY_RATIO`)."""
    return max(1, dim // CAPACITY_RATIO)


@lru_cache(maxsize=8192)
def _phases(word: str, dim: int) -> bytes:
    out = bytearray()
    block = 0
    while len(out) < dim * 2:
        out += hashlib.sha256(f"{word}:{block}".encode()).digest()
        block += 1
    return bytes(out[: dim * 2])


def atom(word: str, dim: int) -> Vector:
    """The deterministic unit-phasor vector of ``word``."""
    import numpy as np

    raw = np.frombuffer(_phases(word, dim), dtype="<u2").astype(np.float64)
    theta = raw * (2.0 * math.pi / 65536.0)
    out: Vector = np.exp(1j * theta).astype(np.complex64)
    return out


def zeros(dim: int) -> Vector:
    """The empty bundle."""
    import numpy as np

    return np.zeros(dim, dtype=np.complex64)


def bind(a: Vector, b: Vector) -> Vector:
    """Associate ``a`` with ``b`` (elementwise product)."""
    return a * b


def unbind(memory: Vector, key: Vector) -> Vector:
    """Undo `bind` by the unit-modulus ``key``: ``memory * conj(key)``."""
    import numpy as np

    return memory * np.conj(key)


def bundle(*vectors: Vector) -> Vector:
    """Superpose vectors by complex sum (`zeros` for none)."""
    import numpy as np

    if not vectors:
        raise ValueError("bundle() needs at least one vector")
    out: Vector = np.sum(np.stack(vectors), axis=0).astype(np.complex64)
    return out


def similarity(a: Vector, b: Vector) -> float:
    """Cosine similarity ``Re<a, b> / (|a| |b|)`` in ``[-1, 1]`` (0 when either is zero)."""
    import numpy as np

    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.real(np.vdot(b, a))) / (na * nb)


def cleanup(noisy: Vector, codebook: dict[str, Vector]) -> list[tuple[str, float]]:
    """Codebook entries ranked by similarity to ``noisy``, best first."""
    scored = [(name, similarity(noisy, vec)) for name, vec in codebook.items()]
    scored.sort(key=lambda item: item[1], reverse=True)
    return scored


def to_blob(vector: Vector) -> bytes:
    """``vector`` as a stored blob (`BLOB_MAGIC` + complex64 little-endian)."""
    import numpy as np

    return BLOB_MAGIC + np.asarray(vector, dtype="<c8").tobytes()


def from_blob(blob: bytes, dim: int) -> Vector | None:
    """The vector in ``blob``, or None when it is not one of ``dim`` dimensions."""
    import numpy as np

    if not blob.startswith(BLOB_MAGIC) or len(blob) != len(BLOB_MAGIC) + 8 * dim:
        return None
    return np.frombuffer(blob[len(BLOB_MAGIC) :], dtype="<c8").astype(np.complex64)
