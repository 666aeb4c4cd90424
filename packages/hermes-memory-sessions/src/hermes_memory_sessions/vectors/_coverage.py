"""Which messages get a vector, the model name stored with each, and how many have one.

A leaf both the store's vector methods (`_archive`) and the vector index (`_index`) read;
it imports no numerical library.
"""

from __future__ import annotations

import sqlite3
from typing import Any

__all__ = ["CONTEXT_BEFORE", "EMBEDDABLE", "coverage_counts", "index_model"]

#: SQL condition (over ``messages m``) of the messages that get a vector: user and assistant
#: turns with text (the roles ``session_search`` searches by default).
EMBEDDABLE = "m.role IN ('user', 'assistant') AND m.content IS NOT NULL AND trim(m.content) != ''"


#: Conversational messages before a message that are embedded with it. Measured on LoCoMo
#: dev (hybrid recall@5 / @10): 0 → 61.0 / 71.3, 1 → 65.8 / 75.6, 2 → 66.4 / 76.0.
CONTEXT_BEFORE = 2


def index_model(embedder_name: str, window: int | None = None) -> str:
    """The ``model`` stored with each vector: the embedder's name and the context window
    (default `CONTEXT_BEFORE`); vectors made with another window count as another model:
    ignored by search, then re-embedded."""
    return f"{embedder_name}+ctx{CONTEXT_BEFORE if window is None else window}"


def coverage_counts(conn: sqlite3.Connection, model: str | None) -> dict[str, Any]:
    """``{"model", "embedded", "total", "other_models", "by_model"}`` over a connection.

    ``total`` counts the messages that get vectors; ``embedded`` those with a vector of
    ``model`` (every stored vector when ``model`` is None); ``by_model`` vectors per model
    name. Works on a read-only connection and imports no numerical library.
    """
    total = int(conn.execute(f"SELECT COUNT(*) FROM messages m WHERE {EMBEDDABLE}").fetchone()[0])  # noqa: S608
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'hm_vectors'"
    ).fetchone()
    by_model: dict[str, int] = {}
    if exists:
        by_model = {
            str(r[0]): int(r[1])
            for r in conn.execute("SELECT model, COUNT(*) FROM hm_vectors GROUP BY model")
        }
    if model is None:
        embedded, other = sum(by_model.values()), 0
    else:
        embedded = by_model.get(model, 0)
        other = sum(n for name, n in by_model.items() if name != model)
    return {
        "model": model,
        "embedded": embedded,
        "total": total,
        "other_models": other,
        "by_model": by_model,
    }
