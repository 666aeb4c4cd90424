"""The embedding and discovery methods of `SessionStore` (mixed into it).

Importing this module imports no numerical library: the vector index
(`hermes_memory_sessions.vectors._index`, numpy) is loaded only when an embedder is attached.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_memory_sessions.vectors._index import VectorIndex

__all__ = ["CONTEXT_BEFORE", "EMBEDDABLE", "ArchiveVectors", "coverage_counts", "index_model"]

logger = logging.getLogger(__name__)

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


class ArchiveVectors:
    """`SessionStore`'s vector methods; ``vector_index`` is None without an embedder."""

    vector_index: VectorIndex | None = None

    def _attach_embedder(self, embedder: Any, *, background: bool) -> None:
        """Build the vector index for ``embedder`` (called by ``SessionStore.__init__``).

        :raises TypeError: ``embedder`` lacks ``name``, ``dim``, ``embed_documents`` or
            ``embed_query``.
        :raises ImportError: numpy is not installed (``pip install
            'hermes-memory-sessions[vectors]'``).
        """
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
        try:
            from hermes_memory_sessions.vectors._index import VectorIndex
        except ImportError as exc:  # numpy missing
            from hermes_memory_core.installer import install_command

            raise ImportError(
                "an embedder needs the vector index's dependencies: "
                + install_command("hermes-memory-sessions[vectors]")
            ) from exc
        self.vector_index = VectorIndex(self, embedder, background=background)  # type: ignore[arg-type]

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
        """Embed messages that have no vector yet (blocking); returns how many.

        For backfills (``hermes-memory sessions embed``) and tests; new messages are embedded
        in the background anyway. Resumable (each batch is committed). Returns 0 when no
        embedder is attached.

        :raises hermes_memory_vectors.EmbedderUnavailable: the embedder failed.
        """
        index = self.vector_index
        if index is None:
            return 0
        return index.embed_pending(limit, batch_size=batch_size, progress=progress)

    def _embed_before_close(self, budget_s: float, *, batch_size: int = 8) -> dict[str, int]:
        """Embed pending messages for about ``budget_s`` seconds (a short-lived process
        closing); returns ``{"embedded": n, "left": m}`` (``m`` still without a vector of
        the current model, counted after). Never raises: an embedder failure stops early."""
        index = self.vector_index
        done = 0
        if index is not None:
            deadline = time.monotonic() + max(0.0, budget_s)
            while time.monotonic() < deadline:
                try:
                    n = index.embed_pending(batch_size, batch_size=batch_size)
                except Exception as exc:  # the embedder failed: report what is left
                    logger.warning("session archive: embedding at close failed (%s)", exc)
                    break
                if n == 0:
                    break
                done += n
        try:
            cov = self.vector_coverage()
            left = max(0, int(cov.get("total") or 0) - int(cov.get("embedded") or 0))
        except Exception:
            left = -1  # unknown (the file went away): reported as such
        return {"embedded": done, "left": left}

    def vector_coverage(self) -> dict[str, Any]:
        """``{"model", "embedded", "total", "other_models", ...}`` of the vector index.

        ``total`` counts the messages that get vectors (user/assistant with content). Without
        an embedder attached, ``model`` is None and ``embedded`` counts every stored vector.
        """
        index = self.vector_index
        if index is not None:
            return index.coverage()
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
