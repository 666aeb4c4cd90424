"""Recall helpers: one fact key, a per-session recall cache, compact bullet blocks.

`fact_key` is the one spelling of "the same fact": adapters use it to leave out facts the
curated tier already shows the model, and to drop repeats within a recall.
"""

from __future__ import annotations

import re
import threading
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Recall", "RecallCache", "bullet_block", "fact_key", "truncate_text"]

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
