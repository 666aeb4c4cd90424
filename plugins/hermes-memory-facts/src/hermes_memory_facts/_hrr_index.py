"""`HrrIndex`: the holographic (HRR) vectors of the facts and the queries over them.

Each fact is stored as ``bind(ROLE_CONTENT, text) + Σ bind(ROLE_ENTITY, entity)`` (see
`hermes_memory_facts._hrr`), so "which facts have Alice as an entity" is answered by
unbinding the entity role from every fact at once and comparing with Alice's atom. Used
only when NumPy is installed; the matrix of all vectors is cached until the next write.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from hermes_memory_facts import _hrr as hrr
from hermes_memory_facts._database import FactsDatabase
from hermes_memory_facts._entities import EntityIndex
from hermes_memory_facts._text import terms

__all__ = ["HrrIndex"]


class HrrIndex:
    """HRR encoding and similarity of the facts in ``db`` at dimension ``dim``."""

    def __init__(self, db: FactsDatabase, entities: EntityIndex, dim: int) -> None:
        self.db = db
        self.entities = entities
        self.dim = dim
        self._matrix: tuple[list[int], Any, Any] | None = None  # ids, vectors, norms
        self._generation = -1

    def sync(self) -> None:
        """Encode the facts that lack a vector of this dimension; a changed dimension
        re-encodes everything instead of failing."""
        conn = self.db.conn
        stored = conn.execute("SELECT value FROM meta WHERE key='hrr_dim'").fetchone()
        if stored is None or int(stored[0]) != self.dim:
            with self.db.write():
                for (fact_id,) in conn.execute("SELECT fact_id FROM facts").fetchall():
                    self.store_vector(fact_id)
                conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES('hrr_dim', ?)", (str(self.dim),)
                )
            return
        missing = conn.execute(
            "SELECT fact_id FROM facts WHERE hrr_vector IS NULL OR length(hrr_vector)!=?",
            (len(hrr.BLOB_MAGIC) + 8 * self.dim,),
        ).fetchall()
        with self.db.write():
            for (fact_id,) in missing:
                self.store_vector(fact_id)

    def text_vector(self, text: str) -> Any:
        """The normalised sum of the atoms of the words of ``text``."""
        words = terms(text) or terms(text, keep_stop_words=True)
        if not words:
            return hrr.zeros(self.dim)
        total = hrr.bundle(*(hrr.atom(f"w:{w}", self.dim) for w in words))
        return total / math.sqrt(len(words))

    def entity_atom(self, name_key: str) -> Any:
        """The atom of one entity (by normalised name)."""
        return hrr.atom(f"e:{name_key}", self.dim)

    def encode_fact(self, text: str, entity_keys: Iterable[str]) -> Any:
        """The HRR vector of a fact (see the module docstring)."""
        parts = [hrr.bind(hrr.atom(hrr.ROLE_CONTENT, self.dim), self.text_vector(text))]
        role = hrr.atom(hrr.ROLE_ENTITY, self.dim)
        parts += [hrr.bind(role, self.entity_atom(k)) for k in entity_keys]
        return hrr.bundle(*parts)

    def store_vector(self, fact_id: int) -> None:
        """Encode one fact and store its vector (inside a write)."""
        conn = self.db.conn
        row = conn.execute("SELECT content, tags FROM facts WHERE fact_id=?", (fact_id,)).fetchone()
        if row is None:
            return
        vector = self.encode_fact(f"{row[0]} {row[1]}", self.entities.entity_keys(fact_id))
        conn.execute(
            "UPDATE facts SET hrr_vector=? WHERE fact_id=?", (hrr.to_blob(vector), fact_id)
        )

    def threshold(self) -> float:
        """HRR cosine above which an entity counts as present in a fact (noise is about
        1/sqrt(dim))."""
        return 4.0 / math.sqrt(self.dim)

    def role_scores(self, role: str, target: Any) -> dict[int, float]:
        """Per fact: cosine of ``unbind(fact, role)`` with ``target``."""
        import numpy as np

        ids, matrix, norms = self._vectors()
        if not ids:
            return {}
        key = hrr.atom(role, self.dim)
        probe = key * target  # <fact * conj(key), target> = <fact, key * target>
        target_norm = float(np.linalg.norm(target)) or 1.0
        dots = np.real(matrix @ np.conj(probe))
        sims = dots / (np.maximum(norms, 1e-9) * target_norm)
        return {fact_id: float(s) for fact_id, s in zip(ids, sims, strict=True)}

    def text_scores(self, text: str) -> dict[int, float]:
        """Per fact: how close its content is to ``text``."""
        return self.role_scores(hrr.ROLE_CONTENT, self.text_vector(text))

    def entity_scores(self, entity: str) -> dict[int, float]:
        """Per fact: how strongly ``entity`` fills its entity role (HRR unbinding)."""
        atom = self.entity_atom(self.entities.entity_key(entity))
        return self.role_scores(hrr.ROLE_ENTITY, atom)

    def present(self, entity: str) -> dict[int, float]:
        """`entity_scores` above `threshold`: the facts ``entity`` is in."""
        return {i: s for i, s in self.entity_scores(entity).items() if s > self.threshold()}

    def _vectors(self) -> tuple[list[int], Any, Any]:
        """All fact ids, their vectors as one matrix, and the row norms (cached until a write)."""
        import numpy as np

        with self.db.lock:
            if self._matrix is None or self._generation != self.db.generation:
                ids: list[int] = []
                rows: list[Any] = []
                for fact_id, blob in self.db.conn.execute(
                    "SELECT fact_id, hrr_vector FROM facts WHERE hrr_vector IS NOT NULL"
                ):
                    vector = hrr.from_blob(blob, self.dim)
                    if vector is not None:
                        ids.append(int(fact_id))
                        rows.append(vector)
                matrix = np.stack(rows) if rows else np.zeros((0, self.dim), np.complex64)
                norms = np.linalg.norm(matrix, axis=1) if rows else np.zeros(0)
                self._matrix = (ids, matrix, norms)
                self._generation = self.db.generation
            return self._matrix
