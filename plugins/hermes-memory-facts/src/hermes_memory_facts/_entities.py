"""`EntityIndex`: the entities facts mention, their aliases, and the full-text terms.

Entities are found by rules (`hermes_memory_facts._text.extract_entities`) and matched by
their normalised name or any alias ("Bob (aka Robert)" makes "Robert" an alias of "Bob"),
so a later fact about either name links to the same entity. Search terms are computed in
Python (words plus CJK bigrams after NFKC and case folding) and stored in an FTS5 table.
"""

from __future__ import annotations

import sqlite3
import time

from hermes_memory_facts._database import FactsDatabase
from hermes_memory_facts._text import alias_pairs, extract_entities, normalize, terms

__all__ = ["EntityIndex"]


class EntityIndex:
    """Entity and term indexing of the facts in ``db``."""

    def __init__(self, db: FactsDatabase) -> None:
        self.db = db

    def entity_id(self, name: str) -> int | None:
        """The id of the entity called ``name`` (or with that alias), or None."""
        with self.db.lock:
            return _lookup(self.db.conn, normalize(name))

    def entity_key(self, name: str) -> str:
        """The normalised name of the entity ``name`` denotes (``name`` itself normalised
        when no entity has it as name or alias)."""
        entity_id = self.entity_id(name)
        if entity_id is None:
            return normalize(name)
        with self.db.lock:
            row = self.db.conn.execute(
                "SELECT name_key FROM entities WHERE entity_id=?", (entity_id,)
            ).fetchone()
        return str(row[0]) if row else normalize(name)

    def linked(self, name: str) -> set[int]:
        """Ids of the facts linked to the entity ``name`` denotes."""
        entity_id = self.entity_id(name)
        if entity_id is None:
            return set()
        with self.db.lock:
            return {
                int(r[0])
                for r in self.db.conn.execute(
                    "SELECT fact_id FROM fact_entities WHERE entity_id=?", (entity_id,)
                )
            }

    def entity_keys(self, fact_id: int) -> list[str]:
        """Normalised names of the entities linked to one fact."""
        return [
            r[0]
            for r in self.db.conn.execute(
                "SELECT e.name_key FROM fact_entities fe JOIN entities e USING(entity_id) "
                "WHERE fe.fact_id=?",
                (fact_id,),
            )
        ]

    def index(self, fact_id: int, text: str, tags: str) -> None:
        """Entities, aliases, links and FTS terms of one fact (inside a write)."""
        db = self.db.conn
        for name, alias in alias_pairs(text):
            entity_id = self._resolve(name)
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
                (fact_id, self._resolve(name)),
            )
        db.execute("DELETE FROM facts_fts WHERE rowid=?", (fact_id,))
        db.execute(
            "INSERT INTO facts_fts(rowid, terms) VALUES(?,?)",
            (fact_id, " ".join(terms(f"{text} {tags}", keep_stop_words=True))),
        )

    def _resolve(self, name: str) -> int:
        """The entity ``name`` denotes, created when there is none (inside a write)."""
        key = normalize(name)
        found = _lookup(self.db.conn, key)
        if found is not None:
            return found
        cur = self.db.conn.execute(
            "INSERT INTO entities(name, name_key, created_at) VALUES(?,?,?)",
            (name, key, time.time()),
        )
        return int(cur.lastrowid or 0)


def _lookup(conn: sqlite3.Connection, key: str) -> int | None:
    """The entity whose normalised name or one of whose aliases is ``key``."""
    row = conn.execute("SELECT entity_id FROM entities WHERE name_key=?", (key,)).fetchone()
    if row:
        return int(row[0])
    for entity_id, aliases in conn.execute(
        "SELECT entity_id, aliases FROM entities WHERE aliases != ''"
    ):
        if key in {normalize(a) for a in aliases.split(",")}:
            return int(entity_id)
    return None
