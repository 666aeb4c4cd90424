"""Hybrid recall on PostgreSQL: the vector index of one owner, searched like SQLite's.

pgvector is not assumed (it is not packaged everywhere). Vectors live in ``hm_vectors``
(schema 6: int8 rows, the SQLite archive's blob format); a search works as on SQLite
(`hermes_memory_sessions.vectors`): every vector's binary code (the signs of the centred
unit vector, 48 bytes at 384 dimensions) is held in this process's memory, loaded
incrementally by ``seq``; a query ranks all codes by Hamming distance in NumPy, and the
best `RESCORE` candidates are scored exactly (int8 cosine) over their vectors, kept in
memory beside the codes within `VectorIndex.memory_budget` (reading them from PostgreSQL
took 8-12 ms of a search at a million messages) and read from PostgreSQL beyond it.
Every host of a multi-host deployment thus answers from the same stored vectors; a host
sees another host's new vectors at its next search (one indexed range read by ``seq``).

Why not Hamming distance in SQL (``bit_count`` over ``bit(384)`` XOR): it reads and
computes over every row of the owner on each query, a sequential scan of the table, where
the in-memory pass costs one vectorised XOR/popcount over contiguous words.

Embedding is the SQLite archive's: a background worker (`EmbeddingWorker`) embeds new
messages after each append; ``embed_pending`` backfills; the fused ranking is
`hermes_memory_sessions.search.discover` with this archive's lexical search.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg

import hermes_memory_sessions.vectors as vectors_mod
from hermes_memory_postgres.archive import _vector_rows as rows_sql
from hermes_memory_postgres.archive._filters import BY_ID_FROM, HIT_SELECT, Filters
from hermes_memory_sessions.vectors import (
    CATCH_UP,
    CENTER_SAMPLE,
    LOAD_CHUNK,
    QUEUE_SIZE,
    WORKER_BATCH,
    CodeCache,
    DenseHit,
    EmbedderLike,
    EmbeddingWorker,
    VectorIndex,
    hit_chunks,
    index_model,
)

__all__ = ["PgCodeCache", "PgVectorIndex"]


class PgCodeCache(CodeCache):
    """The `CodeCache` of one owner's vectors of one model in ``hm_vectors``: the same
    incremental refresh, int8 vectors kept in memory within the budget, its three reads
    made on PostgreSQL."""

    @property
    def archive(self) -> Any:
        """The `PostgresSessionArchive` (``store``, typed for SQLite in `CodeCache`)."""
        return self.store

    def _top_seq(self) -> int | None:
        owner = self.archive.owner

        def read(conn: psycopg.Connection[Any]) -> int | None:
            row = conn.execute(
                "SELECT MAX(seq) AS top FROM hm_vectors WHERE owner = %s", (owner,)
            ).fetchone()
            return None if not row or row["top"] is None else int(row["top"])

        top: int | None = self.archive._read(read)
        return top

    def _center_sample(self) -> list[bytes]:
        owner, model = self.archive.owner, self.model
        sample: list[bytes] = self.archive._read(
            lambda conn: [
                bytes(r["vec"])
                for r in conn.execute(
                    "SELECT vec FROM hm_vectors WHERE owner = %s AND model = %s"
                    " ORDER BY seq LIMIT %s",
                    (owner, model, CENTER_SAMPLE),
                ).fetchall()
            ]
        )
        return sample

    def _rows_after(self, after: int, top: int) -> list[tuple[int, int, bytes, str]]:
        owner = self.archive.owner
        rows: list[tuple[int, int, bytes, str]] = self.archive._read(
            lambda conn: rows_sql.code_rows(conn, owner, after, top, LOAD_CHUNK)
        )
        return rows


class PgVectorIndex(VectorIndex):
    """`VectorIndex` over a `PostgresSessionArchive` (same API, same answers)."""

    def __init__(
        self,
        archive: Any,
        embedder: EmbedderLike,
        *,
        background: bool = True,
        above: str | None = None,
    ) -> None:
        # Not VectorIndex.__init__: that one creates SQLite's table (here: schema 6).
        self.store = archive
        self.archive: Any = archive  # the PostgreSQL archive (``store`` is typed for SQLite)
        self.embedder = embedder
        self.model = index_model(str(embedder.name), vectors_mod.CONTEXT_BEFORE)
        self.above = above
        self._codes = PgCodeCache(archive, self.model, above, memory_budget=self.memory_budget)
        self._embed_lock = threading.Lock()
        self.worker = EmbeddingWorker(
            embed=self._embed_ids,
            warm_up=self._warm_up,
            closed=lambda: bool(getattr(archive, "_closed", False)),
            queue_size=QUEUE_SIZE,
            batch_size=WORKER_BATCH,
            idle=self._idle_backfill,
        )
        self._query_lock = threading.Lock()
        self._query_pool = None
        self._query_future = None
        if background:
            self.worker.start()

    @property
    def _owner(self) -> str:
        return str(self.archive.owner)

    def _catch_up(self) -> None:
        ids = self.archive._read(
            lambda conn: rows_sql.newest_pending(
                conn, self._owner, self.model, CATCH_UP, self.above
            )
        )
        self.notify(ids)

    def _embed_ids(self, ids: Sequence[int]) -> int:
        with self._embed_lock:

            def read(conn: psycopg.Connection[Any]) -> list[tuple[int, str]]:
                done = rows_sql.embedded_among(conn, self._owner, self.model, ids, self.above)
                return rows_sql.documents(conn, self._owner, [i for i in ids if i not in done])

            docs = self.archive._read(read)
            if not docs:
                return 0
            blobs = self._embed_texts([text for _, text in docs])
            pairs = [(mid, blob) for (mid, _), blob in zip(docs, blobs, strict=True)]
            self.archive._write(
                lambda conn: rows_sql.store_vectors(
                    conn, self._owner, self.model, pairs, self.above
                )
            )
            self.worker.succeeded()
            return len(docs)

    def pending_ids(
        self, after: int = 0, limit: int = 256, *, before: int | None = None
    ) -> list[int]:
        return list(
            self.archive._read(
                lambda conn: rows_sql.pending_ids(
                    conn, self._owner, self.model, after, limit, before, self.above
                )
            )
        )

    def documents(self, ids: Sequence[int]) -> dict[int, str]:
        """``{id: text}``: what is embedded for each of ``ids`` (with its context)."""
        return dict(self.archive._read(lambda conn: rows_sql.documents(conn, self._owner, ids)))

    def reset(self, *, all_models: bool = True) -> int:
        def run(conn: psycopg.Connection[Any]) -> int:
            if all_models:
                cur = conn.execute("DELETE FROM hm_vectors WHERE owner = %s", (self._owner,))
            else:
                cur = conn.execute(
                    "DELETE FROM hm_vectors WHERE owner = %s AND model <> %s AND model <> %s",
                    (self._owner, self.model, self.above or self.model),
                )
            return int(cur.rowcount)

        dropped = int(self.archive._write(run))
        self._codes.clear()
        return dropped

    def coverage(self) -> dict[str, Any]:
        counts = self.archive._read(lambda conn: rows_sql.coverage(conn, self._owner, self.model))
        return {**counts, "pending_queue": self.worker.queued(), "last_error": self.last_error}

    def search(
        self,
        query: npt.NDArray[np.float32],
        *,
        limit: int,
        role_filter: Sequence[str] | None = None,
        exclude_sources: Sequence[str] | None = None,
        source_filter: Sequence[str] | None = None,
        include_inactive: bool = False,
    ) -> list[DenseHit]:
        """As `VectorIndex.search`: binary pass in memory, exact cosine of the best
        `RESCORE` (their int8 vectors kept in memory within `memory_budget`, else read
        from PostgreSQL), filters applied in score order."""
        ids, seqs, kept = self._take_prepared(query)
        if not ids.size:
            return []
        width = int(query.size)
        cond, params = Filters(
            role_filter, source_filter, exclude_sources, None, include_inactive
        ).where(self._owner)
        # A hit row carries the seq of its message's vector now (primary key lookup, no read
        # of the vector): a vector from memory that was deleted or replaced since it was
        # loaded has another seq (or none), and its message is not returned.
        sql = (
            f"SELECT {HIT_SELECT}, (SELECT v.seq FROM hm_vectors v WHERE v.owner = m.owner"  # noqa: S608
            f" AND v.message_id = m.id AND v.model = %s) AS _seq {BY_ID_FROM}"
            f" WHERE {cond} AND m.id = ANY(%s)"
        )

        def run(conn: psycopg.Connection[Any]) -> list[DenseHit]:
            id_list: list[int]
            seq_list: list[int | None]
            if kept is not None and kept.shape[1] == width:
                id_list, seq_list = ids.tolist(), seqs.tolist()
                matrix = kept.astype(np.float32)
            else:  # over the memory budget: the candidates' current vectors
                pairs = [
                    p
                    for p in rows_sql.vector_rows(conn, self._owner, self.model, ids.tolist())
                    if len(p[1]) == width + 4
                ]
                if not pairs:
                    return []
                id_list = [p[0] for p in pairs]
                seq_list = [None] * len(pairs)  # read now: current by construction
                packed = np.frombuffer(b"".join(p[1] for p in pairs), dtype=np.int8)
                matrix = packed.reshape(len(pairs), width + 4)[:, 4:].astype(np.float32)
            norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
            scores = (matrix @ query) / np.where(norms > 0, norms, 1.0)
            order = [int(i) for i in np.argsort(-scores, kind="stable")]
            out: list[DenseHit] = []
            start = 0
            for size in hit_chunks(limit, len(order)):  # as many rows as the filters need
                chunk = order[start : start + size]
                start += size
                found = {
                    int(r["id"]): dict(r)
                    for r in conn.execute(
                        sql, [self.model, *params, [id_list[i] for i in chunk]]
                    ).fetchall()
                }
                for i in chunk:  # score order; rows the filters dropped are skipped
                    row = found.get(id_list[i])
                    if row is None:
                        continue
                    current = row.pop("_seq")
                    if seq_list[i] is not None and current != seq_list[i]:
                        continue  # a stale vector from memory
                    out.append(DenseHit(row, float(scores[i])))
                    if len(out) >= limit:
                        return out
            return out

        return list(self.archive._read(run))
