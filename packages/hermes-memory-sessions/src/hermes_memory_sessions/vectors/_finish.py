"""`finish_embedding`: what a closing archive does about messages without vectors.

A short-lived process (one agent run, an MCP server stopped by its client) writes messages
faster than the background worker embeds them; closing would leave the newest without
vectors, so `SessionArchiveProvider.shutdown` embeds them here within a time budget and
reports what it left. The same code serves every backend (SQLite, PostgreSQL): it only uses
the store's ``vector_index`` (``worker``, ``embed_pending``) and ``vector_coverage``.
"""

from __future__ import annotations

import logging
import time
from typing import Any

__all__ = ["SHUTDOWN_BATCH", "finish_embedding"]

logger = logging.getLogger("hermes_memory_sessions.provider")

#: Messages per embedder call while closing: small, so the budget is overshot by at most
#: one short call (the default model embeds 6-11 messages/s on two cores).
SHUTDOWN_BATCH = 4
#: The fast (static) tier's batch: it embeds hundreds of messages a second.
FAST_BATCH = 256


def finish_embedding(store: Any, budget_s: float) -> dict[str, Any] | None:
    """Embed the pending messages of ``store`` for about ``budget_s`` seconds, newest first.

    Returns ``{"embedded", "left", "seconds"}`` (``left`` -1 when it cannot be counted), or
    None when no embedder is configured for ``store``; logs what is left. The background
    worker is stopped first, so it neither competes for the budget nor embeds after the
    count (the report is exact). Never raises.
    """
    from hermes_memory_sessions.vectors._embedding_config import await_embedder, recall_state

    if recall_state(store) is None:
        return None
    started = time.monotonic()
    deadline = started + max(0.0, budget_s)
    await_embedder(store, budget_s)
    index = getattr(store, "vector_index", None)
    # The fast tier first (it embeds hundreds a second): whatever time is left goes to quality.
    tiers = list(getattr(index, "tiers", ()))[::-1] or ([index] if index is not None else [])
    for tier in tiers:
        worker = getattr(tier, "worker", None)
        if worker is not None:
            worker.close(max(0.0, deadline - time.monotonic()))
    done: list[int] = []
    for tier in tiers:
        done.append(0)
        batch = FAST_BATCH if getattr(tier, "above", None) else SHUTDOWN_BATCH
        while time.monotonic() < deadline:
            try:
                n = int(tier.embed_pending(batch, batch_size=batch))
            except Exception as exc:  # the embedder failed: report what is left
                logger.warning("session archive: embedding at close failed (%s)", exc)
                break
            if n == 0:
                break
            done[-1] += n
    report: dict[str, Any] = {"embedded": sum(done), "left": _left(store)}
    report["seconds"] = round(time.monotonic() - started, 3)
    per_tier = _per_tier(store, dict(zip(("fast", "quality"), done, strict=False)))
    if per_tier:
        report["tiers"] = per_tier
        for tier_report in per_tier:  # what each tier left, said plainly
            if tier_report["left"]:
                logger.warning(
                    "session archive: %d message(s) left without a vector of the %s tier at"
                    " shutdown (embedded %d); hermes-memory sessions embed finishes them",
                    tier_report["left"],
                    tier_report["tier"],
                    tier_report["embedded"],
                )
    elif report["left"]:
        logger.warning(
            "session archive: %s message(s) left without vectors at shutdown (embedded %d"
            " in %.1f s); they are embedded next time, or now with: hermes-memory sessions embed",
            report["left"] if report["left"] > 0 else "some",
            report["embedded"],
            report["seconds"],
        )
    if report["embedded"] and not report["left"]:
        logger.info(
            "session archive: embedded %d pending message(s) at shutdown", report["embedded"]
        )
    return report


def _per_tier(store: Any, embedded: dict[str, int]) -> list[dict[str, Any]] | None:
    """``[{"tier", "embedded", "left"}]`` of a two-tier archive (None: one model, or the
    coverage cannot be read); the fast tier's ``left``: messages without any vector."""
    try:
        cov = store.vector_coverage()
        total = int(cov.get("total") or 0)
        per_tier = cov.get("tiers")
    except Exception:
        return None
    if not per_tier:
        return None
    return [
        {
            "tier": t["tier"],
            "embedded": embedded.get(t["tier"], 0),
            "left": max(0, total - int(t["searched"])),
        }
        for t in per_tier
    ]


def _left(store: Any) -> int:
    """Messages that should have a vector of the current model and have none (-1: unknown)."""
    try:
        cov = store.vector_coverage()
        return max(0, int(cov.get("total") or 0) - int(cov.get("embedded") or 0))
    except Exception:
        return -1
