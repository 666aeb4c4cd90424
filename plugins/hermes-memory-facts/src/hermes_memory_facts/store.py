"""`FactStore`: facts in one SQLite file, searched with FTS5, linked to entities, weighted by
trust, checked for contradictions, and (with NumPy) queried compositionally via `hrr`.

One connection per store object, shared by threads under a lock; WAL journal when the file
system allows it; every write is one ``BEGIN IMMEDIATE`` transaction, so other processes
sharing the file wait (``busy_timeout``) rather than fail.

Search terms are computed in Python (`hermes_memory_facts.text.terms`: words plus CJK bigrams
after NFKC and case folding) and indexed in an FTS5 table, so Chinese and Japanese facts are
found by any two-character part of them, and a full-width or zero-width-spaced spelling finds
the plain one.
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_memory_facts import hrr
from hermes_memory_facts.text import (
    MAX_CONTENT_CHARS,
    alias_pairs,
    clean_content,
    extract_entities,
    normalize,
    terms,
)

__all__ = ["CATEGORIES", "Fact", "FactStore", "FactStoreError"]

#: The categories a fact may have.
CATEGORIES: tuple[str, ...] = ("user_pref", "project", "tool", "general")

HELPFUL_DELTA = 0.05
UNHELPFUL_DELTA = -0.10
_CONTRADICTION_WINDOW = 500
_NEGATION = frozenset({"not", "never", "no", "dont", "don't", "doesn't", "isn't", "won't",
                       "cannot", "can't", "不", "没", "别"})  # fmt: skip

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS facts(
    fact_id INTEGER PRIMARY KEY AUTOINCREMENT,
    content TEXT NOT NULL,
    content_key TEXT NOT NULL UNIQUE,
    category TEXT NOT NULL DEFAULT 'general',
    tags TEXT NOT NULL DEFAULT '',
    trust_score REAL NOT NULL DEFAULT 0.5,
    retrieval_count INTEGER NOT NULL DEFAULT 0,
    helpful_count INTEGER NOT NULL DEFAULT 0,
    unhelpful_count INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    hrr_vector BLOB
);
CREATE INDEX IF NOT EXISTS facts_trust ON facts(trust_score DESC);
CREATE INDEX IF NOT EXISTS facts_category ON facts(category);
CREATE TABLE IF NOT EXISTS entities(
    entity_id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL UNIQUE,
    aliases TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS fact_entities(
    fact_id INTEGER NOT NULL REFERENCES facts(fact_id) ON DELETE CASCADE,
    entity_id INTEGER NOT NULL REFERENCES entities(entity_id) ON DELETE CASCADE,
    PRIMARY KEY (fact_id, entity_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS fact_entities_entity ON fact_entities(entity_id);
CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(terms);
"""


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


