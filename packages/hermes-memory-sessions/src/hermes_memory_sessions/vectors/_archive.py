"""The embedding and discovery methods of `SessionStore` (mixed into it).

Importing this module imports no numerical library: the vector index
(`hermes_memory_sessions.vectors._index`, numpy) is loaded only when an embedder is attached.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from hermes_memory_sessions.vectors._coverage import coverage_counts

if TYPE_CHECKING:
    from hermes_memory_sessions.vectors._index import VectorIndex
    from hermes_memory_sessions.vectors._tiers import TieredIndex

__all__ = ["ArchiveVectors"]

logger = logging.getLogger(__name__)


class ArchiveVectors:
    """`SessionStore`'s vector methods; ``vector_index`` is None without an embedder."""

    vector_index: VectorIndex | TieredIndex | None = None
    #: Why recall is not what was configured although it is hybrid (the quality model
    #: cannot run here: the fast tier alone answers); "" otherwise.
    recall_note: str = ""

    def _attach_embedder(self, embedder: Any, *, background: bool, fast: Any = None) -> None:
        """Build the vector index for ``embedder`` (called by ``SessionStore.__init__``);
        with ``fast`` too, the two tiers (`hermes_memory_sessions.vectors._tiers`).

        :raises TypeError: an embedder lacks ``name``, ``dim``, ``embed_documents`` or
            ``embed_query``.
        :raises ImportError: numpy is not installed (``pip install
            'hermes-memory-sessions[vectors]'``).
        """
        for one in (embedder, fast):
            _check_embedder(one)
        self.vector_index = _index_type(self)(self, embedder, background=background)
        if fast is not None:
            self._attach_fast(fast, background=background)

    def _attach_fast(self, fast: Any, *, background: bool) -> bool:
        """Add the fast tier to an attached single-model index (the configured embedders
        load one after the other: the quality model first, so the first query waits for
        it alone). Returns whether the fast tier was added (not when no index is attached,
        it already has tiers, or ``fast`` is the same model)."""
        _check_embedder(fast)
        index = self.vector_index
        if index is None or hasattr(index, "tiers") or str(fast.name) == str(index.embedder.name):
            return False
        from hermes_memory_sessions.vectors._tiers import TieredIndex

        index.backfill_when_idle = True  # its worker reads the flag at each idle step
        fast_index = _index_type(self)(self, fast, background=False, above=index.model)
        fast_index.backfill_on_start = True
        if background:
            fast_index.worker.start()
        self.vector_index = TieredIndex(index, fast_index)
        return True

    def _notify_vectors(self, ids: Sequence[int]) -> None:
        """Hand new message ids to the background embedder (no-op without one)."""
        index = self.vector_index
        if index is not None and ids:
            index.notify(ids)

    def _close_vectors(self) -> None:
        index = self.vector_index
        if index is not None:
            index.close()

    def embed_pending(
        self,
        limit: int | None = None,
        *,
        batch_size: int = 32,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Embed messages that have no vector yet (blocking, newest first); returns how many.

        For backfills (``hermes-memory sessions embed``) and tests; new messages are embedded
        in the background anyway. Resumable (each batch is committed). Returns 0 when no
        embedder is attached.

        :raises hermes_memory_vectors.EmbedderUnavailable: the embedder failed.
        """
        index = self.vector_index
        if index is None:
            return 0
        return index.embed_pending(limit, batch_size=batch_size, progress=progress)

    def vector_coverage(self) -> dict[str, Any]:
        """``{"model", "embedded", "total", "other_models", ...}`` of the vector index.

        ``total`` counts the messages that get vectors (user/assistant with content). Without
        an embedder attached, ``model`` is None and ``embedded`` counts every stored vector.
        With two tiers, ``model``/``embedded`` are the quality tier's and ``tiers`` lists
        both (`hermes_memory_sessions.vectors._tiers.tier_coverage`); ``note`` says why
        recall uses the fast model only, when it does.
        """
        index = self.vector_index
        if index is not None:
            found = index.coverage()
            if self.recall_note:
                found["note"] = self.recall_note
            return found
        read_with: Callable[..., dict[str, Any]] = getattr(self, "read_with")  # noqa: B009
        return read_with(coverage_counts, None)

    def discover_messages(
        self,
        query: str,
        *,
        limit: int = 20,
        role_filter: Sequence[str] | None = ("user", "assistant"),
        exclude_sources: Sequence[str] | None = None,
    ) -> list[dict[str, Any]]:
        """Messages ranked by ``session_search``'s discovery policy, best first.

        Implicit AND, then the natural-language fallback; fused with dense similarity when an
        embedder is attached. Rows: ``id, session_id, role, timestamp, tool_name, source,
        model, session_started, match`` (``"and"``, ``"any_terms"`` or ``"semantic"``).
        Never raises for a malformed query (``[]``).
        """
        from hermes_memory_sessions.search._hybrid import discover

        found = discover(
            self, query, limit=limit, role_filter=role_filter, exclude_sources=exclude_sources
        )
        return found.rows if found is not None else []


def _check_embedder(embedder: Any) -> None:
    if embedder is None:
        return
    missing = [
        attr
        for attr in ("name", "dim", "embed_documents", "embed_query")
        if not hasattr(embedder, attr)
    ]
    if missing:
        raise TypeError(
            f"embedder {type(embedder).__name__} lacks {', '.join(missing)}"
            " (see hermes_memory_vectors.Embedder)"
        )


def _index_type(archive: Any) -> Any:
    """The backend's `VectorIndex` class (``_vector_index_type`` of the archive, else
    SQLite's); raises ImportError with the install command when numpy is missing."""
    own = getattr(archive, "_vector_index_type", None)
    try:
        if own is not None:
            return own()
        from hermes_memory_sessions.vectors._index import VectorIndex
    except ImportError as exc:  # numpy missing
        from hermes_memory_core.installer import install_command

        raise ImportError(
            "an embedder needs the vector index's dependencies: "
            + install_command("hermes-memory-sessions[vectors]")
        ) from exc
    return VectorIndex
