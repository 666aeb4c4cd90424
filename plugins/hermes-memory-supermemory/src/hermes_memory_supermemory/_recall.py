"""A turn's recall from Supermemory: the container profile (every few turns) and what a
search finds for the message, as bullet blocks without the facts the model already has."""

from __future__ import annotations

import logging
from collections.abc import Set
from typing import TYPE_CHECKING

from hermes_memory_core import kit

if TYPE_CHECKING:
    from hermes_memory_supermemory._client import SupermemoryClient
    from hermes_memory_supermemory._config import SupermemorySettings

__all__ = ["fetch"]

logger = logging.getLogger("hermes_memory_supermemory")


def fetch(
    client: SupermemoryClient, guard: kit.Guard, cfg: SupermemorySettings, query: str,
    known: Set[str], with_profile: bool,
) -> tuple[str, int] | None:  # fmt: skip
    """The recall text and how many facts it holds; None when the search failed (a failed
    profile still leaves the search)."""
    blocks: list[str] = []
    count = 0
    if with_profile:
        try:
            static, dynamic = guard.call("profile", client.profile)
        except (kit.CallFailed, kit.Unavailable) as exc:
            logger.debug("Supermemory profile skipped: %s", exc)
            static, dynamic = [], []
        half = cfg.recall_max_chars // 2
        block, count = kit.bullet_block("## Supermemory profile", static + dynamic,
                                        exclude=known, max_chars=half)  # fmt: skip
        if block:
            blocks.append(block)
    try:
        found = guard.call("search", lambda: client.search(query, limit=cfg.search_limit))
    except (kit.CallFailed, kit.Unavailable) as exc:
        logger.debug("Supermemory recall skipped: %s", exc)
        return None
    shown = {kit.fact_key(line[2:]) for b in blocks for line in b.splitlines()[1:]}
    room = cfg.recall_max_chars - sum(len(b) for b in blocks)
    block, n = kit.bullet_block("## Supermemory memory", [f.text for f in found],
                                exclude=set(known) | shown, max_chars=room)  # fmt: skip
    if block:
        blocks.append(block)
        count += n
    return "\n\n".join(blocks), count
