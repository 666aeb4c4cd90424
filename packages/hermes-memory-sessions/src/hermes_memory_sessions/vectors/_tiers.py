"""`TieredIndex`: a fast tier for the whole archive at once, the quality tier catching up.

The default model embeds a few messages a second on two cores: an imported archive of
100k messages waits hours for hybrid recall. The static model distilled from it embeds
thousands a second. With both configured (``sessions.embedder`` the quality model,
``sessions.fast_embedder`` the fast one), the archive keeps two `VectorIndex` over the same
``hm_vectors`` table, one per model:

* the **fast** tier embeds every message without a vector as soon as its worker starts
  (a whole archive in minutes), then new messages as they arrive;
* the **quality** tier embeds new messages, and the backlog newest first
  (``hermes-memory sessions embed``, or `embed_pending`).

Each message is searched in exactly **one** tier, the best one that embedded it: a quality
vector replaces the message's fast vector (stored and in memory), so the Hamming pass stays
one code per message. A query is embedded by both models; each tier returns its candidates
with their cosines, and the two lists are put on one scale before fusion
(`hermes_memory_sessions.search._tiered`). With every message in the quality tier the
ranking is the quality model's alone; with none, the fast model's alone.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_memory_sessions.vectors._index import VectorIndex

__all__ = ["TIER_NAMES", "TieredIndex", "tier_coverage"]

logger = logging.getLogger(__name__)

#: The tiers, best first, as reported by coverage and ``sessions embed``.
TIER_NAMES = ("quality", "fast")


class TieredIndex:
    """The quality and the fast `VectorIndex` of one archive, used as one index.

    Built by the archive when both embedders are configured; ``quality`` and ``fast`` are
    the two indexes (``fast.above`` is the quality model). ``embedder`` and ``model`` are
    the quality tier's (what a single-model archive would have).
    """

    def __init__(self, quality: VectorIndex, fast: VectorIndex) -> None:
        if fast.above != quality.model:
            raise ValueError("the fast tier must defer to the quality tier's model")
        self.quality = quality
        self.fast = fast
        self.embedder = quality.embedder
        self.model = quality.model
        self.store = quality.store

    @property
    def tiers(self) -> tuple[VectorIndex, VectorIndex]:
        """``(quality, fast)``: best first."""
        return self.quality, self.fast

    @property
    def last_error(self) -> str | None:
        """The last embedder failure of either tier (quality first)."""
        return self.quality.last_error or self.fast.last_error

    def tier(self, name: str) -> VectorIndex:
        """The tier called ``name`` (``"quality"`` or ``"fast"``).

        :raises ValueError: another name.
        """
        if name not in TIER_NAMES:
            raise ValueError(f"unknown tier {name!r} (quality or fast)")
        return self.quality if name == "quality" else self.fast

    def notify(self, ids: Sequence[int]) -> None:
        """Queue new messages for both tiers' workers (never blocks, never raises)."""
        self.fast.notify(ids)
        self.quality.notify(ids)

    def refresh(self) -> None:
        """Load both tiers' new vectors into their in-memory codes."""
        self.quality.refresh()
        self.fast.refresh()

    def documents(self, ids: Sequence[int]) -> dict[int, str]:
        """``{id: text}``: what is embedded for each of ``ids`` (same for both tiers)."""
        return self.quality.documents(ids)

    def embed_pending(
        self,
        limit: int | None = None,
        *,
        batch_size: int = 32,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Embed what is pending, the fast tier first (everything at once), then the
        quality tier newest first; ``limit`` bounds each tier. Returns how many vectors
        were stored in all.

        :raises hermes_memory_vectors.EmbedderUnavailable: an embedder failed (what was
            embedded before stays).
        """
        done = self.fast.embed_pending(limit, batch_size=max(batch_size, 256), progress=progress)
        return done + self.quality.embed_pending(limit, batch_size=batch_size, progress=progress)

    def pending_ids(
        self, after: int = 0, limit: int = 256, *, before: int | None = None
    ) -> list[int]:
        """Messages without a quality vector (the fast tier may hold them)."""
        return self.quality.pending_ids(after, limit, before=before)

    def reset(self, *, all_models: bool = True) -> int:
        """Drop stored vectors (all, or those of neither tier's model); returns how many."""
        dropped = self.fast.reset(all_models=all_models)
        self.quality._codes.clear()
        return dropped

    def coverage(self) -> dict[str, Any]:
        """A single-model coverage of the quality tier (``model``, ``embedded``, ``total``,
        ``other_models``, ``by_model``, ``pending_queue``, ``last_error``) and ``tiers``:
        per tier ``{"tier", "model", "embedded", "searched"}`` (`tier_coverage`)."""
        base = self.quality.coverage()
        by_model = dict(base.get("by_model") or {})
        fast_n = int(by_model.get(self.fast.model, 0))
        base["other_models"] = max(0, int(base.get("other_models") or 0) - fast_n)
        base["pending_queue"] = self.quality.worker.queued() + self.fast.worker.queued()
        base["last_error"] = self.last_error
        base["tiers"] = tier_coverage(
            by_model, self.quality.model, self.fast.model, int(base.get("total") or 0)
        )
        return base

    def close(self, timeout: float = 1.0) -> None:
        """Stop both workers (what they have not embedded stays pending)."""
        self.fast.close(timeout)
        self.quality.close(timeout)

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait until both workers are idle (for tests and tools)."""
        deadline = time.monotonic() + timeout
        fast_idle = self.fast.wait_idle(timeout)
        return fast_idle and self.quality.wait_idle(max(0.0, deadline - time.monotonic()))


def tier_coverage(
    by_model: dict[str, int], quality: str | None, fast: str | None, total: int
) -> list[dict[str, Any]]:
    """Per tier, best first: ``{"tier", "model", "embedded", "searched", "total"}``.

    ``embedded`` counts the tier's own vectors; ``searched`` the messages the tier or a
    better one covers (every message with a vector, for the fast tier).
    """
    out: list[dict[str, Any]] = []
    covered = 0
    for name, model in (("quality", quality), ("fast", fast)):
        if model is None:
            continue
        own = int(by_model.get(model, 0))
        covered += own
        out.append(
            {"tier": name, "model": model, "embedded": own, "searched": covered, "total": total}
        )
    return out
