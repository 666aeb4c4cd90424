"""Binary codes of the archive's vectors, kept in memory for the first pass of a search.

A code is one sign bit per dimension (48 bytes per message for 384 dimensions); a query
ranks every code by Hamming distance and only the best candidates are scored exactly
against the stored int8 vectors. `CodeCache` keeps the codes of one model in step with the
``hm_vectors`` table, loading what was added since its last look.

With ``keep_vectors`` the int8 vectors themselves are kept beside the codes (one byte per
dimension: 384 bytes a message, 273 MiB for 745,718 messages), so that the exact pass
gathers its candidates from memory instead of reading a thousand rows from SQLite (a gather
takes about 0.5 ms, the reads 4.5-15 ms at a million messages). `CodeCache` keeps them while
they fit its ``memory_budget`` (`VECTOR_MEMORY_BUDGET` by default), and reads from SQLite
beyond it. A vector deleted or replaced since it was loaded stays in memory, as its code
does: the search reads each hit row with the seq of its message's current vector, which
drops such candidates.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from hermes_memory_sessions.vectors._schema import has_vector_table

if TYPE_CHECKING:
    from hermes_memory_sessions.storage._store import SessionStore

__all__ = [
    "CENTER_SAMPLE",
    "COMPACT_AT",
    "LOAD_CHUNK",
    "VECTOR_MEMORY_BUDGET",
    "BinaryCodes",
    "CodeCache",
    "Nearest",
    "unit_rows",
    "upgraded",
]

#: Stored vectors averaged into the center of the binary codes.
CENTER_SAMPLE = 5000
#: Dropped codes (messages a higher tier took over) filtered at search time before the
#: code array is compacted (a copy of every code: done in bulk, not per message).
COMPACT_AT = 1024
#: Codes per chunk of the Hamming pass (the chunk's words, distances and buffers stay in
#: the CPU cache across the words of a code).
CHUNK = 32768
#: Threads sharing the Hamming pass of a large archive (NumPy releases the GIL in each
#: chunk's XOR, popcount and sum): the caller's and ``HAMMING_THREADS - 1`` helpers. At a
#: million messages on two cores: 7 -> 4.1 ms p50 on a quiet host, 16-24 -> 13-17 ms with
#: two busy processes beside it (docs/benchmarks.md). 1: the caller's thread alone.
HAMMING_THREADS = max(1, min(4, os.cpu_count() or 1))
#: Codes per thread at least (below this the pass is too short to share).
THREAD_MIN = 4 * CHUNK
_HELPERS: ThreadPoolExecutor | None = None
_HELPERS_PID = 0
_HELPERS_LOCK = threading.Lock()
#: Bytes of int8 vectors a `CodeCache` keeps in memory for the exact pass (384 bytes a
#: message at 384 dimensions: 512 MiB holds about 1.4 million); 0 reads them from SQLite.
VECTOR_MEMORY_BUDGET = 512 * 2**20
#: Stored vectors read per round trip while loading the codes.
LOAD_CHUNK = 20000

#: ``(message ids, hm_vectors seqs, int8 vectors or None)`` of a search's nearest codes.
Nearest = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int8] | None]


def unit_rows(blobs: Sequence[bytes]) -> npt.NDArray[np.float32]:
    """The stored int8 vectors ``blobs`` as float32 rows of length 1."""
    rows = np.stack([np.frombuffer(b, dtype=np.int8, offset=4) for b in blobs]).astype(np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: npt.NDArray[np.float32] = (rows / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return unit


class BinaryCodes:
    """Binary codes of the stored vectors, in memory, grown by doubling.

    A code is the sign of each dimension of the unit vector minus ``center`` (the mean of
    the stored vectors): text embeddings share a common direction, and the signs of the raw
    values carry little information (measured on 9,754 real vectors: the best 1% of a
    Hamming ranking held 79% of the exact top 10 without centring, 99% with it).
    """

    def __init__(
        self,
        center: npt.NDArray[np.float32] | None = None,
        center_n: int = 0,
        *,
        keep_vectors: bool = False,
    ) -> None:
        self.center = center
        self.center_n = center_n  # vectors the center was computed from
        self.words = 0
        self.ids: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        #: The stored row (``hm_vectors.seq``) of each code, 0 when not given: the exact
        #: pass reads candidates by row (one primary-key lookup each, in storage order).
        self.seqs: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.codes: npt.NDArray[np.uint64] = np.zeros((0, 0), dtype=np.uint64)
        self.n = 0
        self.last_seq = 0
        #: Ids whose codes no longer count (`drop`), until the next compaction.
        self.dropped: set[int] = set()
        #: The int8 vector of each code (row i of code i; module docstring), or None when
        #: not kept (`release_vectors`, or ``keep_vectors=False``).
        self.vectors: npt.NDArray[np.int8] | None = (
            np.zeros((0, 0), dtype=np.int8) if keep_vectors else None
        )

    def vector_bytes(self) -> int:
        """Bytes of the kept int8 vectors in use (0 when none are kept)."""
        return 0 if self.vectors is None else self.n * int(self.vectors.shape[1])

    def release_vectors(self) -> None:
        """Stop keeping the int8 vectors (the exact pass reads them from storage again)."""
        self.vectors = None

    def drop(self, ids: Sequence[int]) -> None:
        """Stop returning the codes of ``ids`` (a message the quality tier embedded leaves
        the fast tier's set): filtered at once, removed from the arrays by `compact`."""
        self.dropped.update(int(i) for i in ids)

    def compact(self) -> None:
        """Remove the dropped codes from the arrays once `COMPACT_AT` have gathered."""
        if len(self.dropped) >= COMPACT_AT:
            ids = self.ids[: self.n]
            gone = np.fromiter(self.dropped, dtype=np.int64)
            # A flag per id (ids are rowids, dense): one gather, no sort of a million ids.
            flags = np.zeros(int(max(int(ids.max(initial=0)), int(gone.max()))) + 1, dtype=bool)
            flags[gone] = True
            where = np.flatnonzero(~flags[ids])
            kept = int(where.size)
            for w in range(self.words):
                self.codes[w, :kept] = self.codes[w, : self.n].take(where)
            self.ids[:kept] = ids.take(where)
            self.seqs[:kept] = self.seqs[: self.n].take(where)
            if self.vectors is not None:
                self.vectors[:kept] = self.vectors[: self.n].take(where, axis=0)
            self.n = kept
            self.dropped = set()

    def add(
        self, ids: Sequence[int], blobs: Sequence[bytes], seqs: Sequence[int] | None = None
    ) -> None:
        """Append the codes of the vectors ``blobs`` of messages ``ids`` (stored in rows
        ``seqs``, when known)."""
        if not ids:
            return
        self.dropped.difference_update(int(i) for i in ids)  # embedded again by this tier
        unit = unit_rows(blobs)
        if self.center is not None and self.center.shape[0] == unit.shape[1]:
            unit -= self.center
        bits = np.packbits(unit > 0, axis=1)
        pad = (-bits.shape[1]) % 8
        if pad:
            bits = np.pad(bits, ((0, 0), (0, pad)))
        words = bits.view(np.uint64).T  # (words, rows)
        dim = unit.shape[1]
        if self.n == 0 or words.shape[0] != self.words:
            self.words = words.shape[0]
            self.codes = np.zeros((self.words, max(1024, len(ids))), dtype=np.uint64)
            self.ids = np.zeros(self.codes.shape[1], dtype=np.int64)
            self.seqs = np.zeros(self.codes.shape[1], dtype=np.int64)
            if self.vectors is not None:
                self.vectors = np.zeros((self.codes.shape[1], dim), dtype=np.int8)
            self.n = 0
        if self.vectors is not None and self.vectors.shape[1] != dim:
            self.vectors = None  # vectors of two widths (never one model's): read from storage
        need = self.n + len(ids)
        if need > self.codes.shape[1]:
            cap = max(need, self.codes.shape[1] * 2)
            codes = np.zeros((self.words, cap), dtype=np.uint64)
            codes[:, : self.n] = self.codes[:, : self.n]
            grown, grown_seqs = np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64)
            grown[: self.n] = self.ids[: self.n]
            grown_seqs[: self.n] = self.seqs[: self.n]
            self.codes, self.ids, self.seqs = codes, grown, grown_seqs
            if self.vectors is not None:
                # np.zeros maps untouched pages lazily: the spare capacity costs no RAM
                # until it is filled.
                vectors = np.zeros((cap, dim), dtype=np.int8)
                vectors[: self.n] = self.vectors[: self.n]
                self.vectors = vectors
        self.codes[:, self.n : need] = words
        self.ids[self.n : need] = np.asarray(ids, dtype=np.int64)
        if seqs is not None:
            self.seqs[self.n : need] = np.asarray(seqs, dtype=np.int64)
        if self.vectors is not None:
            self.vectors[self.n : need] = np.frombuffer(
                b"".join(bytes(b)[4:] for b in blobs), dtype=np.int8
            ).reshape(len(ids), dim)
        self.n = need

    def nearest(self, query: npt.NDArray[np.float32], count: int) -> list[int]:
        """Ids of the ``count`` codes nearest to ``query``'s signs (all when fewer)."""
        return [int(i) for i in self.ids[self.nearest_positions(query, count)]]

    def nearest_positions(self, query: npt.NDArray[np.float32], count: int) -> npt.NDArray[np.intp]:
        """Positions (ascending, as in ``ids`` and ``seqs``) of the ``count`` codes nearest
        to ``query``'s signs (all when fewer), dropped codes left out; ties at the cut-off
        in insertion order."""
        if not self.dropped:
            return self._nearest_positions(query, count)
        found = self._nearest_positions(query, count + len(self.dropped))
        gone = np.fromiter(self.dropped, dtype=np.int64)
        return found[~np.isin(self.ids[found], gone)][:count]

    def _nearest_positions(
        self, query: npt.NDArray[np.float32], count: int
    ) -> npt.NDArray[np.intp]:
        if self.n <= count:
            return np.arange(self.n, dtype=np.intp)
        if self.center is not None and self.center.shape == query.shape:
            query = query - self.center
        bits = np.packbits(query > 0)
        pad = (-bits.size) % 8
        if pad:
            bits = np.pad(bits, (0, pad))
        distance = self._distances(bits.view(np.uint64))
        return _nearest_of(distance, count, self.words * 64)

    def _distances(self, qwords: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint16]:
        """Hamming distance of every code to ``qwords``: the codes split among up to
        `HAMMING_THREADS` threads (whole chunks each), each part by `_distances_into`."""
        n = self.n
        distance = np.empty(n, dtype=np.uint16)
        parts = max(1, min(HAMMING_THREADS, n // THREAD_MIN))
        if parts == 1:
            self._distances_into(qwords, distance, 0, n)
            return distance
        step = -(-n // parts // CHUNK) * CHUNK  # whole chunks per part
        bounds = [(lo, min(n, lo + step)) for lo in range(0, n, step)]
        helpers = _helpers()
        pending = [
            helpers.submit(self._distances_into, qwords, distance, lo, hi) for lo, hi in bounds[1:]
        ]
        self._distances_into(qwords, distance, *bounds[0])
        for future in pending:
            future.result()
        return distance

    def _distances_into(
        self, qwords: npt.NDArray[np.uint64], distance: npt.NDArray[np.uint16], lo: int, hi: int
    ) -> None:
        """Distances of codes ``lo:hi`` into ``distance``, in cache-sized chunks with reused
        buffers: per chunk one XOR and one popcount over all its words, and one sum of the
        words' counts (three NumPy calls, no temporary array per word)."""
        width = min(hi - lo, CHUNK)
        xor = np.empty((self.words, width), dtype=np.uint64)
        ones = np.empty((self.words, width), dtype=np.uint8)
        column = qwords.reshape(-1, 1)
        for start in range(lo, hi, CHUNK):
            end = min(hi, start + CHUNK)
            x, c = xor[:, : end - start], ones[:, : end - start]
            np.bitwise_xor(self.codes[:, start:end], column, out=x)
            np.bitwise_count(x, out=c)
            np.add.reduce(c, axis=0, dtype=np.uint16, out=distance[start:end])


def _helpers() -> ThreadPoolExecutor:
    """The process's helper threads of the Hamming pass (created on first use, and again
    in a forked child: its parent's threads do not exist there)."""
    global _HELPERS, _HELPERS_PID
    with _HELPERS_LOCK:
        if _HELPERS is None or os.getpid() != _HELPERS_PID:
            _HELPERS = ThreadPoolExecutor(
                max(1, HAMMING_THREADS - 1), thread_name_prefix="hermes-hamming"
            )
            _HELPERS_PID = os.getpid()
        return _HELPERS


def upgraded(rows: Sequence[Sequence[object]], model: str, above: str | None) -> list[int]:
    """Message ids whose last vector among ``(seq, message_id, vec, model)`` ``rows`` (seq
    order) is of the tier ``above`` ``model``: they leave ``model``'s codes."""
    if above is None:
        return []
    last: dict[int, object] = {}
    for r in rows:
        if r[3] == model or r[3] == above:
            last[int(r[1])] = r[3]  # type: ignore[call-overload]
    return [mid for mid, name in last.items() if name == above]


#: Distances sampled to guess the cut-off distance of the nearest codes.
SAMPLE = 16384


def _nearest_of(distance: npt.NDArray[np.uint16], count: int, bits: int) -> npt.NDArray[np.intp]:
    """Positions of the ``count`` smallest ``distance``s (``count`` < its size), ascending;
    ties at the cut-off distance are taken in position order.

    The count nearest without sorting: distances are small integers, so a histogram gives
    the cut-off distance (argpartition over a million distances cost more than the Hamming
    pass itself). The histogram of every distance costs milliseconds at a million codes
    (bincount widens them to 64 bits), so a histogram of an evenly spread sample first
    guesses a distance a little above the cut-off; only the codes within it are counted.
    When the guess holds fewer than ``count`` codes, the full histogram decides.
    """
    n = distance.size
    step = max(1, n // SAMPLE)
    if step > 1:
        sample = np.cumsum(np.bincount(distance[::step], minlength=bits + 1))
        # Twice the expected share of the sample, plus a few codes for small shares.
        want = min(sample[-1], 2 * count * sample[-1] // n + 8)
        guess = int(np.searchsorted(sample, want))
        within = np.flatnonzero(distance <= guess)
        if within.size >= count:
            return _cut(within, distance[within], count, bits)
    return _cut(np.arange(n, dtype=np.intp), distance, count, bits)


def _cut(
    positions: npt.NDArray[np.intp], distance: npt.NDArray[np.uint16], count: int, bits: int
) -> npt.NDArray[np.intp]:
    """The ``count`` of ``positions`` (ascending) with the smallest ``distance``."""
    cumulative = np.cumsum(np.bincount(distance, minlength=bits + 1))
    cut = int(np.searchsorted(cumulative, count))
    top = positions[distance < cut]
    if top.size < count:
        ties = positions[distance == cut][: count - top.size]
        top = np.sort(np.concatenate([top, ties]))
    return top


class CodeCache:
    """The `BinaryCodes` of one model's vectors in ``store``, refreshed incrementally."""

    def __init__(
        self,
        store: SessionStore,
        model: str,
        drop_model: str | None = None,
        *,
        memory_budget: int | None = None,
    ) -> None:
        self.store = store
        self.model = model
        #: The tier above (`hermes_memory_sessions.vectors._tiers`): a message it embeds
        #: leaves these codes.
        self.drop_model = drop_model
        #: Bytes of int8 vectors kept in memory (`VECTOR_MEMORY_BUDGET` by default); once
        #: the archive outgrows it they are released and read from SQLite.
        self.memory_budget = VECTOR_MEMORY_BUDGET if memory_budget is None else memory_budget
        self._over_budget = False
        self.codes = self._new_codes()
        self.lock = threading.Lock()

    def _new_codes(
        self, center: npt.NDArray[np.float32] | None = None, center_n: int = 0
    ) -> BinaryCodes:
        keep = self.memory_budget > 0 and not self._over_budget
        return BinaryCodes(center, center_n, keep_vectors=keep)

    def _check_budget(self, codes: BinaryCodes) -> None:
        if codes.vectors is not None and codes.vector_bytes() > self.memory_budget:
            codes.release_vectors()
            self._over_budget = True

    def refresh(self) -> None:
        """Load the vectors stored since the last call into the in-memory codes."""
        with self.lock:
            self.refresh_locked()

    def clear(self) -> None:
        """Forget every code (after the stored vectors were dropped)."""
        with self.lock:
            self._over_budget = False
            self.codes = self._new_codes()

    def nearest(self, query: npt.NDArray[np.float32], count: int) -> list[int]:
        """Ids of the ``count`` codes nearest to ``query`` after a refresh; ``[]`` at once
        while another thread holds the codes (the worker loading them at start takes
        seconds at a million vectors: the query is answered lexically meanwhile)."""
        if not self.lock.acquire(timeout=0.05):
            return []
        try:
            self.refresh_locked()
            return self.codes.nearest(query, count)
        finally:
            self.lock.release()

    def nearest_rows(self, query: npt.NDArray[np.float32], count: int) -> Nearest:
        """``(message ids, hm_vectors seqs, int8 vectors)`` of the ``count`` codes nearest
        to ``query`` after a refresh, in storage order; the vectors (one row per code, a
        copy) are None when they are not kept in memory (read them by seq). Empty at once
        while another thread holds the codes (as `nearest`)."""
        if not self.lock.acquire(timeout=0.05):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), None
        try:
            self.refresh_locked()
            return self._rows_nearest(query, count)
        finally:
            self.lock.release()

    def refresh_now(self) -> bool:
        """`refresh` unless another thread holds the codes (the worker loading them at
        start): whether it refreshed."""
        if not self.lock.acquire(timeout=0.05):
            return False
        try:
            self.refresh_locked()
            return True
        finally:
            self.lock.release()

    def nearest_in_memory(
        self, query: npt.NDArray[np.float32], count: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int8]] | None:
        """`nearest_rows` over the codes as they are (no refresh, no read of the store: safe
        off the store's thread); None unless the vectors are in memory, or while another
        thread holds the codes."""
        if not self.lock.acquire(timeout=0.05):
            return None
        try:
            if self.codes.vectors is None:
                return None
            ids, seqs, kept = self._rows_nearest(query, count)
            return None if kept is None else (ids, seqs, kept)
        finally:
            self.lock.release()

    def _rows_nearest(self, query: npt.NDArray[np.float32], count: int) -> Nearest:
        codes = self.codes
        top = codes.nearest_positions(query, count)
        kept = codes.vectors
        return codes.ids[top], codes.seqs[top], None if kept is None else kept[top]

    def refresh_locked(self) -> None:
        """`refresh` with the lock already held."""
        # Chunked reads, the store's lock released between chunks: loading a million
        # vectors (seconds) never holds up the agent's writes.
        codes = self.codes
        top = self._top_seq()
        if top is None or top <= codes.last_seq:
            return
        if codes.n == 0 or (codes.n >= 4 * codes.center_n and codes.center_n < CENTER_SAMPLE):
            # (Re)compute the center from the stored vectors, then (re)build every code:
            # at start, and while a young archive grows (4x), until the mean is settled.
            sample = [blob for blob in self._center_sample() if len(blob) > 4]
            if codes.n == 0 or len(sample) >= 4 * codes.center_n:
                center = unit_rows(sample).mean(axis=0) if len(sample) >= 16 else None
                codes = self.codes = self._new_codes(
                    center, len(sample) if center is not None else 0
                )
        while True:
            rows = self._rows_after(codes.last_seq, top)
            if not rows:
                break
            mine = [r for r in rows if r[3] == self.model and len(r[2]) > 4]
            codes.add([r[1] for r in mine], [r[2] for r in mine], [r[0] for r in mine])
            codes.drop(upgraded(rows, self.model, self.drop_model))
            codes.last_seq = rows[-1][0]
            self._check_budget(codes)
        codes.compact()
        codes.last_seq = max(codes.last_seq, top)

    # The three reads of a refresh; `hermes_memory_postgres` overrides them for its table.

    def _top_seq(self) -> int | None:
        """The highest stored ``seq`` (None: no vector table, a read-only archive never
        embedded)."""
        with self.store.read() as conn:
            if not has_vector_table(conn):
                return None
            top = conn.execute("SELECT MAX(seq) FROM hm_vectors").fetchone()[0]
        return None if top is None else int(top)

    def _center_sample(self) -> list[bytes]:
        """The first `CENTER_SAMPLE` stored vectors of this model."""
        with self.store.read() as conn:
            return [
                bytes(r[0])
                for r in conn.execute(
                    "SELECT vec FROM hm_vectors WHERE model = ? ORDER BY seq LIMIT ?",
                    (self.model, CENTER_SAMPLE),
                )
            ]

    def _rows_after(self, after: int, top: int) -> list[tuple[int, int, bytes, str]]:
        """``(seq, message_id, vec, model)`` of up to `LOAD_CHUNK` vectors stored after
        ``after`` up to ``top``, by seq (every model: `upgraded` reads the others)."""
        with self.store.read() as conn:
            cursor = conn.cursor()
            cursor.row_factory = None
            rows = cursor.execute(
                "SELECT seq, message_id, vec, model FROM hm_vectors WHERE seq > ? AND seq <= ?"
                " ORDER BY seq LIMIT ?",
                (after, top, LOAD_CHUNK),
            ).fetchall()
        return [(int(r[0]), int(r[1]), bytes(r[2]), str(r[3])) for r in rows]
