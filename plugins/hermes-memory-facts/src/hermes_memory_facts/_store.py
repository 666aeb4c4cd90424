"""`FactStore`: facts in one SQLite file, searched with FTS5, linked to entities, weighted by
trust, checked for contradictions, and (with NumPy) queried compositionally via `hrr`.

The store is a facade over parts with one job each: the file and its transactions
(`hermes_memory_facts._database`), entities, aliases and full-text terms (`.entities`), the
holographic vectors (`.hrr_index`) and contradiction checks (`.contradictions`).

Search terms are computed in Python (`hermes_memory_facts._text.terms`: words plus CJK bigrams
after NFKC and case folding) and indexed in an FTS5 table, so Chinese and Japanese facts are
found by any two-character part of them, and a full-width or zero-width-spaced spelling finds
the plain one.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hermes_memory_facts import _hrr as hrr
from hermes_memory_facts._contradictions import find_contradictions
from hermes_memory_facts._database import COLUMNS, FactsDatabase
from hermes_memory_facts._entities import EntityIndex
from hermes_memory_facts._hrr_index import HrrIndex
from hermes_memory_facts._records import (
    CATEGORIES,
    Fact,
    FactStoreError,
    check_category,
    check_content,
    clean_tags,
)
from hermes_memory_facts._text import normalize, terms

__all__ = ["CATEGORIES", "Fact", "FactStore", "FactStoreError"]

HELPFUL_DELTA = 0.05
UNHELPFUL_DELTA = -0.10


class FactStore:
    """Facts in ``path`` (created with its directory when missing).

    :param default_trust: trust of a new fact (0..1).
    :param hrr_dim: dimension of the HRR vectors (used only when NumPy is installed).
    :param use_hrr: False to switch HRR off; None (default) uses it when NumPy is installed.
    :param hrr_weight: weight of the HRR similarity in search relevance.
    :param half_life_days: trust-weighted scores halve every this many days since the last
        update (0: no decay).
    :raises FactStoreError: the file cannot be opened or is not a fact store.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        default_trust: float = 0.5,
        hrr_dim: int = 1024,
        use_hrr: bool | None = None,
        hrr_weight: float = 0.3,
        half_life_days: float = 0.0,
    ) -> None:
        self.path = Path(path)
        self.default_trust = min(1.0, max(0.0, float(default_trust)))
        self.hrr_dim = max(64, int(hrr_dim))
        self.use_hrr = hrr.available() if use_hrr is None else (use_hrr and hrr.available())
        self.hrr_weight = min(1.0, max(0.0, float(hrr_weight)))
        self.half_life_days = max(0.0, float(half_life_days))
        self._db = FactsDatabase(self.path)
        self._entities = EntityIndex(self._db)
        self._hrr = HrrIndex(self._db, self._entities, self.hrr_dim)
        if self.use_hrr:
            with self._db.guard():
                self._hrr.sync()

    def close(self) -> None:
        """Close the database (the store cannot be used afterwards)."""
        self._db.close()

    @property
    def capabilities(self) -> list[str]:
        """What this store can do here (``hrr`` only with NumPy)."""
        caps = ["search", "entities", "trust", "contradictions"]
        return [*caps, "hrr"] if self.use_hrr else caps

    # ----------------------------------------------------------------- reading
    def get(self, fact_id: int) -> Fact | None:
        """The fact ``fact_id``, or None."""
        return self._db.fact_where("fact_id=?", int(fact_id))

    def find(self, content: str) -> Fact | None:
        """The fact whose content equals ``content`` after normalisation, or None."""
        return self._db.fact_where("content_key=?", normalize(content))

    def count(self) -> int:
        """How many facts are stored."""
        with self._db.lock:
            return int(self._db.conn.execute("SELECT count(*) FROM facts").fetchone()[0])

    def list_facts(
        self, *, category: str | None = None, min_trust: float = 0.0, limit: int = 10
    ) -> list[Fact]:
        """Facts by trust (highest first), then most recently updated."""
        sql = f"SELECT {COLUMNS} FROM facts WHERE trust_score >= ?"  # noqa: S608
        params: list[Any] = [min_trust]
        if category:
            sql += " AND category = ?"
            params.append(check_category(category))
        sql += " ORDER BY trust_score DESC, updated_at DESC, fact_id DESC LIMIT ?"
        params.append(max(1, limit))
        with self._db.lock:
            return [self._db.fact(r) for r in self._db.conn.execute(sql, params).fetchall()]

    def entity_id(self, name: str) -> int | None:
        """The id of the entity called ``name`` (or with that alias), or None."""
        return self._entities.entity_id(name)

    def encode_fact(self, text: str, entity_keys: Iterable[str]) -> Any:
        """The HRR vector of a fact: ``bind(ROLE_CONTENT, text) + Σ bind(ROLE_ENTITY, e)``,
        where ``text`` is the normalised sum of the atoms of its words."""
        return self._hrr.encode_fact(text, entity_keys)

    # ----------------------------------------------------------------- writing
    def add(
        self, content: str, *, category: str | None = "general", tags: str | Iterable[str] = ""
    ) -> tuple[int, bool]:
        """Store a fact; returns ``(fact_id, created)``.

        Content equal to a stored fact after normalisation (case, width, invisible
        characters, spacing) is not stored twice: the existing id comes back with
        ``created=False`` and nothing changes.

        :raises FactStoreError: empty or over-long content, unknown category.
        """
        text, cat, tag_text = check_content(content), check_category(category), clean_tags(tags)
        key = normalize(text)
        now = time.time()
        with self._db.write() as db:
            row = db.execute("SELECT fact_id FROM facts WHERE content_key=?", (key,)).fetchone()
            if row:
                return int(row[0]), False
            cur = db.execute(
                "INSERT INTO facts(content, content_key, category, tags, trust_score, "
                "created_at, updated_at) VALUES(?,?,?,?,?,?,?)",
                (text, key, cat, tag_text, self.default_trust, now, now),
            )
            fact_id = int(cur.lastrowid or 0)
            self._index(fact_id, text, tag_text)
        return fact_id, True

    def update(
        self,
        fact_id: int,
        *,
        content: str | None = None,
        category: str | None = None,
        tags: str | Iterable[str] | None = None,
        trust_delta: float | None = None,
    ) -> bool:
        """Change a fact; False when ``fact_id`` does not exist.

        New content re-extracts the entities; trust stays within ``[0, 1]``.

        :raises FactStoreError: bad content or category, or the new content is another
            fact's.
        """
        with self._db.write() as db:
            row = db.execute(
                "SELECT content, category, tags, trust_score FROM facts WHERE fact_id=?",
                (int(fact_id),),
            ).fetchone()
            if row is None:
                return False
            text = check_content(content) if content is not None else row[0]
            cat = check_category(category) if category is not None else row[1]
            tag_text = clean_tags(tags) if tags is not None else row[2]
            trust = min(1.0, max(0.0, float(row[3]) + float(trust_delta or 0.0)))
            key = normalize(text)
            other = db.execute(
                "SELECT fact_id FROM facts WHERE content_key=? AND fact_id!=?", (key, fact_id)
            ).fetchone()
            if other:
                raise FactStoreError(f"fact {other[0]} already holds this content")
            db.execute(
                "UPDATE facts SET content=?, content_key=?, category=?, tags=?, trust_score=?, "
                "updated_at=? WHERE fact_id=?",
                (text, key, cat, tag_text, trust, time.time(), fact_id),
            )
            if text != row[0] or tag_text != row[2]:
                self._index(fact_id, text, tag_text)
        return True

    def remove(self, fact_id: int) -> bool:
        """Delete a fact (and its entity links); False when it does not exist."""
        with self._db.write() as db:
            gone = db.execute("DELETE FROM facts WHERE fact_id=?", (int(fact_id),)).rowcount
            db.execute("DELETE FROM facts_fts WHERE rowid=?", (int(fact_id),))
        return bool(gone)

    def feedback(self, fact_id: int, *, helpful: bool) -> dict[str, Any] | None:
        """Adjust trust: helpful +0.05 (and count it), unhelpful −0.10; clamped to [0, 1].

        :return: ``{fact_id, old_trust, new_trust, helpful_count}``, or None for an unknown id.
        """
        with self._db.write() as db:
            row = db.execute(
                "SELECT trust_score, helpful_count FROM facts WHERE fact_id=?", (int(fact_id),)
            ).fetchone()
            if row is None:
                return None
            old = float(row[0])
            new = min(1.0, max(0.0, old + (HELPFUL_DELTA if helpful else UNHELPFUL_DELTA)))
            column = "helpful_count" if helpful else "unhelpful_count"
            db.execute(
                f"UPDATE facts SET trust_score=?, {column}={column}+1 WHERE fact_id=?",  # noqa: S608
                (new, fact_id),
            )
            count = int(row[1]) + (1 if helpful else 0)
        return {
            "fact_id": int(fact_id),
            "old_trust": round(old, 3),
            "new_trust": round(new, 3),
            "helpful_count": count,
        }

    def _index(self, fact_id: int, text: str, tags: str) -> None:
        """Entities, links, FTS terms and the HRR vector of one fact (inside a write)."""
        self._entities.index(fact_id, text, tags)
        if self.use_hrr:
            self._hrr.store_vector(fact_id)

    # ----------------------------------------------------------------- retrieval
    def _decay(self, updated_at: float, now: float) -> float:
        if self.half_life_days <= 0:
            return 1.0
        age_days = max(0.0, now - updated_at) / 86400.0
        return float(0.5 ** (age_days / self.half_life_days))

    def search(
        self,
        query: str,
        *,
        category: str | None = None,
        min_trust: float = 0.3,
        limit: int = 10,
        count_retrieval: bool = True,
    ) -> list[tuple[Fact, float]]:
        """Facts matching ``query``, best first, as ``(fact, score)``.

        Candidates are the FTS5 matches of any query term (``limit * 5`` by BM25) with trust
        ≥ ``min_trust``; relevance = 0.4·BM25 (scaled to the best) + 0.3·term Jaccard +
        0.3·HRR text similarity (0.6/0.4 without HRR); score = relevance × trust (× the
        decay factor when a half-life is set).
        """
        words = terms(query) or terms(query, keep_stop_words=True)
        if not words:
            return []
        cat = check_category(category) if category else None
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in dict.fromkeys(words))
        sql = (
            f"SELECT {COLUMNS.replace('fact_id', 'f.fact_id', 1)}, bm25(facts_fts) "  # noqa: S608
            "FROM facts_fts JOIN facts f ON f.fact_id = facts_fts.rowid "
            "WHERE facts_fts MATCH ? AND f.trust_score >= ?"
        )
        params: list[Any] = [match, min_trust]
        if cat:
            sql += " AND f.category = ?"
            params.append(cat)
        sql += " ORDER BY bm25(facts_fts) LIMIT ?"
        params.append(max(1, limit) * 5)
        with self._db.lock:
            try:
                rows = self._db.conn.execute(sql, params).fetchall()
            except sqlite3.OperationalError as exc:
                raise FactStoreError(f"search failed: {exc}") from None
            if not rows:
                return []
            query_terms = set(words)
            best = max(abs(float(r[10])) for r in rows) or 1.0
            hrr_sims: dict[int, float] = {}
            if self.use_hrr:
                hrr_sims = self._hrr.text_scores(query)
            w_fts, w_jac, w_hrr = (0.4, 0.3, self.hrr_weight) if self.use_hrr else (0.6, 0.4, 0.0)
            now = time.time()
            scored: list[tuple[Fact, float]] = []
            for row in rows:
                fact = self._db.fact(row[:10])
                fact_terms = set(terms(f"{fact.content} {fact.tags}"))
                union = query_terms | fact_terms
                jaccard = len(query_terms & fact_terms) / len(union) if union else 0.0
                relevance = w_fts * abs(float(row[10])) / best + w_jac * jaccard
                relevance += w_hrr * max(0.0, hrr_sims.get(fact.fact_id, 0.0))
                score = relevance * fact.trust * self._decay(fact.updated_at, now)
                scored.append((fact, score))
            scored.sort(key=lambda item: (-item[1], -item[0].fact_id))
            top = scored[: max(1, limit)]
        if count_retrieval and top:
            self._count_retrievals([f.fact_id for f, _ in top])
        return top

    def _count_retrievals(self, ids: list[int]) -> None:
        with self._db.write() as db:
            db.executemany(
                "UPDATE facts SET retrieval_count = retrieval_count + 1 WHERE fact_id=?",
                [(i,) for i in ids],
            )

    def probe(
        self, entity: str, *, category: str | None = None, limit: int = 10
    ) -> list[tuple[Fact, float]]:
        """Facts about ``entity`` (a name or alias), best first.

        With HRR: the entity is unbound from each fact's entity role and compared with the
        entity's atom; score = similarity × trust. Without: the facts linked to the entity,
        by trust.
        """
        if not entity.strip():
            raise FactStoreError("entity is empty")
        cat = check_category(category) if category else None
        if self.use_hrr:
            sims = self._hrr.present(entity)
        else:
            sims = dict.fromkeys(self._entities.linked(entity), 1.0)
        return self._rank(sims, cat, limit)

    def related(self, entity: str, *, limit: int = 10) -> list[tuple[Fact, float]]:
        """Facts connected to ``entity`` in any role: as a linked entity or in the words of
        the content (HRR: the larger of the two unbinding similarities; without HRR: linked
        facts plus full-text matches of the name)."""
        if not entity.strip():
            raise FactStoreError("entity is empty")
        if self.use_hrr:
            by_entity = self._hrr.entity_scores(entity)
            by_text = self._hrr.text_scores(entity)
            sims = {
                i: max(s, by_text.get(i, 0.0))
                for i, s in by_entity.items()
                if max(s, by_text.get(i, 0.0)) > self._hrr.threshold()
            }
        else:
            sims = dict.fromkeys(self._entities.linked(entity), 1.0)
            for fact, _ in self.search(entity, min_trust=0.0, limit=limit, count_retrieval=False):
                sims.setdefault(fact.fact_id, 0.5)
        return self._rank(sims, None, limit)

    def reason(self, entities: list[str], *, limit: int = 10) -> list[tuple[Fact, float]]:
        """Facts involving every one of ``entities`` (AND): the weakest entity's score."""
        names = [e for e in entities if isinstance(e, str) and e.strip()]
        if not names:
            raise FactStoreError("reason requires a non-empty 'entities' list")
        combined: dict[int, float] | None = None
        for name in names:
            if self.use_hrr:
                sims = self._hrr.present(name)
            else:
                sims = dict.fromkeys(self._entities.linked(name), 1.0)
            combined = (
                sims
                if combined is None
                else {i: min(s, sims[i]) for i, s in combined.items() if i in sims}
            )
        return self._rank(combined or {}, None, limit)

    def _rank(
        self, sims: dict[int, float], category: str | None, limit: int
    ) -> list[tuple[Fact, float]]:
        facts = self._db.facts(sims)
        ranked = [
            (fact, sims[i] * fact.trust)
            for i, fact in facts.items()
            if category is None or fact.category == category
        ]
        ranked.sort(key=lambda item: (-item[1], -item[0].fact_id))
        return ranked[: max(1, limit)]

    # ----------------------------------------------------------------- contradictions
    def contradictions(
        self, *, fact_ids: Iterable[int] | None = None, limit: int = 10, threshold: float = 0.3
    ) -> list[dict[str, Any]]:
        """Pairs of facts that share entities yet say different things about them, best
        first, as ``{fact_a, fact_b, entity_overlap, content_similarity,
        contradiction_score, shared_entities}`` (scoring: `find_contradictions`)."""
        return find_contradictions(self._db, fact_ids=fact_ids, limit=limit, threshold=threshold)

    def __repr__(self) -> str:
        return f"<FactStore {str(self.path)!r}>"
