"""The records of the fact store: `Fact`, its error type, and the checks of what a caller
may store (content, category, tags)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hermes_memory_facts._text import MAX_CONTENT_CHARS, clean_content

__all__ = [
    "CATEGORIES",
    "Fact",
    "FactStoreError",
    "check_category",
    "check_content",
    "clean_tags",
]

#: The categories a fact may have.
CATEGORIES: tuple[str, ...] = ("user_pref", "project", "tool", "general")


class FactStoreError(ValueError):
    """A request the store refuses (bad input) or a file it cannot use; the message says why."""


@dataclass(frozen=True)
class Fact:
    """One stored fact."""

    fact_id: int
    content: str
    category: str
    tags: str
    trust: float
    retrieval_count: int
    helpful_count: int
    unhelpful_count: int
    created_at: float
    updated_at: float
    entities: tuple[str, ...] = ()

    def as_dict(self, score: float | None = None) -> dict[str, Any]:
        """The fact as tool-result JSON (``score`` added when given)."""
        out: dict[str, Any] = {
            "fact_id": self.fact_id,
            "content": self.content,
            "category": self.category,
            "tags": self.tags,
            "trust_score": round(self.trust, 3),
            "retrieval_count": self.retrieval_count,
            "helpful_count": self.helpful_count,
            "entities": list(self.entities),
        }
        if score is not None:
            out["score"] = round(score, 4)
        return out


def clean_tags(tags: str | Iterable[str] | None) -> str:
    """Tags as stored: comma-separated, cleaned, de-duplicated, at most 20 of 64 chars."""
    if tags is None:
        return ""
    items = tags.split(",") if isinstance(tags, str) else list(tags)
    seen: dict[str, None] = {}
    for item in items:
        tag = clean_content(str(item)).strip(" ,")
        if tag:
            seen.setdefault(tag[:64], None)
    return ", ".join(list(seen)[:20])


def check_category(category: str | None) -> str:
    """``category`` lower-cased (``None`` → ``"general"``); FactStoreError when unknown."""
    value = (category or "general").strip().lower()
    if value not in CATEGORIES:
        raise FactStoreError(f"category must be one of {', '.join(CATEGORIES)}, got {value!r}")
    return value


def check_content(content: str) -> str:
    """``content`` cleaned; FactStoreError when not text, empty or over-long."""
    if not isinstance(content, str):
        raise FactStoreError("content must be a string")
    text = clean_content(content)
    if not text:
        raise FactStoreError("content is empty")
    if len(text) > MAX_CONTENT_CHARS:
        raise FactStoreError(
            f"content is {len(text)} characters; a fact holds at most {MAX_CONTENT_CHARS}"
        )
    return text
