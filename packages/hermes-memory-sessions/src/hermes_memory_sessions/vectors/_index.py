"""The archive's vector index: one int8 vector per message and model, beside the messages.

Storage (same SQLite file as the messages, created on first use by an archive with an
embedder attached)::

    hm_vectors(seq INTEGER PRIMARY KEY AUTOINCREMENT,   -- insertion order (incremental loads)
               message_id INTEGER NOT NULL,             -- messages.id
               model TEXT NOT NULL,                     -- Embedder.name + context window
               vec BLOB NOT NULL,                       -- hermes_memory_vectors.quantize_int8
               UNIQUE (message_id, model))

Triggers keep it in sync with the messages whatever code deletes them (``delete_session``,
``prune``, another program): a deleted message loses its vector, an edited message (and the
two messages after it, whose context it is) is embedded again. Vectors of another model are
ignored by search and replaced as messages are embedded again (``sessions embed --reset``
drops them at once). Without an embedder the table is never read: search is lexical. With
two tiers (`hermes_memory_sessions.vectors._tiers`) the fast tier's index has ``above`` set
to the quality model: it never embeds a message the quality tier holds, and a quality vector
replaces the message's fast one, so a message keeps one vector.

What is embedded: messages with role ``user`` or ``assistant`` and non-empty content (the
roles `session_search` searches by default), each *together with the two conversational
messages before it* in the same session (`CONTEXT_BEFORE`; measured on the LoCoMo
development set, see ``docs/benchmarks.md``): a reply such as "yes, every Sunday" means
something only next to the question it answers.

Search (`VectorIndex.search`): a binary code (one sign bit per dimension) of every vector is
kept in memory (48 bytes per message for 384 dimensions); a query ranks all codes by Hamming
distance, and the best `RESCORE` candidates are scored exactly (cosine over their int8
vectors, kept in memory beside the codes while they fit `VectorIndex.memory_budget`, 384
bytes a message, else read from SQLite by stored row, ``seq``); the hit rows (message and
session) are read only for the best of them, as many as the filters need, each with the
seq of its message's current vector (a vector deleted or replaced since it was loaded has
another seq, or none: never returned). An archive with
fewer than `RESCORE` vectors is scored exactly. With the vectors in memory, the thread that
embeds the query (`start_query`) also runs the Hamming pass, while the caller reads the
lexical candidates: the two overlap instead of adding up.

Embedding runs off the caller's thread: `VectorIndex.notify` puts new message ids on a
bounded queue read by one daemon worker; when the queue is full the ids are left pending
for `VectorIndex.embed_pending` (``hermes-memory sessions embed``). Embedder failures never
reach the writer: the worker logs them, waits, and the messages stay pending.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import struct
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from hermes_memory_sessions.search._hit_filters import HIT_SELECT, hit_filters
from hermes_memory_sessions.vectors._binary_codes import CENTER_SAMPLE, CodeCache, Nearest
from hermes_memory_sessions.vectors._coverage import CONTEXT_BEFORE as _DEFAULT_CONTEXT
from hermes_memory_sessions.vectors._coverage import EMBEDDABLE, coverage_counts, index_model
from hermes_memory_sessions.vectors._embedding_worker import FAILURE_BACKOFF, EmbeddingWorker
from hermes_memory_sessions.vectors._schema import ensure_vector_schema, has_vector_table

if TYPE_CHECKING:
    from hermes_memory_sessions.storage._store import SessionStore

__all__ = [
    "CENTER_SAMPLE",
    "CONTEXT_BEFORE",
    "FAILURE_BACKOFF",
    "RESCORE",
    "VECTOR_ROLES",
    "DenseHit",
    "EmbedderLike",
    "VectorIndex",
    "document_text",
    "ensure_vector_schema",
    "has_vector_table",
    "hit_chunks",
    "index_model",
]

logger = logging.getLogger(__name__)

#: Roles whose messages get a vector.
VECTOR_ROLES: tuple[str, ...] = ("user", "assistant")
#: Conversational messages before a message that are embedded with it (see
#: `hermes_memory_sessions.vectors._coverage.CONTEXT_BEFORE`).
CONTEXT_BEFORE = _DEFAULT_CONTEXT
#: Characters kept of each context message (its end) and of the message itself (its start):
#: bounds the text embedded per message whatever the window.
CONTEXT_CHARS = 300
MESSAGE_CHARS = 1500
#: Larger than any message id (SQLite's rowid is a signed 64-bit integer).
_NO_ID_ABOVE = 2**63 - 1
#: Candidates of the binary (Hamming) pass that are scored exactly.
RESCORE = 1000
#: Message ids the background worker holds at most; more are left for `embed_pending`.
QUEUE_SIZE = 4096
#: Texts per embedder call of the background worker: small, because a local engine serves
#: one call at a time and a search's query embedding waits for the call in progress.
WORKER_BATCH = 4
#: Seconds a search waits for the query's embedding before it answers lexically.
QUERY_TIMEOUT = 5.0
#: On start, the worker picks up pending messages among this many newest (a crash between
#: writing a message and embedding it leaves it pending).
CATCH_UP = 256
#: Messages the quality tier's idle backfill embeds per call: one, so a query's embedding
#: waits for at most one message in progress (the engine serves one call at a time).
IDLE_BATCH = 1


def quantize(vector: Sequence[float]) -> bytes:
    """``vector`` in the int8 blob format of ``hermes_memory_vectors.quantize_int8``
    (float32 scale, then one signed byte per dimension), without importing that package.

    :raises ValueError: empty, or holding NaN or infinity.
    """
    array = np.asarray(vector, dtype=np.float64)
    if array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array)):
        raise ValueError("an embedder returned an empty or non-finite vector")
    peak = float(np.max(np.abs(array)))
    scale = float(np.float32(peak / 127.0))
    if not scale > 1e-30:
        return struct.pack("<f", 1.0) + bytes(array.size)
    values = np.clip(np.rint(array / scale), -127, 127).astype(np.int8)
    return struct.pack("<f", scale) + values.tobytes()


class EmbedderLike(Protocol):
    """The part of ``hermes_memory_vectors.Embedder`` the index uses (no import needed)."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


