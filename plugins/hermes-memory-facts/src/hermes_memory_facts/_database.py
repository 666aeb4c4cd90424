"""`FactsDatabase`: the fact store's SQLite file, its schema and its transactions.

One connection per store object, shared by threads under a lock; WAL journal when the file
system allows it; every write is one ``BEGIN IMMEDIATE`` transaction, so other processes
sharing the file wait (``busy_timeout``) rather than fail.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from hermes_memory_core.kit import make_private_dirs
from hermes_memory_facts._records import Fact, FactStoreError

__all__ = ["COLUMNS", "FactsDatabase"]

#: The `Fact` columns of ``facts``, in `Fact` field order.
COLUMNS = (
    "fact_id, content, category, tags, trust_score, retrieval_count, helpful_count, "
    "unhelpful_count, created_at, updated_at"
)

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


class FactsDatabase:
    """The open fact store file (see the module docstring).

    :raises FactStoreError: the file cannot be opened or is not a fact store.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.RLock()
        #: Committed writes so far: caches derived from the rows compare it to stay fresh.
        self.generation = 0
        try:
            make_private_dirs(self.path.parent)
            self.conn = sqlite3.connect(
                str(self.path), timeout=10.0, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise FactStoreError(f"cannot open fact store {self.path}: {exc}") from None
        with self.guard():
            conn = self.conn
            conn.execute("PRAGMA busy_timeout=10000")
            with contextlib.suppress(sqlite3.OperationalError):  # a file system without mmap
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.executescript(_SCHEMA)

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        """Turn an SQLite error into `FactStoreError` and close the file (for setup steps)."""
        try:
            yield
        except sqlite3.Error as exc:
            self.conn.close()
            raise FactStoreError(f"cannot use fact store {self.path}: {exc}") from None

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction, rolled back when the body raises."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")
            self.generation += 1

    def close(self) -> None:
        """Close the file (the store cannot be used afterwards)."""
        with self.lock:
            self.conn.close()

    def fact(self, row: sqlite3.Row | tuple[Any, ...]) -> Fact:
        """The `Fact` of a row of `COLUMNS`, with the names of its entities."""
        fact_id = int(row[0])
        names = tuple(
            r[0]
            for r in self.conn.execute(
                "SELECT e.name FROM fact_entities fe JOIN entities e USING(entity_id) "
                "WHERE fe.fact_id=? ORDER BY e.entity_id",
                (fact_id,),
            )
        )
        return Fact(
            fact_id,
            row[1],
            row[2],
            row[3],
            float(row[4]),
            int(row[5]),
            int(row[6]),
            int(row[7]),
            float(row[8]),
            float(row[9]),
            names,
        )

    def fact_where(self, condition: str, value: Any) -> Fact | None:
        """The one fact matching ``condition`` (a ``column=?`` test of a unique column)."""
        with self.lock:
            row = self.conn.execute(
                f"SELECT {COLUMNS} FROM facts WHERE {condition}",  # noqa: S608
                (value,),
            ).fetchone()
            return self.fact(row) if row else None

    def facts(self, ids: Iterable[int]) -> dict[int, Fact]:
        """The existing facts among ``ids``, by id."""
        out: dict[int, Fact] = {}
        for fact_id in ids:
            fact = self.fact_where("fact_id=?", int(fact_id))
            if fact is not None:
                out[fact_id] = fact
        return out
