"""Hybrid recall's vector side: the archive's vector index, its embedder and worker.

Importing this package imports no numerical library: `VectorIndex` (numpy, the ``vectors``
extra) loads on first use, so the archive and the CLI work without the extra.
"""

from typing import TYPE_CHECKING

from hermes_memory_sessions.vectors._archive import ArchiveVectors
from hermes_memory_sessions.vectors._coverage import EMBEDDABLE, coverage_counts, index_model
from hermes_memory_sessions.vectors._embedding_config import (
    attach_configured_embedder,
    await_embedder,
    build_embedder,
    build_fast_embedder,
    configured_embedder_section,
    configured_fast_section,
    recall_state,
)
from hermes_memory_sessions.vectors._embedding_worker import EmbeddingWorker
from hermes_memory_sessions.vectors._schema import ensure_vector_schema, has_vector_table
from hermes_memory_sessions.vectors._tiers import TIER_NAMES, TieredIndex, tier_coverage

if TYPE_CHECKING:
    from hermes_memory_sessions.vectors._binary_codes import (
        CENTER_SAMPLE,
        LOAD_CHUNK,
        BinaryCodes,
        CodeCache,
        unit_rows,
        upgraded,
    )
    from hermes_memory_sessions.vectors._index import (
        CATCH_UP,
        CONTEXT_BEFORE,
        QUEUE_SIZE,
        RESCORE,
        WORKER_BATCH,
        DenseHit,
        EmbedderLike,
        VectorIndex,
        document_text,
        hit_chunks,
        quantize,
    )

__all__ = [
    "CATCH_UP",
    "CENTER_SAMPLE",
    "CONTEXT_BEFORE",
    "EMBEDDABLE",
    "LOAD_CHUNK",
    "QUEUE_SIZE",
    "RESCORE",
    "TIER_NAMES",
    "WORKER_BATCH",
    "ArchiveVectors",
    "BinaryCodes",
    "CodeCache",
    "DenseHit",
    "EmbedderLike",
    "EmbeddingWorker",
    "TieredIndex",
    "VectorIndex",
    "attach_configured_embedder",
    "await_embedder",
    "build_embedder",
    "build_fast_embedder",
    "configured_embedder_section",
    "configured_fast_section",
    "coverage_counts",
    "document_text",
    "ensure_vector_schema",
    "has_vector_table",
    "hit_chunks",
    "index_model",
    "quantize",
    "recall_state",
    "tier_coverage",
    "unit_rows",
    "upgraded",
]


#: Names of the index module (numpy) other backends build on (PostgreSQL's index).
_INDEX_NAMES = frozenset(
    {
        "CATCH_UP",
        "CONTEXT_BEFORE",
        "QUEUE_SIZE",
        "RESCORE",
        "WORKER_BATCH",
        "DenseHit",
        "EmbedderLike",
        "document_text",
        "hit_chunks",
        "quantize",
    }
)
_CODE_NAMES = frozenset(
    {"CENTER_SAMPLE", "LOAD_CHUNK", "BinaryCodes", "CodeCache", "unit_rows", "upgraded"}
)


def __getattr__(name: str) -> object:
    # numpy is optional: the index module loads when its name is first asked for.
    if name == "VectorIndex":
        from hermes_memory_sessions.vectors._index import VectorIndex

        return VectorIndex
    if name in _INDEX_NAMES:  # read at each access: benchmarks and tests change them
        from hermes_memory_sessions.vectors import _index

        return getattr(_index, name)
    if name in _CODE_NAMES:
        from hermes_memory_sessions.vectors import _binary_codes

        return getattr(_binary_codes, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