def document_text(content: str, before: Sequence[str] = ()) -> str:
    """The text embedded for a message: its context messages, then the message, one per line."""
    parts = [b[-CONTEXT_CHARS:] for b in before if b]
    parts.append(content[:MESSAGE_CHARS])
    return "\n".join(parts)


def _documents(conn: sqlite3.Connection, ids: Sequence[int]) -> list[tuple[int, str]]:
    """``(id, text)`` of the embeddable messages among ``ids`` (with their context)."""
    if not ids:
        return []
    rows = conn.execute(
        f"SELECT m.id, m.session_id, m.content FROM json_each(?) j"  # noqa: S608
        f" CROSS JOIN messages m ON m.id = j.value WHERE {EMBEDDABLE} ORDER BY m.id",
        (json.dumps([int(i) for i in ids]),),
    ).fetchall()
    out: list[tuple[int, str]] = []
    for mid, sid, content in rows:
        before: list[str] = []
        if CONTEXT_BEFORE > 0:
            prev = conn.execute(
                "SELECT content FROM messages m WHERE m.session_id = ? AND m.id < ?"  # noqa: S608
                f" AND {EMBEDDABLE} ORDER BY m.id DESC LIMIT ?",
                (sid, mid, CONTEXT_BEFORE),
            ).fetchall()
            before = [str(p[0]) for p in reversed(prev)]
        out.append((int(mid), document_text(str(content), before)))
    return out


def _unit(raw: Sequence[float]) -> npt.NDArray[np.float32] | None:
    """An embedder's query vector scaled to unit length (None: not a finite 1-D vector)."""
    vector = np.asarray(raw, dtype=np.float32)
    norm = float(np.linalg.norm(vector))
    if vector.ndim != 1 or not np.isfinite(norm) or norm == 0:
        return None
    return vector / norm


