"""Helpers shared by the session-archive tests (a unique module name: never ``conftest``)."""

from __future__ import annotations

from collections.abc import Sequence


class WordsEmbedder:
    """Each word a fixed direction in ``dim`` dimensions: deterministic, no model."""

    name = "test-words:v1"

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim

    def _vector(self, text: str) -> list[float]:
        v = [0.0] * self.dim
        for word in text.lower().replace("?", " ").replace(".", " ").split():
            v[sum(ord(c) * (i + 1) for i, c in enumerate(word)) % self.dim] += 1.0
        return v

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)
