"""Hybrid recall's vector side: the archive's vector index, its embedder and worker.

Importing this package imports no numerical library: `VectorIndex` (numpy, the ``vectors``
extra) loads on first use, so the archive and the CLI work without the extra.
"""

from typing import TYPE_CHECKING

from hermes_memory_sessions.vectors._archive import EMBEDDABLE, coverage_counts, index_model
from hermes_memory_sessions.vectors._embedding_config import (
    attach_configured_embedder,
    await_embedder,
    build_embedder,
    configured_embedder_section,
    recall_state,
)
from hermes_memory_sessions.vectors._schema import ensure_vector_schema, has_vector_table

if TYPE_CHECKING:
    from hermes_memory_sessions.vectors._index import VectorIndex

__all__ = [
    "EMBEDDABLE",
    "VectorIndex",
    "attach_configured_embedder",
    "await_embedder",
    "build_embedder",
    "configured_embedder_section",
    "coverage_counts",
    "ensure_vector_schema",
    "has_vector_table",
    "index_model",
    "recall_state",
]


def __getattr__(name: str) -> object:
    # numpy is optional: the index module loads when its name is first asked for.
    if name == "VectorIndex":
        from hermes_memory_sessions.vectors._index import VectorIndex

        return VectorIndex
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