def hit_chunks(limit: int, total: int) -> list[int]:
    """Sizes of the successive reads of hit rows for ``limit`` hits among ``total`` scored
    candidates, best first: ``limit`` and a quarter more (the filters drop few of them:
    every candidate is a user or assistant message), then doubling until all are read.
    Reading a row costs a lookup of the message and of its session: only what the
    filters leave to fill ``limit`` is read, not the whole candidate list."""
    sizes: list[int] = []
    size, left = max(1, limit + max(8, limit // 4)), total
    while left > 0:
        sizes.append(min(size, left))
        left -= sizes[-1]
        size *= 2
    return sizes


@dataclass(frozen=True)
class DenseHit:
    """One message found by the dense side: its row (as lexical rows) and cosine score."""

    row: dict[str, Any]
    score: float


class VectorIndex:
    """Dense retrieval for one `SessionStore` with one embedder (see the module docstring).

    Built by ``SessionStore(path, embedder=...)``; use it through the store
    (``store.embed_pending()``, ``store.discover_messages()``, ``store.vector_coverage()``).

    :param background: start the embedding worker (``False``: only `embed_pending` embeds).
    :param above: the ``model`` of a better tier over the same messages
        (`hermes_memory_sessions.vectors._tiers`): a message with a vector of ``above`` is
        not embedded by this index, and leaves its search once that vector lands.
    """

    #: Embed every pending message when the worker starts (the fast tier), not only the
    #: `CATCH_UP` newest.
    backfill_on_start = False
    #: Embed the backlog, newest first, whenever the worker has no new messages (the
    #: quality tier of two: full quality catches up in the background).
    backfill_when_idle = False
    #: The idle backfill's cursor: it embeds pending messages below this id.
    _idle_before = _NO_ID_ABOVE
    #: Bytes of int8 vectors kept in memory for the exact pass (None: the default,
    #: `hermes_memory_sessions.vectors._binary_codes.VECTOR_MEMORY_BUDGET`, 512 MiB; 0: read
    #: them from SQLite at every search). Read when the index is built.
    memory_budget: int | None = None
    #: ``(query vector bytes, candidates)`` of the Hamming pass `start_query` ran (taken
    #: once by `search`).
    _prepared: tuple[bytes, Nearest] | None = None

    def __init__(
        self,
        store: SessionStore,
        embedder: EmbedderLike,
        *,
        background: bool = True,
        above: str | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.model = index_model(str(embedder.name), CONTEXT_BEFORE)
        self.above = above
        self._codes = CodeCache(store, self.model, above, memory_budget=self.memory_budget)
        self._embed_lock = threading.Lock()  # one embedding pass at a time (worker, backfill)
        self.worker = EmbeddingWorker(
            embed=self._embed_ids,
            warm_up=self._warm_up,
            closed=lambda: bool(getattr(store, "closed", False)),
            queue_size=QUEUE_SIZE,
            batch_size=WORKER_BATCH,
            idle=self._idle_backfill,
        )
        self._query_lock = threading.Lock()
        self._query_pool: ThreadPoolExecutor | None = None
        self._query_future: Future[list[float]] | None = None
        if not store.read_only:
            with store._write() as conn:
                ensure_vector_schema(conn)
        if background and not store.read_only:
            self.worker.start()

    @property
    def last_error(self) -> str | None:
        """The last embedder failure (``"Type: message"``), None after a success."""
        return self.worker.last_error

    # ---------------------------------------------------------------- writing

    def notify(self, ids: Sequence[int]) -> None:
        """Queue new messages for the background worker (never blocks, never raises)."""
        self.worker.notify(ids)

    def _warm_up(self) -> None:
        with contextlib.suppress(Exception):
            self.refresh()  # warm the in-memory codes off the agent's thread
        if self.backfill_on_start:
            self._backfill()
        self._catch_up()

    def _backfill(self) -> None:
        """Embed every pending message, newest first, a batch at a time (the fast tier: a
        whole archive in minutes); stops when the archive closes; failures are logged."""
        closed = self.worker.closed
        try:
            while not closed() and self.embed_pending(256, batch_size=256) > 0:
                pass
        except Exception as exc:  # the worker retries new messages; a backfill resumes
            if not closed():
                logger.warning("session archive: %s backfill stopped (%s)", self.model, exc)

    def _idle_backfill(self) -> int:
        """Embed the next `IDLE_BATCH` pending messages below the last ones done (newest
        first, resumable: the cursor only moves down); 0 when none is left (or this index
        does not backfill when idle), and the cursor starts again from the top."""
        if not self.backfill_when_idle:
            return 0
        ids = self.pending_ids(limit=IDLE_BATCH, before=self._idle_before)
        if not ids:
            self._idle_before = _NO_ID_ABOVE
            return 0
        self._embed_ids(ids)
        self._idle_before = ids[-1]  # refused texts are passed over, not retried forever
        return len(ids)

    def _catch_up(self) -> None:
        with self.store.read() as conn:
            rows = conn.execute(
                f"SELECT m.id FROM (SELECT * FROM messages ORDER BY id DESC LIMIT ?) m"  # noqa: S608
                f" LEFT JOIN hm_vectors v ON v.message_id = m.id AND v.model IN (?, ?)"
                f" WHERE v.message_id IS NULL AND {EMBEDDABLE} ORDER BY m.id DESC",
                (CATCH_UP, self.model, self.above or self.model),
            ).fetchall()
        self.notify([int(r[0]) for r in rows])

    def _embed_ids(self, ids: Sequence[int]) -> int:
        """Embed and store the embeddable, not yet embedded messages among ``ids``."""
        with self._embed_lock:
            with self.store.read() as conn:
                done = {
                    int(r[0])
                    for r in conn.execute(
                        "SELECT v.message_id FROM json_each(?) j CROSS JOIN hm_vectors v"
                        " ON v.message_id = j.value WHERE v.model IN (?, ?)",
                        (json.dumps([int(i) for i in ids]), self.model, self.above or self.model),
                    )
                }
                docs = _documents(conn, [i for i in ids if i not in done])
            if not docs:
                return 0
            blobs = self._embed_texts([text for _, text in docs])
            above = self.above or ""
            with self.store._write() as conn:
                for (mid, _), blob in zip(docs, blobs, strict=True):
                    # Other models' vectors are replaced (a model change; the fast tier's
                    # when the quality one lands), never the tier above's; a message
                    # deleted meanwhile gets no vector (the trigger already ran).
                    conn.execute(
                        "DELETE FROM hm_vectors WHERE message_id = ? AND model != ?", (mid, above)
                    )
                    conn.execute(
                        "INSERT INTO hm_vectors(message_id, model, vec)"
                        " SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM messages WHERE id = ?)"
                        " AND NOT EXISTS (SELECT 1 FROM hm_vectors WHERE message_id = ?"
                        " AND model = ?)",
                        (mid, self.model, blob, mid, mid, above),
                    )
            self.worker.succeeded()
            return len(docs)

    def _embed_texts(self, texts: list[str]) -> list[bytes]:
        """int8 blobs for ``texts``; ``b""`` marks a text the embedder refuses on its own.

        When a batch fails, each text is tried alone: if some succeed, the failing ones are
        poison (a text this embedder cannot take) and are marked so that they never block
        the others again (they count as embedded, search skips them); if every text fails,
        the embedder itself is down and the error is raised (everything stays pending).
        """
        try:
            vectors = self.embedder.embed_documents(texts)
            if len(vectors) != len(texts):
                raise RuntimeError(f"{self.model}: {len(vectors)} vectors for {len(texts)} texts")
            return [quantize(v) for v in vectors]
        except Exception:
            if len(texts) == 1:
                raise
        blobs: list[bytes | None] = []
        last: Exception | None = None
        for text in texts:
            try:
                one = self.embedder.embed_documents([text])
                blobs.append(quantize(one[0]) if len(one) == 1 else None)
            except Exception as exc:
                last = exc
                blobs.append(None)
        if all(b is None for b in blobs):
            raise last if last is not None else RuntimeError(f"{self.model}: no vectors")
        skipped = sum(b is None for b in blobs)
        logger.warning("session archive: %d message(s) the embedder refuses are skipped", skipped)
        return [b if b is not None else b"" for b in blobs]

    def pending_ids(
        self, after: int = 0, limit: int = 256, *, before: int | None = None
    ) -> list[int]:
        """Ids of embeddable messages without a vector of this model (nor of the tier
        above): ascending ids > ``after``, or with ``before``, descending ids < ``before``
        (newest first)."""
        if before is not None:
            where, order, bound = "m.id < ?", "DESC", int(before)
        else:
            where, order, bound = "m.id > ?", "", int(after)
        with self.store.read() as conn:
            rows = conn.execute(
                f"SELECT m.id FROM messages m LEFT JOIN hm_vectors v"  # noqa: S608
                f" ON v.message_id = m.id AND v.model IN (?, ?)"
                f" WHERE {where} AND v.message_id IS NULL AND {EMBEDDABLE}"
                f" ORDER BY m.id {order} LIMIT ?",
                (self.model, self.above or self.model, bound, int(limit)),
            ).fetchall()
        return [int(r[0]) for r in rows]

    def embed_pending(
        self,
        limit: int | None = None,
        *,
        batch_size: int = 32,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Embed messages that have no vector of this model yet, newest first; blocking.

        Newest first: after an import (or a model change) recent conversations get hybrid
        recall first, and a process closing embeds its own new messages before an older
        backlog. Returns how many were embedded. Resumable: each batch is committed, so an
        interrupted backfill continues where it stopped. ``progress(n)`` is called after
        each batch with the number just embedded.

        :raises hermes_memory_vectors.EmbedderUnavailable: the embedder failed (what was
            embedded before stays).
        """
        total = 0
        before = _NO_ID_ABOVE
        while limit is None or total < limit:
            want = batch_size if limit is None else min(batch_size, limit - total)
            ids = self.pending_ids(limit=want, before=before)
            if not ids:
                break
            done = self._embed_ids(ids)
            total += done
            before = ids[-1]  # messages written meanwhile are newer: the worker has them
            if progress is not None:
                progress(done)
        return total

    def reset(self, *, all_models: bool = True) -> int:
        """Drop stored vectors (all, or only those of other models); returns how many."""
        with self.store._write() as conn:
            if all_models:
                cur = conn.execute("DELETE FROM hm_vectors")
            else:
                cur = conn.execute(
                    "DELETE FROM hm_vectors WHERE model NOT IN (?, ?)",
                    (self.model, self.above or self.model),
                )
            dropped = int(cur.rowcount)
        self._codes.clear()
        return dropped

    # ---------------------------------------------------------------- reading

    def coverage(self) -> dict[str, Any]:
        """``{"model", "embedded", "total", "other_models", "pending_queue", "last_error"}``.

        ``total`` counts the embeddable messages (user/assistant with content), ``embedded``
        those with a vector of this model, ``other_models`` vectors of other models.
        """
        return {
            **vector_coverage(self.store, self.model),
            "pending_queue": self.worker.queued(),
            "last_error": self.last_error,
        }

    def documents(self, ids: Sequence[int]) -> dict[int, str]:
        """``{id: text}``: what is embedded for each of ``ids`` (with its context)."""
        with self.store.read() as conn:
            return dict(_documents(conn, ids))

    def refresh(self) -> None:
        """Load the vectors stored since the last call into the in-memory codes."""
        self._codes.refresh()

    def query_vector(self, text: str) -> npt.NDArray[np.float32] | None:
        """The query's unit vector, or None when the embedder fails, or takes longer than
        `QUERY_TIMEOUT` (the search is lexical then; a hung embedder is not waited for again
        until it returns)."""
        return self.query_result(self.start_query(text))

    def start_query(self, text: str) -> Future[list[float]] | None:
        """Start embedding the query ``text`` off the caller's thread (`query_result` waits
        for it): two tiers embed a query with both models at once. With the vectors in
        memory, that thread then also runs the Hamming pass (`search` takes its candidates),
        so the dense side's CPU work overlaps the lexical reads. None while the previous
        query's embedding is still running."""
        with self._query_lock:
            pending = self._query_future
            if pending is not None and not pending.done():
                logger.warning("session archive: the embedder is still busy; lexical only")
                return None
            if self._query_pool is None:
                self._query_pool = ThreadPoolExecutor(1, thread_name_prefix="hermes-query-embed")
            self._prepared = None
            # The codes are brought up to date here, on the caller's thread: the other
            # thread never reads the store. A failed read leaves the pass to `search`,
            # which fails open (lexical only), as before.
            try:
                rank = self._codes.refresh_now()
            except Exception as exc:
                logger.debug("session archive: codes not refreshed before the query (%s)", exc)
                rank = False
            future = self._query_pool.submit(self._embed_and_rank, text, rank)
            self._query_future = future
        return future

    def _embed_and_rank(self, text: str, rank: bool) -> list[float]:
        raw = self.embedder.embed_query(text)
        vector = _unit(raw) if rank else None
        if vector is not None:
            try:
                found = self._codes.nearest_in_memory(vector, RESCORE)
            except Exception:  # `search` runs the pass itself then
                found = None
            if found is not None:
                self._prepared = (vector.tobytes(), found)
        return raw

    def _take_prepared(self, query: npt.NDArray[np.float32]) -> Nearest:
        """The candidates `start_query` found for ``query`` (taken once), else the Hamming
        pass now (`CodeCache.nearest_rows`)."""
        prepared, self._prepared = self._prepared, None
        if prepared is not None and prepared[0] == query.tobytes():
            return prepared[1]
        return self._codes.nearest_rows(query, RESCORE)

    def query_result(self, future: Future[list[float]] | None) -> npt.NDArray[np.float32] | None:
        """The unit vector `start_query` is computing (None as `query_vector`)."""
        if future is None:
            return None
        try:
            raw = future.result(timeout=QUERY_TIMEOUT)
        except FutureTimeout:
            logger.warning(
                "session archive: query embedding took over %.0f s; lexical only", QUERY_TIMEOUT
            )
            return None
        except Exception as exc:
            logger.warning("session archive: query embedding failed (%s); lexical only", exc)
            return None
        return _unit(raw)

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
        """The ``limit`` messages most similar to ``query`` that pass the filters, best first.

        Rows carry the lexical rows' keys (``id, session_id, role, timestamp, tool_name,
        source, model, session_started``).
        """
        ids, seqs, kept = self._take_prepared(query)
        if not seqs.size:
            return []
        width = int(query.size)
        if kept is not None and kept.shape[1] == width:
            # The candidates' int8 vectors from memory: possibly stale (deleted or replaced
            # since loaded); the hit rows below carry each message's current seq.
            matrix = kept.astype(np.float32)
        else:
            ids, seqs, matrix = self._read_candidates(seqs, width)
        if not seqs.size:
            return []
        norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
        scores = (matrix @ query) / np.where(norms > 0, norms, 1.0)
        order = np.argsort(-scores, kind="stable").tolist()
        where, params = hit_filters(
            role_filter=role_filter,
            source_filter=source_filter,
            exclude_sources=exclude_sources,
            include_inactive=include_inactive,
        )
        # Each row with the seq of its message's vector now (from the unique index on
        # (message_id, model), no read of the vector's row): a candidate whose vector was
        # deleted or replaced since its code was loaded has another seq (or none), and is
        # not returned.
        sql = (
            f"{HIT_SELECT}, (SELECT v.seq FROM hm_vectors v WHERE v.message_id = m.id"  # noqa: S608
            " AND v.model = ?) AS _seq FROM json_each(?) j CROSS JOIN messages m"
            " ON m.id = j.value JOIN sessions s ON s.id = m.session_id"
            + (" WHERE " + " AND ".join(where) if where else "")
        )
        id_list, seq_list = ids.tolist(), seqs.tolist()
        out: list[DenseHit] = []
        start = 0
        for size in hit_chunks(limit, len(order)):
            chunk = order[start : start + size]
            start += size
            with self.store.read() as conn:
                cursor = conn.cursor()
                cursor.row_factory = None
                found = cursor.execute(
                    sql, [self.model, json.dumps([id_list[i] for i in chunk]), *params]
                )
                names = [d[0] for d in found.description][:-1]
                rows = {int(r[0]): r for r in found}
            for i in chunk:  # score order; rows the filters dropped are skipped
                row = rows.get(id_list[i])
                if row is not None and row[-1] == seq_list[i]:
                    out.append(DenseHit(dict(zip(names, row[:-1], strict=True)), float(scores[i])))
                    if len(out) >= limit:
                        return out
        return out

    def _read_candidates(
        self, seqs: npt.NDArray[np.int64], width: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """``(message ids, seqs, float32 rows)`` of the stored int8 vectors at ``seqs``
        that still exist (the vectors are not kept in memory: over the memory budget)."""
        with self.store.read() as conn:
            cursor = conn.cursor()
            cursor.row_factory = None  # plain tuples: a thousand rows
            # By stored row (the primary key), in storage order: one lookup per candidate.
            found = cursor.execute(
                "SELECT v.message_id, v.seq, v.vec FROM json_each(?) j CROSS JOIN hm_vectors v"
                " ON v.seq = j.value WHERE v.model = ?",
                (json.dumps(seqs.tolist()), self.model),
            ).fetchall()
        found = [r for r in found if len(r[2]) == width + 4]
        if not found:
            none = np.zeros(0, dtype=np.int64)
            return none, none, np.zeros((0, width), dtype=np.float32)
        packed = np.frombuffer(b"".join(r[2] for r in found), dtype=np.int8)
        matrix = packed.reshape(len(found), width + 4)[:, 4:].astype(np.float32)
        ids = np.asarray([int(r[0]) for r in found], dtype=np.int64)
        return ids, np.asarray([int(r[1]) for r in found], dtype=np.int64), matrix

    def close(self, timeout: float = 1.0) -> None:
        """Stop the worker (what it has not embedded stays pending); safe to call twice."""
        pool, self._query_pool = self._query_pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        self.worker.close(timeout)

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait until the worker's queue is empty and no batch runs (for tests and tools)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.worker.queued() and not self._embed_lock.locked():
                time.sleep(0.05)
                if not self.worker.queued() and not self._embed_lock.locked():
                    return True
            time.sleep(0.02)
        return False


def vector_coverage(store: SessionStore, model: str | None) -> dict[str, Any]:
    """`hermes_memory_sessions.vectors._coverage.coverage_counts` under the store's read lock."""
    return store.read_with(coverage_counts, model)
