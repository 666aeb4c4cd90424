"""Recall helpers: one fact key, a per-session recall cache, compact bullet blocks, the
profile-plus-memories overlay, and recall fetched in the background with a bounded wait.

`fact_key` is the one spelling of "the same fact": adapters use it to leave out facts the
curated tier already shows the model, and to drop repeats within a recall.
"""

from __future__ import annotations

import re
import threading
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from hermes_memory_core._worker import SerialWorker, TaskHandle

__all__ = [
    "BackgroundRecall",
    "Recall",
    "RecallCache",
    "bullet_block",
    "fact_key",
    "overlay",
    "truncate_text",
]

_SPACE = re.compile(r"\s+")
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d+[.)])\s+")
_TRAILING = re.compile(r"[\s.。!！?？;；,，、]+$")
_SENTENCE_END = re.compile(r"[.!?。！？](?=\s|$)|[。！？]")


def fact_key(text: str) -> str:
    """A normalized key under which two spellings of one fact compare equal.

    NFKC (full-width and half-width forms), a leading bullet removed, case-folded,
    whitespace collapsed, trailing punctuation dropped (Latin and CJK).
    """
    norm = _BULLET.sub("", unicodedata.normalize("NFKC", text))
    norm = _SPACE.sub(" ", norm.casefold()).strip()
    return _TRAILING.sub("", norm)


def bullet_block(
    header: str,
    facts: Iterable[str],
    *,
    exclude: Iterable[str] = (),
    max_items: int = 50,
    max_chars: int = 1500,
) -> tuple[str, int]:
    """``header`` then ``"- fact"`` lines: repeats and excluded keys dropped, within limits.

    :param exclude: fact keys (see `fact_key`) the model already has.
    :return: the block (``""`` when no fact is new) and how many facts it holds.
    """
    seen = set(exclude)
    lines: list[str] = []
    used = len(header)
    for fact in facts:
        text = _SPACE.sub(" ", fact).strip()
        key = fact_key(text)
        if not key or key in seen:
            continue
        line = f"- {text}"
        if used + 1 + len(line) > max_chars:
            if lines:
                break
            line = line[: max(0, max_chars - used - 2)] + "…"
        seen.add(key)
        lines.append(line)
        used += 1 + len(line)
        if len(lines) >= max_items:
            break
    if not lines:
        return "", 0
    return "\n".join([header, *lines]), len(lines)


def overlay(
    profile_header: str,
    profile: Iterable[str],
    header: str,
    memories: Iterable[str],
    *,
    exclude: Iterable[str] = (),
    max_items: int = 8,
    profile_chars: int = 700,
    memory_chars: int = 900,
) -> tuple[str, int]:
    """A turn's recall from a profile and the memories found for the message: two
    `bullet_block` s, the second without what the first (or ``exclude``) already holds.

    :param exclude: fact keys the model already has (the curated tier's).
    :return: the text (``""`` when nothing is new) and how many facts it holds.
    """
    known = set(exclude)
    profile = list(profile)
    head, used = bullet_block(profile_header, profile, exclude=known, max_items=max_items,
                              max_chars=profile_chars)  # fmt: skip
    shown = known | {fact_key(p) for p in profile}
    body, more = bullet_block(header, memories, exclude=shown, max_items=max_items,
                              max_chars=memory_chars)  # fmt: skip
    return "\n\n".join(part for part in (head, body) if part), used + more


def truncate_text(text: str, limit: int) -> str:
    """Cut ``text`` to ``limit`` chars, at the last sentence end when there is one."""
    text = text.strip()
    if limit <= 0 or len(text) <= limit:
        return text
    head = text[:limit]
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    if ends and ends[-1] >= limit // 3:
        return head[: ends[-1]].rstrip()
    return head.rstrip() + "…"


@dataclass(frozen=True)
class Recall:
    """One cached recall: the query it answered, the text, how many facts, when."""

    query: str
    text: str
    count: int
    at: float


