"""Hybrid recall on PostgreSQL: the vector index of one owner, searched like SQLite's.

pgvector is not assumed (it is not packaged everywhere). Vectors live in ``hm_vectors``
(schema 6: int8 rows, the SQLite archive's blob format); a search works as on SQLite
(`hermes_memory_sessions.vectors`): every vector's binary code (the signs of the centred
unit vector, 48 bytes at 384 dimensions) is held in this process's memory, loaded
incrementally by ``seq``; a query ranks all codes by Hamming distance in NumPy, and the
best `RESCORE` candidates are read back from PostgreSQL and scored exactly (int8 cosine).
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
    QUEUE_SIZE,
    WORKER_BATCH,
    BinaryCodes,
    DenseHit,
    EmbedderLike,
    EmbeddingWorker,
    VectorIndex,
    hit_chunks,
    index_model,
    unit_rows,
    upgraded,
)

__all__ = ["PgCodeCache", "PgVectorIndex"]

#: Vectors read per round trip while loading the codes.
LOAD_CHUNK = 20000


class PgCodeCache:
    """The `BinaryCodes` of one owner's vectors of one model, refreshed incrementally."""

    def __init__(self, archive: Any, model: str, drop_model: str | None = None) -> None:
        self.archive = archive
        self.model = model
        self.drop_model = drop_model  # the tier above: a message it embeds leaves these codes
        self.codes = BinaryCodes()
        self.lock = threading.Lock()

    def refresh(self) -> None:
        with self.lock:
            self._refresh_locked()

    def clear(self) -> None:
        with self.lock:
            self.codes = BinaryCodes()

    def nearest(self, query: npt.NDArray[np.float32], count: int) -> list[int]:
        """As the SQLite `CodeCache.nearest` (``[]`` at once while
        another thread loads the codes: that query is answered lexically)."""
        if not self.lock.acquire(timeout=0.05):
            return []
        try:
            self._refresh_locked()
            return self.codes.nearest(query, count)
        finally:
            self.lock.release()

    def _top(self) -> int:
        owner = self.archive.owner

        def read(conn: psycopg.Connection[Any]) -> int:
            row = conn.execute(
                "SELECT MAX(seq) AS top FROM hm_vectors WHERE owner = %s", (owner,)
            ).fetchone()
            return int(row["top"]) if row and row["top"] is not None else 0

        return int(self.archive._read(read))

    def _refresh_locked(self) -> None:
        codes = self.codes
        top = self._top()
        if top <= codes.last_seq:
            return
        owner, model = self.archive.owner, self.model
        if codes.n == 0 or (codes.n >= 4 * codes.center_n and codes.center_n < CENTER_SAMPLE):
            # (Re)compute the center, then rebuild every code (as on SQLite).
            sample = self.archive._read(
                lambda conn: [
                    bytes(r["vec"])
                    for r in conn.execute(
                        "SELECT vec FROM hm_vectors WHERE owner = %s AND model = %s"
                        " ORDER BY seq LIMIT %s",
                        (owner, model, CENTER_SAMPLE),
                    ).fetchall()
                    if len(r["vec"]) > 4
                ]
            )
            if codes.n == 0 or len(sample) >= 4 * codes.center_n:
                center = unit_rows(sample).mean(axis=0) if len(sample) >= 16 else None
                codes = self.codes = BinaryCodes(center, len(sample) if center is not None else 0)
        while True:
            after = codes.last_seq
            chunk = self.archive._read(
                lambda conn, a=after: rows_sql.code_rows(conn, owner, a, top, LOAD_CHUNK)
            )
            if not chunk:
                break
            mine = [r for r in chunk if r[3] == model and len(r[2]) > 4]
            codes.add([r[1] for r in mine], [r[2] for r in mine])
            codes.drop(upgraded(chunk, model, self.drop_model))
            codes.last_seq = chunk[-1][0]
        codes.compact()
        codes.last_seq = max(codes.last_seq, top)


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
        self._codes = PgCodeCache(archive, self.model, above)  # type: ignore[assignment]
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
        `RESCORE` read from PostgreSQL, filters applied in score order."""
        candidates = self._codes.nearest(query, vectors_mod.RESCORE)
        if not candidates:
            return []
        width = int(query.size)
        cond, params = Filters(
            role_filter, source_filter, exclude_sources, None, include_inactive
        ).where(self._owner)

        def run(conn: psycopg.Connection[Any]) -> list[DenseHit]:
            pairs = [
                p
                for p in rows_sql.vector_rows(conn, self._owner, self.model, candidates)
                if len(p[1]) == width + 4
            ]
            if not pairs:
                return []
            ids = [p[0] for p in pairs]
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
                        f"SELECT {HIT_SELECT} {BY_ID_FROM} WHERE {cond} AND m.id = ANY(%s)",
                        [*params, [ids[i] for i in chunk]],
                    ).fetchall()
                }
                for i in chunk:  # score order; rows the filters dropped are skipped
                    row = found.get(ids[i])
                    if row is not None:
                        out.append(DenseHit(row, float(scores[i])))
                        if len(out) >= limit:
                            return out
            return out

        return list(self.archive._read(run))
