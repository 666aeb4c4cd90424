"""Honcho recall: ``peer.context`` every few turns, ``peer.chat`` (dialectic) every few more,
fetched on the recall worker and formatted into one compact block without repeats."""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hermes_memory_core.kit import CallFailed, SerialWorker, Unavailable, fact_key

if TYPE_CHECKING:
    from hermes_memory_honcho._client import HonchoClient

__all__ = ["Recaller", "fact_key", "format_recall", "split_facts"]

logger = logging.getLogger("hermes_memory_honcho")

_BULLET = re.compile(r"^\s*(?:[-*•·]|\d+[.)])\s+")


def split_facts(text: str) -> list[str]:
    """Split a representation into facts, one per non-empty line, bullets stripped."""
    out = []
    for line in text.splitlines():
        line = _BULLET.sub("", line).strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def _unique(facts: Iterable[str], seen: set[str]) -> list[str]:
    out = []
    for fact in facts:
        key = fact_key(fact)
        if key and key not in seen:
            seen.add(key)
            out.append(fact.strip())
    return out


def format_recall(
    *,
    user_label: str,
    card: Iterable[str] = (),
    representation: str = "",
    dialectic: str = "",
    known: Iterable[str] = (),
    max_chars: int = 3200,
    dialectic_max_chars: int = 600,
) -> str:
    """One compact block of what Honcho knows about the user.

    Card entries come first, then representation facts not already in the card; facts in
    ``known`` (fact keys the model already has, e.g. the curated USER.md) are left out. The
    dialectic answer is appended when it adds text. Returns ``""`` when nothing is new.
    The block never exceeds ``max_chars``; it is cut at a line boundary.
    """
    seen = set(known)
    lines = [f"- {fact}" for fact in _unique(card, seen)]
    lines += [f"- {fact}" for fact in _unique(split_facts(representation), seen)]
    answer = " ".join(dialectic.split())
    if answer and fact_key(answer) not in seen:
        if len(answer) > dialectic_max_chars:
            answer = answer[: max(0, dialectic_max_chars - 1)].rstrip() + "…"
        lines.append(f"Insight: {answer}")
    if not lines:
        return ""
    out = [f"## Honcho: about {user_label}"]
    used = len(out[0])
    for line in lines:
        if used + 1 + len(line) > max_chars:
            break
        out.append(line)
        used += 1 + len(line)
    return "\n".join(out) if len(out) > 1 else ""


@dataclass
class _Snapshot:
    """The latest recall pieces and the turn each was fetched for."""

    card: list[str] = field(default_factory=list)
    representation: str = ""
    dialectic: str = ""
    context_turn: int | None = None
    dialectic_turn: int | None = None


class Recaller:
    """At most one recall in flight; `prefetch` returns the freshest block that is ready.

    :param known: fact keys the model already has (shared with the provider, updated by
        mirrored writes).
    """

    def __init__(self, client: HonchoClient, session: Callable[[], str], known: set[str]) -> None:
        self.client = client
        self.session = session
        self.known = known
        self.worker = SerialWorker("honcho-recall")
        self.turn = 0
        self.last_count = 0
        self._queued_for = -1
        self._snap = _Snapshot()
        self._future: Future[None] | None = None
        self._lock = threading.Lock()

    def queue(self, query: str) -> None:
        """Start fetching for the next turn."""
        with self._lock:
            self._queued_for = self.turn + 1
            self._start(query, self.turn + 1)

    def prefetch(self, query: str) -> str:
        """Count the turn, wait at most ``prefetch_wait`` for its recall, format what is ready."""
        cfg = self.client.cfg
        with self._lock:
            self.turn += 1
            if self._queued_for != self.turn and query.strip():
                self._start(query, self.turn)
            future = self._future
        if future is not None:
            with contextlib.suppress(Exception):
                future.result(timeout=cfg.prefetch_wait)
        with self._lock:
            snap = self._snap
            text = format_recall(
                user_label=self.client.user_id,
                card=snap.card,
                representation=snap.representation,
                dialectic=snap.dialectic,
                known=self.known,
                max_chars=cfg.context_tokens * 4,
                dialectic_max_chars=cfg.dialectic_max_chars,
            )
        self.last_count = max(0, text.count("\n"))
        return text

    def forget_dialectic(self) -> None:
        """A new conversation: the last dialectic answer no longer applies."""
        with self._lock:
            self._snap.dialectic, self._snap.dialectic_turn = "", None

    def _start(self, query: str, turn: int) -> None:
        # Called with the lock held. One recall in flight at most: a hung server must not
        # pile up jobs; the next turn reuses what is ready.
        if self._future is not None and not self._future.done():
            return
        self._future = _submit_tracked(self.worker, lambda: self._fetch(query, turn))

    def _fetch(self, query: str, turn: int) -> None:
        cfg = self.client.cfg
        with self._lock:
            snap = self._snap
            want_context = (
                snap.context_turn is None or turn - snap.context_turn >= cfg.context_cadence
            )
            want_dialectic = cfg.dialectic_cadence > 0 and (
                snap.dialectic_turn is None or turn - snap.dialectic_turn >= cfg.dialectic_cadence
            )
        if not (want_context or want_dialectic):
            return
        try:
            _, user, ai = self.client.ensure(self.session())
            if want_context:
                ctx = self.client.call(
                    "peer.context", lambda: ai.context(target=user, search_query=query)
                )
                with self._lock:
                    self._snap.card = [str(c) for c in (ctx.peer_card or [])]
                    self._snap.representation = str(ctx.representation or "")
                    self._snap.context_turn = turn
            if want_dialectic:
                answer = self.client.call(
                    "peer.chat",
                    lambda: ai.chat(
                        query[:2000], target=user, reasoning_level=cfg.dialectic_reasoning_level
                    ),
                )
                with self._lock:
                    self._snap.dialectic = answer if isinstance(answer, str) else ""
                    self._snap.dialectic_turn = turn
        except (CallFailed, Unavailable):
            pass  # counted and reported by the guard
        except Exception:
            logger.warning("Honcho recall failed unexpectedly", exc_info=True)


def _submit_tracked(worker: SerialWorker, fn: Callable[[], None]) -> Future[None]:
    """Queue ``fn`` on ``worker``; the future is done when ``fn`` ran (or the worker refused)."""
    future: Future[None] = Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            fn()
        except BaseException as exc:  # the waiter sees it; the worker thread lives on
            future.set_exception(exc)
        else:
            future.set_result(None)

    if not worker.submit(run):
        future.set_exception(RuntimeError(f"{worker.name} worker is closed"))
    return future
