"""Turning mem0 search results into a compact recall block, without repeats."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

__all__ = ["HEADER", "fact_key", "format_recall", "truncate_message"]

HEADER = "## mem0 recall"

_SPACE = re.compile(r"\s+")
_TRAILING = re.compile(r"[\s.。!！?？;；,，、]+$")
_SENTENCE_END = re.compile(r"[.!?。！？](?=\s|$)|[。！？]")


def fact_key(text: str) -> str:
    """A normalised key under which two spellings of one fact compare equal.

    NFKC (full-width and half-width forms), case-folded, whitespace collapsed, trailing
    punctuation dropped (Latin and CJK).
    """
    norm = unicodedata.normalize("NFKC", text).casefold()
    norm = _SPACE.sub(" ", norm).strip()
    return _TRAILING.sub("", norm)


def format_recall(
    results: Iterable[dict[str, Any]],
    *,
    exclude: Iterable[str] = (),
    max_items: int = 8,
    max_chars: int = 1500,
) -> tuple[str, int]:
    """``"- fact"`` bullets under a short header, and how many facts made it.

    :param results: mem0 search results (``memory`` field), best first.
    :param exclude: fact keys (see `fact_key`) the model already has (builtin memory).
    :param max_items: at most this many bullets.
    :param max_chars: the whole block stays within this many characters.
    """
    seen = set(exclude)
    lines: list[str] = []
    used = len(HEADER)
    for item in results:
        text = _SPACE.sub(" ", str(item.get("memory") or "")).strip()
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
    return "\n".join([HEADER, *lines]), len(lines)


def truncate_message(text: str, limit: int) -> str:
    """Cut ``text`` to ``limit`` chars, at the last sentence end when there is one.

    Small local embedders fail on long input, and a turn's gist is at its start.
    """
    text = text.strip()
    if limit <= 0 or len(text) <= limit:
        return text
    head = text[:limit]
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    if ends and ends[-1] >= limit // 3:
        return head[: ends[-1]].rstrip()
    return head.rstrip() + "…"
