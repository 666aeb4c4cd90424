"""Helpers shared by the session-archive tests (no fixtures: plain functions)."""

from __future__ import annotations

import hashlib
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["SCRIPT", "HashedWordsEmbedder", "WordsEmbedder", "run_cli"]

#: The installed console script of this environment.
SCRIPT = shutil.which("hermes-memory", path=str(Path(sys.executable).parent))


def run_cli(home: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``hermes-memory ARGS`` on ``home`` through the console script, without progress bars
    and without the caller's ``HERMES_*``/``MEM0_*`` settings (the static model's row cache,
    ``HERMES_MEMORY_CACHE_DIR``, is kept: building rows is slow)."""
    assert SCRIPT is not None
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HERMES_", "MEM0_")) or k == "HERMES_MEMORY_CACHE_DIR"
    }
    env.update(HERMES_HOME=str(home), HERMES_MEMORY_NO_PROGRESS="1", PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [SCRIPT, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


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


class HashedWordsEmbedder:
    """Words hashed into ``dim`` dimensions, unit length: a deterministic embedder, no model."""

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
