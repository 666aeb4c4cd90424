"""Helpers the vectors tests import by name (a conftest module cannot be imported safely:
every test folder has one and they share the module name)."""

from __future__ import annotations


def recall_at_1(embedder, pairs: list[list[str]]) -> float:
    """Share of queries whose own passage is the nearest among all passages of ``pairs``."""
    import numpy as np

    passages = np.array(embedder.embed_documents([p for _, p in pairs]))
    hits = 0
    for i, (query, _) in enumerate(pairs):
        scores = passages @ np.array(embedder.embed_query(query))
        hits += int(np.argmax(scores) == i)
    return hits / len(pairs)
