"""Compact formatting of Honcho recall, with each fact injected once."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

__all__ = ["fact_key", "format_recall", "split_facts"]

_BULLET = re.compile(r"^\s*(?:[-*•·]|\d+[.)])\s+")


def fact_key(text: str) -> str:
    """Comparison key of a fact: NFKC, case-folded, bullets/spaces/final stop removed."""
    text = unicodedata.normalize("NFKC", text)
    text = _BULLET.sub("", text)
    text = " ".join(text.split()).casefold()
    return text.rstrip(" .。!！")


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
    ``known`` (already shown to the model, e.g. the builtin USER.md) are left out. The
    dialectic answer is appended when it adds text. Returns ``""`` when nothing is new.
    The block never exceeds ``max_chars``; it is cut at a line boundary.
    """
    seen = {fact_key(k) for k in known}
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
