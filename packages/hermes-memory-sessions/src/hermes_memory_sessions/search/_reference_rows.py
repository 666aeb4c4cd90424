"""The reference texts' stored vectors, as unit rows per script (the background of
semantic-only hits and the scale of a tier's cosines; see `hermes_memory_sessions.search
._hybrid.small_pool_floors` and `hermes_memory_sessions.search._tiered`)."""

from __future__ import annotations

from typing import Any

__all__ = ["reference_digest", "stored_reference_rows"]


def reference_digest() -> str:
    """SHA-256 of the reference texts (what `_reference_vectors` was built from)."""
    import hashlib
    import json

    from hermes_memory_sessions.search._reference_texts import REFERENCE_TEXTS

    return hashlib.sha256(json.dumps(REFERENCE_TEXTS, ensure_ascii=False).encode()).hexdigest()


_REFERENCE_ROWS: dict[str, dict[str, Any]] = {}


def stored_reference_rows(name: str) -> dict[str, Any] | None:
    """Unit rows of the reference texts per script for embedder ``name`` (None: none)."""
    if name in _REFERENCE_ROWS:
        return _REFERENCE_ROWS[name]
    import base64

    from hermes_memory_sessions.search import _reference_vectors as ref
    from hermes_memory_sessions.vectors._binary_codes import unit_rows

    stored = ref.VECTORS.get(name)
    if stored is None or reference_digest() != ref.DIGEST:
        return None
    rows: dict[str, Any] = {}
    for script, b64 in stored.items():
        raw = base64.b64decode(b64)
        width = len(raw) // len(_texts(script))
        rows[script] = unit_rows([raw[i : i + width] for i in range(0, len(raw), width)])
    _REFERENCE_ROWS[name] = rows
    return rows


def _texts(script: str) -> tuple[str, ...]:
    from hermes_memory_sessions.search._reference_texts import REFERENCE_TEXTS

    return REFERENCE_TEXTS[script]
