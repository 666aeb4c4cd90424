"""mem0 recall: searches on the ``mem0-recall`` worker, one compact block per session.

`prefetch` waits at most ``prefetch_wait`` for a fresh search and otherwise returns the last
recall cached for that session (warmed by ``queue_prefetch`` / ``on_turn_start``); caching
and formatting are the kit's (`RecallCache`, `bullet_block`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from hermes_memory_core.kit import (
    CallFailed,
    RecallCache,
    SerialWorker,
    Unavailable,
    bullet_block,
    fact_key,
    truncate_text,
)

if TYPE_CHECKING:
    from hermes_memory_mem0._connection import Connection

__all__ = ["HEADER", "Recaller", "fact_key", "format_recall", "truncate_message"]

logger = logging.getLogger("hermes_memory_mem0._provider")

HEADER = "## mem0 recall"

#: Synced messages are cut at a sentence end (small local embedders fail on long input).
truncate_message = truncate_text


def format_recall(
    results: Iterable[dict[str, Any]],
    *,
    exclude: Iterable[str] = (),
    max_items: int = 8,
    max_chars: int = 1500,
) -> tuple[str, int]:
    """``"- fact"`` bullets under a short header, and how many facts made it.

    :param results: mem0 search results (``memory`` field), best first.
    :param exclude: fact keys (see `fact_key`) the model already has (curated memory).
    """
    facts = (str(item.get("memory") or "") for item in results)
    return bullet_block(HEADER, facts, exclude=exclude, max_items=max_items, max_chars=max_chars)


class Recaller:
    """Searches deduplicated per (session, query); results cached per session.

    :param user: the mem0 user id to search (read at call time).
    :param known: fact keys the model already has (shared with the provider).
    """

    def __init__(self, conn: Connection, user: Callable[[], str], known: set[str]) -> None:
        self.conn = conn
        self.user = user
        self.known = known
        self.worker = SerialWorker("mem0-recall", max_queued=8)
        self.cache = RecallCache(sessions=8, fresh_seconds=60.0)
        self.last_count = 0
        self._inflight: dict[tuple[str, str], threading.Event] = {}
        self._lock = threading.Lock()

    def start(self, sid: str, query: str) -> threading.Event | None:
        """Start a search unless one for the same (session, query) is running."""
        query = (query or "").strip()
        if not query or self.conn.closed or self.conn.waiting_to_retry():
            return None
        key = (sid, query)
        with self._lock:
            event = self._inflight.get(key)
            if event is not None:
                return event
            event = self._inflight[key] = threading.Event()
        if not self.worker.submit(lambda: self._search(sid, query, event)):
            with self._lock:
                self._inflight.pop(key, None)
            event.set()
            logger.debug("mem0: recall queue full; skipping a search")
        return event

    def _search(self, sid: str, query: str, event: threading.Event) -> None:
        settings = self.conn.settings
        try:
            results = self.conn.call(
                "recall",
                lambda b: b.search(
                    query, user_id=self.user(), top_k=settings.recall_top_k, rerank=settings.rerank
                ),
                wait=self.conn.background_wait(),
            )
            text, count = format_recall(
                results,
                exclude=set(self.known),
                max_items=settings.recall_top_k,
                max_chars=settings.recall_max_chars,
            )
            self.cache.put(sid, query, text, count)
        except (Unavailable, CallFailed):
            pass  # reported by the guard (nothing to report while the breaker is open)
        finally:
            with self._lock:
                self._inflight.pop((sid, query), None)
            event.set()

    def prefetch(self, sid: str, query: str) -> str:
        """Recall for this turn, waiting at most ``prefetch_wait`` seconds.

        A late result is kept for the next turn.
        """
        query = query.strip()
        if query and not self.cache.fresh(sid, query) and not self.conn.guard.is_open:
            done = self.start(sid, query)
            if done is not None:
                done.wait(self.conn.settings.prefetch_wait)
        cached = self.cache.get(sid)
        self.last_count = cached.count if cached else 0
        return cached.text if cached else ""
