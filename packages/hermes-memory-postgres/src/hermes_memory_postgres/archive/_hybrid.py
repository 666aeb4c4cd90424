"""`ArchiveHybrid`: the embedding and discovery methods of `PostgresSessionArchive`.

The SQLite archive's API (`hermes_memory_sessions.vectors.ArchiveVectors`:
``vector_index``, ``embed_pending``, ``vector_coverage``, ``discover_messages``) on
PostgreSQL, plus the three reads `hermes_memory_sessions.search.discover` asks a backend
for (its lexical candidates, adjacent messages, message texts), so the fused ranking is
the same code on both backends. Importing this module imports no numerical library: the
index (`hermes_memory_postgres.archive._vectors`, NumPy) loads when an embedder is attached.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import psycopg
from psycopg.rows import tuple_row

from hermes_memory_postgres.archive._filters import Filters
from hermes_memory_sessions.search import ParsedQuery, lexical_candidates, parse_query
from hermes_memory_sessions.vectors import ArchiveVectors

__all__ = ["ArchiveHybrid"]


class ArchiveHybrid(ArchiveVectors):
    """Vectors and fused discovery for one owner (``vector_index`` None: lexical only)."""

    owner: str
    _read: Any  # ArchiveCore's bounded read (later in the MRO)

    def _vector_index_type(self) -> Any:
        """`PgVectorIndex` (the base class builds one per tier with it).

        :raises ImportError: NumPy is not installed.
        """
        from hermes_memory_postgres.archive._vectors import PgVectorIndex

        return PgVectorIndex

    def attach_embedder(self, embedder: Any, *, background: bool = True, fast: Any = None) -> None:
        """Turn on hybrid recall with ``embedder`` (vectors stored in PostgreSQL; new
        messages embedded in the background unless ``background`` is False); with ``fast``
        too, the two tiers (`hermes_memory_sessions.vectors._tiers`)."""
        self._attach_embedder(embedder, background=background, fast=fast)

    def append_messages(self, session_id: str, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        ids: list[int] = super().append_messages(session_id, messages)  # type: ignore[misc]
        self._notify_vectors(ids)
        return ids

    def close(self) -> None:
        self._close_vectors()
        super().close()  # type: ignore[misc]

    def discover_messages(self, query: str, **options: Any) -> list[dict[str, Any]]:
        """As `ArchiveVectors.discover_messages` (same options), its reads on one pooled
        connection (``pinned_reads``: the dashboard's and the browser's searches)."""
        pinned: Any = getattr(self, "pinned_reads")  # noqa: B009 - ArchiveCore's, later in the MRO
        with pinned():
            found: list[dict[str, Any]] = super().discover_messages(query, **options)
            return found

    def drop_vectors(self) -> int:
        """Delete every stored vector of this owner (any model); returns how many."""
        index = self.vector_index
        if index is not None:
            return int(index.reset(all_models=True))
        write: Any = getattr(self, "_write")  # noqa: B009 - ArchiveCore's, later in the MRO
        return int(
            write(
                lambda conn: (
                    conn.execute("DELETE FROM hm_vectors WHERE owner = %s", (self.owner,)).rowcount
                )
            )
        )

    def vector_coverage(self) -> dict[str, Any]:
        index = self.vector_index
        if index is not None:
            return index.coverage()
        from hermes_memory_postgres.archive._vector_rows import coverage

        return dict(self._read(lambda conn: coverage(conn, self.owner, None)))

    # ------------------------------------------------------------ reads for hybrid.discover

    def hybrid_lexical(
        self, query: str | ParsedQuery, pool: int, filters: dict[str, Any]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[int, tuple[str, str]], list[str]]:
        """``(and_rows, fallback_rows, sources, needles)``: the lexical policy's candidates
        (implicit AND, then the natural-language fallback when AND found fewer than
        ``pool``), each best first; ``rank`` lower is better (as SQLite's BM25)."""
        parsed = parse_query(query)
        if not parsed.terms:
            return [], [], {}, []
        filt = Filters(
            filters.get("role_filter"),
            filters.get("source_filter"),
            filters.get("exclude_sources"),
            None,
            bool(filters.get("include_inactive", False)),
        )
        search: Any = self

        def run(conn: psycopg.Connection[Any]) -> tuple[list[Any], list[Any]]:
            first = search._search_items(conn, list(parsed.items), parsed.has_cjk, pool, filt)
            second: list[dict[str, Any]] = []
            if len(first) < pool and parsed.natural:
                second = search._natural(conn, parsed, pool, filt)
            return first, second

        first, second = self._read(run)
        for row in (*first, *second):
            row["rank"] = -float(row.get("rank") or 0.0)  # ts_rank: higher is better
        return lexical_candidates(first, second, pool, parsed)

    def hybrid_adjacent(self, ids: Sequence[int]) -> dict[int, tuple[int, ...]]:
        """The previous and next message id (same session, by id) of each of ``ids``."""
        if not ids:
            return {}

        def run(conn: psycopg.Connection[Any]) -> list[Any]:
            cur = conn.cursor(row_factory=tuple_row)
            return cur.execute(
                "SELECT m.id,"
                " (SELECT p.id FROM hm_messages p WHERE p.owner = m.owner"
                "  AND p.session_id = m.session_id AND p.id < m.id ORDER BY p.id DESC LIMIT 1),"
                " (SELECT n.id FROM hm_messages n WHERE n.owner = m.owner"
                "  AND n.session_id = m.session_id AND n.id > m.id ORDER BY n.id LIMIT 1)"
                " FROM hm_messages m WHERE m.owner = %s AND m.id = ANY(%s)",
                (self.owner, [int(i) for i in ids]),
            ).fetchall()

        return {int(r[0]): tuple(int(x) for x in r[1:] if x is not None) for r in self._read(run)}

    def hybrid_contents(self, ids: Sequence[int]) -> dict[int, str]:
        """``{id: content}`` of messages (``""`` for a message without text)."""
        if not ids:
            return {}

        def run(conn: psycopg.Connection[Any]) -> list[Any]:
            cur = conn.cursor(row_factory=tuple_row)
            return cur.execute(
                "SELECT id, content FROM hm_messages WHERE owner = %s AND id = ANY(%s)",
                (self.owner, [int(i) for i in ids]),
            ).fetchall()

        return {int(r[0]): r[1] if isinstance(r[1], str) else "" for r in self._read(run)}