class RecallCache:
    """The last recall per session (least recently used sessions dropped first).

    :param sessions: sessions kept.
    :param fresh_seconds: a recall older than this is not reused for the same query.
    """

    def __init__(self, *, sessions: int = 8, fresh_seconds: float = 60.0) -> None:
        self.sessions = sessions
        self.fresh_seconds = fresh_seconds
        self._items: OrderedDict[str, Recall] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, session: str) -> Recall | None:
        """The last recall of ``session``."""
        with self._lock:
            item = self._items.get(session)
            if item is not None:
                self._items.move_to_end(session)
            return item

    def fresh(self, session: str, query: str) -> bool:
        """Whether the cached recall of ``session`` answers ``query`` and is recent."""
        item = self.get(session)
        return (
            item is not None
            and item.query == query
            and time.monotonic() - item.at < self.fresh_seconds
        )

    def put(self, session: str, query: str, text: str, count: int) -> None:
        """Remember a recall for ``session``."""
        with self._lock:
            self._items[session] = Recall(query, text, count, time.monotonic())
            self._items.move_to_end(session)
            while len(self._items) > self.sessions:
                self._items.popitem(last=False)


#: What a recall fetch returns: the text and how many facts it holds; None when the service
#: failed (nothing is cached, the next turn asks again).
Fetched = tuple[str, int] | None


class BackgroundRecall:
    """Recall fetched on its own worker thread, cached per session, waited for boundedly.

    A turn asks with `answer`: a recent recall of the same query is reused; otherwise one
    fetch starts (or the one already running for the same session and query is joined) and
    the turn waits at most ``wait`` seconds. A late answer is kept for the next turn that
    asks the same; a hung service never queues more than one fetch behind the running one.

    :param name: the worker thread's name.
    :param fresh_seconds: how long a recall answers the same query again.
    """

    def __init__(self, name: str, *, fresh_seconds: float = 120.0) -> None:
        self.cache = RecallCache(fresh_seconds=fresh_seconds)
        self.worker = SerialWorker(name, max_queued=1, overflow="drop_oldest")
        self._inflight: tuple[str, str, TaskHandle] | None = None

    @property
    def running(self) -> TaskHandle | None:
        """The last fetch started (None before the first); wait on it to see it land."""
        inflight = self._inflight
        return inflight[2] if inflight is not None else None

    def start(self, session: str, query: str, fetch: Callable[[], Fetched]) -> TaskHandle | None:
        """Fetch for ``(session, query)`` unless that fetch is already running."""
        inflight = self._inflight
        if inflight is not None and inflight[:2] == (session, query) and not inflight[2].finished:
            return inflight[2]

        def run() -> None:
            found = fetch()
            if found is not None:
                self.cache.put(session, query, *found)

        handle = self.worker.call(run, label=f"{self.worker.name}.fetch")
        if handle is not None:
            self._inflight = (session, query, handle)
        return handle

    def queue(self, session: str, query: str, fetch: Callable[[], Fetched]) -> None:
        """Start fetching ahead of the turn, unless a recent recall already answers it."""
        if not self.cache.fresh(session, query):
            self.start(session, query, fetch)

    def answer(
        self,
        session: str,
        query: str,
        fetch: Callable[[], Fetched],
        wait: float,
        *,
        refresh: bool = False,
    ) -> tuple[str, int]:
        """The recall of ``query`` for this turn (``("", 0)`` when none came in time).

        :param wait: seconds to wait for a fetch.
        :param refresh: fetch even when a recent recall answers the query.
        """
        if refresh or not self.cache.fresh(session, query):
            handle = self.start(session, query, fetch)
            if handle is not None:
                handle.wait(wait)
        item = self.cache.get(session)
        if item is None or item.query != query:
            return "", 0
        return item.text, item.count

    def close(self) -> None:
        """Stop the worker (a running fetch is left to finish on its own)."""
        self.worker.close(0)
