"""Contradiction checks: pairs of facts that share entities yet say different things."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hermes_memory_facts._database import FactsDatabase
from hermes_memory_facts._text import terms

__all__ = ["find_contradictions"]

#: Facts (most recently updated) compared with each other.
CONTRADICTION_WINDOW = 500
_NEGATION = frozenset(
    {
        "not",
        "never",
        "no",
        "dont",
        "don't",
        "doesn't",
        "isn't",
        "won't",
        "cannot",
        "can't",
        "不",
        "没",
        "别",
    }
)


def find_contradictions(
    db: FactsDatabase,
    *,
    fact_ids: Iterable[int] | None = None,
    limit: int = 10,
    threshold: float = 0.3,
) -> list[dict[str, Any]]:
    """Pairs of facts that share entities yet say different things about them.

    Over the 500 most recently updated facts (or pairs involving ``fact_ids``): for two
    facts sharing an entity, ``entity_overlap`` = shared / the smaller entity set and
    ``content_similarity`` = Jaccard of their words outside the shared entities.
    Statements with the same framing and a different detail ("Alice prefers tabs" /
    "Alice prefers spaces") score highest: ``score = overlap × 4·s·(1 − s)``, raised to
    ``overlap × s`` when exactly one of them is negated. Pairs scoring ≥ ``threshold``,
    best first, as ``{fact_a, fact_b, entity_overlap, content_similarity,
    contradiction_score, shared_entities}``.
    """
    with db.lock:
        recent = [
            int(r[0])
            for r in db.conn.execute(
                "SELECT fact_id FROM facts ORDER BY updated_at DESC, fact_id DESC LIMIT ?",
                (CONTRADICTION_WINDOW,),
            )
        ]
        focus = set(fact_ids) if fact_ids is not None else None
        pool = set(recent) | (focus or set())
        links: dict[int, dict[str, str]] = {}
        for fact_id, key, name in db.conn.execute(
            "SELECT fe.fact_id, e.name_key, e.name FROM fact_entities fe "
            "JOIN entities e USING(entity_id)"
        ):
            if int(fact_id) in pool:
                links.setdefault(int(fact_id), {})[key] = name
        facts = db.facts(links)
    ids = sorted(links)
    found: list[dict[str, Any]] = []
    for index, a in enumerate(ids):
        for b in ids[index + 1 :]:
            if focus is not None and a not in focus and b not in focus:
                continue
            shared = links[a].keys() & links[b].keys()
            if not shared:
                continue
            overlap = len(shared) / min(len(links[a]), len(links[b]))
            shared_words = set(terms(" ".join(shared)))
            words_a = set(terms(facts[a].content)) - shared_words
            words_b = set(terms(facts[b].content)) - shared_words
            union = words_a | words_b
            sim = len(words_a & words_b) / len(union) if union else 1.0
            score = overlap * 4.0 * sim * (1.0 - sim)
            neg_a = bool(set(terms(facts[a].content, keep_stop_words=True)) & _NEGATION)
            neg_b = bool(set(terms(facts[b].content, keep_stop_words=True)) & _NEGATION)
            if neg_a != neg_b:
                score = max(score, overlap * sim)
            if score >= threshold:
                found.append(
                    {
                        "fact_a": facts[a].as_dict(),
                        "fact_b": facts[b].as_dict(),
                        "entity_overlap": round(overlap, 3),
                        "content_similarity": round(sim, 3),
                        "contradiction_score": round(score, 3),
                        "shared_entities": sorted(links[a][k] for k in shared),
                    }
                )
    found.sort(key=lambda item: -float(item["contradiction_score"]))
    return found[: max(1, limit)]