def _clean_tags(tags: str | Iterable[str] | None) -> str:
    if tags is None:
        return ""
    items = tags.split(",") if isinstance(tags, str) else list(tags)
    seen: dict[str, None] = {}
    for item in items:
        tag = clean_content(str(item)).strip(" ,")
        if tag:
            seen.setdefault(tag[:64], None)
    return ", ".join(list(seen)[:20])


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
        self._lock = threading.RLock()
        self._matrix: tuple[list[int], Any, Any] | None = None  # ids, vectors, norms
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                str(self.path), timeout=10.0, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise FactStoreError(f"cannot open fact store {self.path}: {exc}") from None
        try:
            self._setup()
        except sqlite3.Error as exc:
            self._db.close()
            raise FactStoreError(f"cannot use fact store {self.path}: {exc}") from None

    # ----------------------------------------------------------------- setup
    def _setup(self) -> None:
        db = self._db
        db.execute("PRAGMA busy_timeout=10000")
        with contextlib.suppress(sqlite3.OperationalError):  # e.g. a file system without mmap
            db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA foreign_keys=ON")
        db.executescript(_SCHEMA)
        if self.use_hrr:
            stored = db.execute("SELECT value FROM meta WHERE key='hrr_dim'").fetchone()
            if stored is None or int(stored[0]) != self.hrr_dim:
                self._reencode_all()  # a changed dimension re-encodes instead of failing
            else:
                missing = db.execute(
                    "SELECT fact_id FROM facts WHERE hrr_vector IS NULL OR length(hrr_vector)!=?",
                    (len(hrr.BLOB_MAGIC) + 8 * self.hrr_dim,),
                ).fetchall()
                with self._write():
                    for (fact_id,) in missing:
                        self._store_vector(fact_id)

    def _reencode_all(self) -> None:
        with self._write():
            for (fact_id,) in self._db.execute("SELECT fact_id FROM facts").fetchall():
                self._store_vector(fact_id)
            self._db.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES('hrr_dim', ?)", (str(self.hrr_dim),)
            )

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            self._matrix = None

    def close(self) -> None:
        """Close the database (the store cannot be used afterwards)."""
        with self._lock:
            self._db.close()

    @property
    def capabilities(self) -> list[str]:
        """What this store can do here (``hrr`` only with NumPy)."""
        caps = ["search", "entities", "trust", "contradictions"]
        return [*caps, "hrr"] if self.use_hrr else caps

    # ----------------------------------------------------------------- reading rows
    def _row_to_fact(self, row: sqlite3.Row | tuple[Any, ...]) -> Fact:
        fact_id = int(row[0])
        names = tuple(
            r[0]
            for r in self._db.execute(
                "SELECT e.name FROM fact_entities fe JOIN entities e USING(entity_id) "
                "WHERE fe.fact_id=? ORDER BY e.entity_id",
                (fact_id,),
            )
        )
        return Fact(fact_id, row[1], row[2], row[3], float(row[4]), int(row[5]), int(row[6]),
                    int(row[7]), float(row[8]), float(row[9]), names)  # fmt: skip

    _COLUMNS = (
        "fact_id, content, category, tags, trust_score, retrieval_count, helpful_count, "
        "unhelpful_count, created_at, updated_at"
    )

    def get(self, fact_id: int) -> Fact | None:
        """The fact ``fact_id``, or None."""
        with self._lock:
            row = self._db.execute(
                f"SELECT {self._COLUMNS} FROM facts WHERE fact_id=?",  # noqa: S608
                (int(fact_id),),
            ).fetchone()
            return self._row_to_fact(row) if row else None

    def find(self, content: str) -> Fact | None:
        """The fact whose content equals ``content`` after normalisation, or None."""
        with self._lock:
            row = self._db.execute(
                f"SELECT {self._COLUMNS} FROM facts WHERE content_key=?",  # noqa: S608
                (normalize(content),),
            ).fetchone()
            return self._row_to_fact(row) if row else None

    def count(self) -> int:
        """How many facts are stored."""
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM facts").fetchone()[0])

    def list_facts(
        self, *, category: str | None = None, min_trust: float = 0.0, limit: int = 10
    ) -> list[Fact]:
        """Facts by trust (highest first), then most recently updated."""
        sql = f"SELECT {self._COLUMNS} FROM facts WHERE trust_score >= ?"  # noqa: S608
        params: list[Any] = [min_trust]
        if category:
            sql += " AND category = ?"
            params.append(self._category(category))
        sql += " ORDER BY trust_score DESC, updated_at DESC, fact_id DESC LIMIT ?"
        params.append(max(1, limit))
        with self._lock:
            return [self._row_to_fact(r) for r in self._db.execute(sql, params).fetchall()]

    # ----------------------------------------------------------------- writing
    @staticmethod
    def _category(category: str | None) -> str:
        value = (category or "general").strip().lower()
        if value not in CATEGORIES:
            raise FactStoreError(f"category must be one of {', '.join(CATEGORIES)}, got {value!r}")
        return value

    @staticmethod
    def _content(content: str) -> str:
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

    def add(
        self, content: str, *, category: str | None = "general", tags: str | Iterable[str] = ""
    ) -> tuple[int, bool]:
        """Store a fact; returns ``(fact_id, created)``.

        Content equal to a stored fact after normalisation (case, width, invisible
        characters, spacing) is not stored twice: the existing id comes back with
        ``created=False`` and nothing changes.

        :raises FactStoreError: empty or over-long content, unknown category.
        """
        text, cat, tag_text = self._content(content), self._category(category), _clean_tags(tags)
        key = normalize(text)
        now = time.time()
        with self._write() as db:
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
        with self._write() as db:
            row = db.execute(
                "SELECT content, category, tags, trust_score FROM facts WHERE fact_id=?",
                (int(fact_id),),
            ).fetchone()
            if row is None:
                return False
            text = self._content(content) if content is not None else row[0]
            cat = self._category(category) if category is not None else row[1]
            tag_text = _clean_tags(tags) if tags is not None else row[2]
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
        with self._write() as db:
            gone = db.execute("DELETE FROM facts WHERE fact_id=?", (int(fact_id),)).rowcount
            db.execute("DELETE FROM facts_fts WHERE rowid=?", (int(fact_id),))
        return bool(gone)

    def feedback(self, fact_id: int, *, helpful: bool) -> dict[str, Any] | None:
        """Adjust trust: helpful +0.05 (and count it), unhelpful −0.10; clamped to [0, 1].

        :return: ``{fact_id, old_trust, new_trust, helpful_count}``, or None for an unknown id.
        """
        with self._write() as db:
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
        return {"fact_id": int(fact_id), "old_trust": round(old, 3), "new_trust": round(new, 3),
                "helpful_count": count}  # fmt: skip

    # ----------------------------------------------------------------- entities and index
    def _resolve_entity(self, name: str) -> int:
        db = self._db
        key = normalize(name)
        row = db.execute("SELECT entity_id FROM entities WHERE name_key=?", (key,)).fetchone()
        if row:
            return int(row[0])
        for entity_id, aliases in db.execute(
            "SELECT entity_id, aliases FROM entities WHERE aliases != ''"
        ):
            if key in {normalize(a) for a in aliases.split(",")}:
                return int(entity_id)
        cur = db.execute(
            "INSERT INTO entities(name, name_key, created_at) VALUES(?,?,?)",
            (name, key, time.time()),
        )
        return int(cur.lastrowid or 0)

    def entity_id(self, name: str) -> int | None:
        """The id of the entity called ``name`` (or with that alias), or None."""
        key = normalize(name)
        with self._lock:
            row = self._db.execute(
                "SELECT entity_id FROM entities WHERE name_key=?", (key,)
            ).fetchone()
            if row:
                return int(row[0])
            for entity_id, aliases in self._db.execute(
                "SELECT entity_id, aliases FROM entities WHERE aliases != ''"
            ):
                if key in {normalize(a) for a in aliases.split(",")}:
                    return int(entity_id)
        return None

    def _index(self, fact_id: int, text: str, tags: str) -> None:
        """Entities, links, FTS terms and the HRR vector of one fact (inside a write)."""
        db = self._db
        for name, alias in alias_pairs(text):
            entity_id = self._resolve_entity(name)
            if self.entity_id(alias) in (None, entity_id):
                aliases = db.execute(
                    "SELECT aliases FROM entities WHERE entity_id=?", (entity_id,)
                ).fetchone()[0]
                known = [a for a in aliases.split(",") if a]
                if normalize(alias) not in {normalize(a) for a in known}:
                    db.execute(
                        "UPDATE entities SET aliases=? WHERE entity_id=?",
                        (",".join([*known, alias.replace(",", " ")]), entity_id),
                    )
        db.execute("DELETE FROM fact_entities WHERE fact_id=?", (fact_id,))
        for name in extract_entities(text):
            db.execute(
                "INSERT OR IGNORE INTO fact_entities(fact_id, entity_id) VALUES(?,?)",
                (fact_id, self._resolve_entity(name)),
            )
        db.execute("DELETE FROM facts_fts WHERE rowid=?", (fact_id,))
        db.execute(
            "INSERT INTO facts_fts(rowid, terms) VALUES(?,?)",
            (fact_id, " ".join(terms(f"{text} {tags}", keep_stop_words=True))),
        )
        if self.use_hrr:
            self._store_vector(fact_id)

    def _entity_keys(self, fact_id: int) -> list[str]:
        return [
            r[0]
            for r in self._db.execute(
                "SELECT e.name_key FROM fact_entities fe JOIN entities e USING(entity_id) "
                "WHERE fe.fact_id=?",
                (fact_id,),
            )
        ]

    # ----------------------------------------------------------------- HRR encoding
    def _text_vector(self, text: str) -> Any:
        words = terms(text) or terms(text, keep_stop_words=True)
        if not words:
            return hrr.zeros(self.hrr_dim)
        total = hrr.bundle(*(hrr.atom(f"w:{w}", self.hrr_dim) for w in words))
        return total / math.sqrt(len(words))

    def _entity_atom(self, name_key: str) -> Any:
        return hrr.atom(f"e:{name_key}", self.hrr_dim)

    def encode_fact(self, text: str, entity_keys: Iterable[str]) -> Any:
        """The HRR vector of a fact: ``bind(ROLE_CONTENT, text) + Σ bind(ROLE_ENTITY, e)``,
        where ``text`` is the normalised sum of the atoms of its words."""
        dim = self.hrr_dim
        parts = [hrr.bind(hrr.atom(hrr.ROLE_CONTENT, dim), self._text_vector(text))]
        role = hrr.atom(hrr.ROLE_ENTITY, dim)
        parts += [hrr.bind(role, self._entity_atom(k)) for k in entity_keys]
        return hrr.bundle(*parts)

    def _store_vector(self, fact_id: int) -> None:
        row = self._db.execute(
            "SELECT content, tags FROM facts WHERE fact_id=?", (fact_id,)
        ).fetchone()
        if row is None:
            return
        vector = self.encode_fact(f"{row[0]} {row[1]}", self._entity_keys(fact_id))
        self._db.execute(
            "UPDATE facts SET hrr_vector=? WHERE fact_id=?", (hrr.to_blob(vector), fact_id)
        )

    def _vectors(self) -> tuple[list[int], Any, Any]:
        """All fact ids, their vectors as one matrix, and the row norms (cached until a write)."""
        import numpy as np

        with self._lock:
            if self._matrix is None:
                ids: list[int] = []
                rows: list[Any] = []
                for fact_id, blob in self._db.execute(
                    "SELECT fact_id, hrr_vector FROM facts WHERE hrr_vector IS NOT NULL"
                ):
                    vector = hrr.from_blob(blob, self.hrr_dim)
                    if vector is not None:
                        ids.append(int(fact_id))
                        rows.append(vector)
                matrix = np.stack(rows) if rows else np.zeros((0, self.hrr_dim), np.complex64)
                norms = np.linalg.norm(matrix, axis=1) if rows else np.zeros(0)
                self._matrix = (ids, matrix, norms)
            return self._matrix

    def _role_scores(self, role: str, target: Any) -> dict[int, float]:
        """Per fact: cosine of ``unbind(fact, role)`` with ``target``."""
        import numpy as np

        ids, matrix, norms = self._vectors()
        if not ids:
            return {}
        key = hrr.atom(role, self.hrr_dim)
        probe = key * target  # <fact * conj(key), target> = <fact, key * target>
        target_norm = float(np.linalg.norm(target)) or 1.0
        dots = np.real(matrix @ np.conj(probe))
        sims = dots / (np.maximum(norms, 1e-9) * target_norm)
        return {fact_id: float(s) for fact_id, s in zip(ids, sims, strict=True)}

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
        cat = self._category(category) if category else None
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in dict.fromkeys(words))
        sql = (
            f"SELECT {self._COLUMNS.replace('fact_id', 'f.fact_id', 1)}, bm25(facts_fts) "  # noqa: S608
            "FROM facts_fts JOIN facts f ON f.fact_id = facts_fts.rowid "
            "WHERE facts_fts MATCH ? AND f.trust_score >= ?"
        )
        params: list[Any] = [match, min_trust]
        if cat:
            sql += " AND f.category = ?"
            params.append(cat)
        sql += " ORDER BY bm25(facts_fts) LIMIT ?"
        params.append(max(1, limit) * 5)
        with self._lock:
            try:
                rows = self._db.execute(sql, params).fetchall()
            except sqlite3.OperationalError as exc:
                raise FactStoreError(f"search failed: {exc}") from None
            if not rows:
                return []
            query_terms = set(words)
            best = max(abs(float(r[10])) for r in rows) or 1.0
            hrr_sims: dict[int, float] = {}
            if self.use_hrr:
                hrr_sims = self._role_scores(hrr.ROLE_CONTENT, self._text_vector(query))
            w_fts, w_jac, w_hrr = (0.4, 0.3, self.hrr_weight) if self.use_hrr else (0.6, 0.4, 0.0)
            now = time.time()
            scored: list[tuple[Fact, float]] = []
            for row in rows:
                fact = self._row_to_fact(row[:10])
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
        with self._write() as db:
            db.executemany(
                "UPDATE facts SET retrieval_count = retrieval_count + 1 WHERE fact_id=?",
                [(i,) for i in ids],
            )

    def _facts(self, ids: Iterable[int]) -> dict[int, Fact]:
        out: dict[int, Fact] = {}
        for fact_id in ids:
            fact = self.get(fact_id)
            if fact is not None:
                out[fact_id] = fact
        return out

    def _linked(self, name: str) -> set[int]:
        entity_id = self.entity_id(name)
        if entity_id is None:
            return set()
        with self._lock:
            return {
                int(r[0])
                for r in self._db.execute(
                    "SELECT fact_id FROM fact_entities WHERE entity_id=?", (entity_id,)
                )
            }

    def _entity_key(self, name: str) -> str:
        entity_id = self.entity_id(name)
        if entity_id is None:
            return normalize(name)
        with self._lock:
            row = self._db.execute(
                "SELECT name_key FROM entities WHERE entity_id=?", (entity_id,)
            ).fetchone()
        return str(row[0]) if row else normalize(name)

    def _probe_scores(self, entity: str) -> dict[int, float]:
        """Per fact: how strongly ``entity`` fills its entity role (HRR unbinding)."""
        return self._role_scores(hrr.ROLE_ENTITY, self._entity_atom(self._entity_key(entity)))

    #: HRR cosine above which an entity counts as present in a fact (noise is ~1/sqrt(dim)).
    def _threshold(self) -> float:
        return 4.0 / math.sqrt(self.hrr_dim)

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
        cat = self._category(category) if category else None
        if self.use_hrr:
            sims = {i: s for i, s in self._probe_scores(entity).items() if s > self._threshold()}
        else:
            sims = dict.fromkeys(self._linked(entity), 1.0)
        return self._rank(sims, cat, limit)

    def related(self, entity: str, *, limit: int = 10) -> list[tuple[Fact, float]]:
        """Facts connected to ``entity`` in any role: as a linked entity or in the words of
        the content (HRR: the larger of the two unbinding similarities; without HRR: linked
        facts plus full-text matches of the name)."""
        if not entity.strip():
            raise FactStoreError("entity is empty")
        if self.use_hrr:
            by_entity = self._probe_scores(entity)
            by_text = self._role_scores(hrr.ROLE_CONTENT, self._text_vector(entity))
            sims = {
                i: max(s, by_text.get(i, 0.0))
                for i, s in by_entity.items()
                if max(s, by_text.get(i, 0.0)) > self._threshold()
            }
        else:
            sims = dict.fromkeys(self._linked(entity), 1.0)
            for fact, _ in self.search(entity, min_trust=0.0, limit=limit,
                                       count_retrieval=False):  # fmt: skip
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
                sims = {i: s for i, s in self._probe_scores(name).items() if s > self._threshold()}
            else:
                sims = dict.fromkeys(self._linked(name), 1.0)
            combined = (
                sims
                if combined is None
                else {i: min(s, sims[i]) for i, s in combined.items() if i in sims}
            )
        return self._rank(combined or {}, None, limit)

    def _rank(
        self, sims: dict[int, float], category: str | None, limit: int
    ) -> list[tuple[Fact, float]]:
        facts = self._facts(sims)
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
        with self._lock:
            recent = [
                int(r[0])
                for r in self._db.execute(
                    "SELECT fact_id FROM facts ORDER BY updated_at DESC, fact_id DESC LIMIT ?",
                    (_CONTRADICTION_WINDOW,),
                )
            ]
            focus = set(fact_ids) if fact_ids is not None else None
            pool = set(recent) | (focus or set())
            links: dict[int, dict[str, str]] = {}
            for fact_id, key, name in self._db.execute(
                "SELECT fe.fact_id, e.name_key, e.name FROM fact_entities fe "
                "JOIN entities e USING(entity_id)"
            ):
                if int(fact_id) in pool:
                    links.setdefault(int(fact_id), {})[key] = name
            facts = self._facts(links)
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
                    found.append({
                        "fact_a": facts[a].as_dict(),
                        "fact_b": facts[b].as_dict(),
                        "entity_overlap": round(overlap, 3),
                        "content_similarity": round(sim, 3),
                        "contradiction_score": round(score, 3),
                        "shared_entities": sorted(links[a][k] for k in shared),
                    })  # fmt: skip
        found.sort(key=lambda item: -float(item["contradiction_score"]))
        return found[: max(1, limit)]

    def __repr__(self) -> str:
        return f"<FactStore {str(self.path)!r}>"
