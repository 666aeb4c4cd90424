"""The dense side's reads: candidates from memory or by stored row, hit rows only for what
is returned.

A search ranks every binary code in memory, takes the best candidates' int8 vectors from
memory (kept beside the codes within the index's memory budget) or reads them back from
SQLite by their stored row (``hm_vectors.seq``), and then reads the message rows, by stored
row, of only as many of the best as the filters need. These tests check what is read, that
both ways rank alike, and that a vector replaced or deleted since it was loaded is not used
(real SQLite, a small hashed-words embedder).
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sessions_helpers import HashedWordsEmbedder as WordsEmbedder

from hermes_memory_sessions.storage import SessionStore
from hermes_memory_sessions.vectors import _binary_codes as codes_mod
from hermes_memory_sessions.vectors import _index as vectors


def _query(store: SessionStore, text: str) -> np.typing.NDArray[np.float32]:
    index = store.vector_index
    assert index is not None
    vector = index.query_vector(text)
    assert vector is not None
    return vector


#: The index's memory budget: the default (int8 vectors in memory) and 0 (read from SQLite).
BUDGETS = [None, 0]


def _load_then_edit(store: SessionStore, path: Path) -> list[int]:
    """21 messages embedded, their codes loaded (the last found first for its own words),
    then another program edits the last one: its vector is dropped. Returns the ids."""
    # Enough vectors for a settled center: later vectors are added to the loaded codes.
    texts = [f"note {i} about topic{i}" for i in range(20)] + ["kyoto hotel booking"]
    store.create_session("s")
    ids = store.append_messages("s", [{"role": "user", "content": t} for t in texts])
    store.embed_pending()
    index = store.vector_index
    assert index is not None
    assert index.search(_query(store, "kyoto hotel booking"), limit=5)[0].row["id"] == ids[-1]
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE messages SET content = 'sourdough starter' WHERE id = ?", (ids[-1],))
    return ids


@pytest.mark.parametrize("budget", BUDGETS)
def test_a_message_embedded_again_is_scored_once_with_its_new_vector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budget: int | None
) -> None:
    monkeypatch.setattr(vectors.VectorIndex, "memory_budget", budget)
    monkeypatch.setattr(vectors, "CONTEXT_BEFORE", 0)  # each vector is its message alone
    path = tmp_path / "a.db"
    with SessionStore(path, embedder=WordsEmbedder(), embed_in_background=False) as store:
        ids = _load_then_edit(store, path)
        assert store.embed_pending() == 1  # embedded again
        index = store.vector_index
        assert index is not None
        hits = index.search(_query(store, "sourdough starter"), limit=30)
        found = [int(h.row["id"]) for h in hits]
        assert len(found) == len(set(found)) == 21  # the old code's row is gone: once each
        assert found[0] == ids[-1] and hits[0].score > 0.99


@pytest.mark.parametrize("budget", BUDGETS)
def test_a_deleted_message_is_not_found_by_its_loaded_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budget: int | None
) -> None:
    monkeypatch.setattr(vectors.VectorIndex, "memory_budget", budget)
    path = tmp_path / "a.db"
    with SessionStore(path, embedder=WordsEmbedder(), embed_in_background=False) as store:
        for sid, text in (("a", "kyoto hotel booking"), ("b", "kyoto hotel booking again")):
            store.create_session(sid)
            store.append_message(sid, "user", text)
        store.embed_pending()
        index = store.vector_index
        assert index is not None
        assert len(index.search(_query(store, "kyoto hotel"), limit=5)) == 2
        store.delete_session("a")
        hits = index.search(_query(store, "kyoto hotel"), limit=5)
        assert [h.row["session_id"] for h in hits] == ["b"]


@pytest.mark.parametrize("budget", BUDGETS)
def test_an_edited_message_waiting_for_its_new_vector_is_not_found_by_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budget: int | None
) -> None:
    monkeypatch.setattr(vectors.VectorIndex, "memory_budget", budget)
    monkeypatch.setattr(vectors, "CONTEXT_BEFORE", 0)
    path = tmp_path / "a.db"
    with SessionStore(path, embedder=WordsEmbedder(), embed_in_background=False) as store:
        ids = _load_then_edit(store, path)
        index = store.vector_index
        assert index is not None
        hits = index.search(_query(store, "kyoto hotel booking"), limit=30)
    assert ids[-1] not in [int(h.row["id"]) for h in hits]
    assert len(hits) == 20


def _seeded_archive(path: Path, n: int = 1400) -> None:
    """More messages than `RESCORE` (the Hamming pass chooses), words drawn with a seed."""
    rng = np.random.default_rng(5)
    with SessionStore(path, embedder=WordsEmbedder(), embed_in_background=False) as store:
        for s in range(n // 100):
            sid = f"s{s}"
            store.create_session(sid, source="tool" if s % 5 == 0 else "cli")
            store.append_messages(
                sid,
                [
                    {
                        "role": "user" if i % 2 else "assistant",
                        "content": " ".join(f"w{k}" for k in rng.integers(0, 200, 6)),
                    }
                    for i in range(100)
                ],
            )
        assert store.embed_pending() == n


def _ranking(path: Path, budget: int | None, queries: list[str]) -> list[list[tuple[int, float]]]:
    out = []
    with SessionStore(path, embedder=WordsEmbedder(), embed_in_background=False) as store:
        index = store.vector_index
        assert isinstance(index, vectors.VectorIndex)
        index._codes.memory_budget = 0 if budget == 0 else codes_mod.VECTOR_MEMORY_BUDGET
        index._codes.clear()  # built with the class default: start again with this budget
        index.refresh()
        assert (index._codes.codes.vectors is not None) == (budget != 0)
        for q in queries:
            for flt in ({}, {"exclude_sources": ["tool"]}):
                hits = index.search(_query(store, q), limit=60, **flt)
                out.append([(int(h.row["id"]), round(h.score, 6)) for h in hits])
    return out


def test_vectors_in_memory_rank_exactly_as_vectors_read_from_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    _seeded_archive(path)
    queries = ["w1 w7", "w42 w43 w44", "w150", "w3 w99 w120 w7"]
    in_memory = _ranking(path, None, queries)
    from_sqlite = _ranking(path, 0, queries)
    assert all(len(r) == 60 for r in in_memory)
    assert in_memory == from_sqlite


def test_vectors_in_memory_are_not_read_from_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    _seeded_archive(path, 1200)
    with SessionStore(path, embedder=WordsEmbedder(), embed_in_background=False) as store:
        index = store.vector_index
        assert index is not None
        query = _query(store, "w1 w7")
        index.search(query, limit=10)  # loads the codes and vectors
        statements: list[str] = []
        with store.read() as conn:
            conn.set_trace_callback(statements.append)
        try:
            assert len(index.search(query, limit=10)) == 10
        finally:
            with store.read() as conn:
                conn.set_trace_callback(None)
    assert not [sql for sql in statements if "v.vec" in sql]
    assert _hit_reads(statements) == [18]


def test_vectors_over_the_memory_budget_are_released_and_read_from_sqlite(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.db"
    _seeded_archive(path, 1200)
    queries = ["w1 w7", "w9 w10 w11"]
    expected = _ranking(path, None, queries)
    with SessionStore(path, embedder=WordsEmbedder(), embed_in_background=False) as store:
        index = store.vector_index
        assert isinstance(index, vectors.VectorIndex)
        index._codes.memory_budget = 1000 * 64  # 1,000 vectors of 64 bytes: 1,200 do not fit
        index._codes.clear()
        index.refresh()
        assert index._codes.codes.vectors is None and index._codes.codes.n == 1200
        got = [
            [
                (int(h.row["id"]), round(h.score, 6))
                for h in index.search(_query(store, q), limit=60, **flt)
            ]
            for q in queries
            for flt in ({}, {"exclude_sources": ["tool"]})
        ]
    assert got == expected


def test_a_replaced_vector_in_memory_is_not_used_after_compaction(tmp_path: Path) -> None:
    # Codes dropped for the tier above are compacted away together with their vectors:
    # the vectors left stay aligned with their codes.
    rng = np.random.default_rng(3)
    blobs = [vectors.quantize(rng.standard_normal(16)) for _ in range(40)]
    codes = codes_mod.BinaryCodes(keep_vectors=True)
    codes.add(list(range(1, 41)), blobs, list(range(1, 41)))
    codes.drop(list(range(1, 41, 2)))
    codes.dropped.update(range(1000, 1000 + codes_mod.COMPACT_AT))  # enough to compact
    codes.compact()
    assert codes.n == 20 and codes.vectors is not None
    for i in range(codes.n):
        seq = int(codes.seqs[i])
        assert codes.vectors[i].tobytes() == blobs[seq - 1][4:]


def _hit_reads(statements: list[str]) -> list[int]:
    """How many message ids each hit-row read asked for (the traced statements)."""
    out = []
    for sql in statements:
        if "JOIN sessions s ON s.id = m.session_id" in sql and "json_each('" in sql:
            found = re.search(r"json_each\('(\[[^']*\])'\)", sql)
            assert found is not None
            out.append(len(json.loads(found.group(1))))
    return out


def test_hit_rows_are_read_only_for_the_hits_returned(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    with SessionStore(path, embedder=WordsEmbedder(), embed_in_background=False) as store:
        store.create_session("s")
        store.create_session("hidden", source="tool")  # filtered out by exclude_sources
        # The hidden session holds the 40 best matches of the query; "s" none of its words.
        words = [f"w{i}" for i in range(10, 40)]
        store.append_messages(
            "s",
            [
                {"role": "user", "content": f"{words[i % 30]} {words[i * 7 % 30]}"}
                for i in range(300)
            ],
        )
        store.append_messages(
            "hidden", [{"role": "user", "content": f"w1 w7 h{i}"} for i in range(40)]
        )
        store.embed_pending()
        index = store.vector_index
        assert index is not None
        statements: list[str] = []
        with store.read() as conn:
            conn.set_trace_callback(statements.append)
        try:
            query = _query(store, "w1 w7")
            hits = index.search(query, limit=10)
            plain = _hit_reads(statements)
            statements.clear()
            filtered = index.search(query, limit=10, exclude_sources=["tool"])
            dropped = _hit_reads(statements)
        finally:
            with store.read() as conn:
                conn.set_trace_callback(None)
    assert len(hits) == len(filtered) == 10
    # One read of the 10 best and a quarter more (8 at least), not of all 340 candidates.
    assert plain == [18]
    assert all(h.row["session_id"] == "hidden" for h in hits)
    # The filter drops the 40 best candidates: the reads go on, doubling, until 10 hits
    # are found (18 + 36 rows hold the 40 hidden and 14 others); nothing beyond is read.
    assert all(h.row["session_id"] == "s" for h in filtered)
    assert dropped == [18, 36]


def _reference_nearest(distance: np.typing.NDArray[np.uint16], count: int) -> list[int]:
    """The count nearest as before the sampled cut-off: full histogram, ties in order."""
    cumulative = np.cumsum(np.bincount(distance, minlength=385))
    cut = int(np.searchsorted(cumulative, count))
    top = np.flatnonzero(distance < cut)
    if top.size < count:
        top = np.concatenate([top, np.flatnonzero(distance == cut)[: count - top.size]])
    return sorted(int(i) for i in top)


@pytest.mark.parametrize("shape", ["uniform", "clustered", "ties", "far_sample"])
def test_the_sampled_cut_off_picks_exactly_the_nearest(shape: str) -> None:
    rng = np.random.default_rng(11)
    n = 200_000
    if shape == "uniform":
        distance = rng.binomial(384, 0.5, n).astype(np.uint16)
    elif shape == "clustered":  # a few very near codes, as a query close to some messages
        distance = rng.binomial(384, 0.5, n).astype(np.uint16)
        distance[rng.choice(n, 700, replace=False)] = rng.integers(10, 60, 700)
    elif shape == "ties":  # many codes at the same distance: insertion order decides
        distance = np.full(n, 200, dtype=np.uint16)
        distance[rng.choice(n, 300, replace=False)] = 150
    else:  # the sample overrates the near codes: its guess holds too few, the full count decides
        distance = np.full(n, 300, dtype=np.uint16)
        distance[0 : 900 * 12 : 12] = 20  # every one of them sampled (one code in 12 is)
    got = codes_mod._nearest_of(distance, 1000, 384)
    assert got.tolist() == _reference_nearest(distance, 1000)


@pytest.mark.parametrize("threads", [2, 3])
def test_the_hamming_pass_shared_among_threads_gives_every_distance(
    monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    monkeypatch.setattr(codes_mod, "CHUNK", 64)
    monkeypatch.setattr(codes_mod, "THREAD_MIN", 128)
    rng = np.random.default_rng(9)
    codes = codes_mod.BinaryCodes()
    codes.add(
        list(range(1, 1001)), [vectors.quantize(rng.standard_normal(128)) for _ in range(1000)]
    )
    query = rng.standard_normal(128).astype(np.float32)
    bits = np.packbits(query > 0).view(np.uint64)
    monkeypatch.setattr(codes_mod, "HAMMING_THREADS", 1)
    alone, nearest = codes._distances(bits), codes.nearest(query, 100)
    monkeypatch.setattr(codes_mod, "HAMMING_THREADS", threads)
    shared = codes._distances(bits)
    assert shared.tolist() == alone.tolist()
    assert codes.nearest(query, 100) == nearest
    assert sorted(set(alone.tolist())) != [0]  # real distances, not an empty buffer


def test_the_hamming_pass_runs_on_the_query_thread_for_its_own_vector_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the vectors in memory, the thread embedding the query also ranks the codes
    (beside the caller's lexical reads); `search` takes those candidates only for the very
    vector they were ranked for, and ranks alike either way."""
    path = tmp_path / "a.db"
    _seeded_archive(path, 1200)
    passes: list[str] = []
    real = codes_mod.BinaryCodes.nearest_positions

    def spy(self: codes_mod.BinaryCodes, query: Any, count: int) -> Any:
        passes.append(threading.current_thread().name)
        return real(self, query, count)

    monkeypatch.setattr(codes_mod.BinaryCodes, "nearest_positions", spy)
    with SessionStore(path, embedder=WordsEmbedder(), embed_in_background=False) as store:
        index = store.vector_index
        assert isinstance(index, vectors.VectorIndex)
        index.refresh()  # codes and vectors loaded
        query = _query(store, "w1 w7")
        prepared = [(int(h.row["id"]), h.score) for h in index.search(query, limit=20)]
        assert len(passes) == 1 and passes[0].startswith("hermes-query-embed")
        passes.clear()
        index.query_result(index.start_query("w9 w10 w11"))  # ranked for another vector
        own = [(int(h.row["id"]), h.score) for h in index.search(query, limit=20)]
        assert passes[-1] == threading.current_thread().name  # its own pass, here
    assert own == prepared and len(own) == 20


def test_a_failed_read_of_the_codes_leaves_the_search_lexical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The codes are refreshed before the query thread starts; when that read fails, the
    search still answers (lexical only), as when the dense search itself fails."""
    path = tmp_path / "a.db"
    _seeded_archive(path, 200)

    def broken(self: codes_mod.CodeCache) -> int | None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(codes_mod.CodeCache, "_top_seq", broken)
    with SessionStore(path, embedder=WordsEmbedder(), embed_in_background=False) as store:
        found = store.discover_messages("w1 w7", limit=5)
    assert found and {r["match"] for r in found} <= {"and", "any_terms"}
