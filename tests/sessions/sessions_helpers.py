"""Helpers of the session archive tests (import them; never from conftest)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence


class WordsEmbedder:
    """Words hashed into ``dim`` dimensions: a deterministic embedder, no model."""

    def __init__(self, dim: int = 64, name: str = "test-words:v1") -> None:
        self.dim = dim
        self.name = name

    def _vector(self, text: str) -> list[float]:
        v = [0.0] * self.dim
        for word in text.lower().split():
            v[int(hashlib.sha256(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / norm for x in v]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)
