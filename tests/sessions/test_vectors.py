"""The archive's vector index: what is embedded, kept in sync, off the writer's thread, fail-open.

These tests use a small deterministic embedder (hashed words) so that they check the index's
bookkeeping, not a model; `test_hybrid.py` runs the packaged model.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from hermes_memory_sessions.storage._store import SessionStore
from hermes_memory_sessions.tool import session_search
from hermes_memory_sessions.vectors import _index as vectors
from hermes_memory_vectors import EmbedderUnavailable, dequantize_int8


class HashEmbedder:
    """Words hashed into 64 dimensions; records every text it embedded."""

    dim = 64

    def __init__(self, name: str = "test-hash:v1") -> None:
        self.name = name
        self.documents: list[str] = []
        self.queries: list[str] = []

    def _vector(self, text: str) -> list[float]:
        v = [0.0] * self.dim
        for word in text.lower().split():
            v[int(hashlib.sha256(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / norm for x in v]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.documents.extend(texts)
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return self._vector(text)


class BrokenEmbedder(HashEmbedder):
    """Fails like a server that is down."""

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbedderUnavailable("test: the embedding server is down")

    def embed_query(self, text: str) -> list[float]:
        raise EmbedderUnavailable("test: the embedding server is down")


class BlockingEmbedder(HashEmbedder):
    """Blocks every document call until released."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.entered = threading.Event()

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.entered.set()
        assert self.release.wait(30), "the test never released the embedder"
        return super().embed_documents(texts)


def _fill(store: SessionStore) -> None:
    store.create_session("s1", source="cli")
    store.append_message("s1", "user", "my sister plays the violin every sunday")
    store.append_message("s1", "assistant", "that sounds lovely")
    store.append_message("s1", "tool", "tool output is never embedded", tool_name="x")
    store.append_message("s1", "assistant", "")
    store.create_session("s2", source="cli")
    store.append_message("s2", "user", "部署 在 周四")
    store.append_message("s2", "assistant", "deploy thursday noted")


def _vector_rows(path: Path) -> dict[int, str]:
    with sqlite3.connect(path) as conn:
        return {
            int(r[0]): str(r[1]) for r in conn.execute("SELECT message_id, model FROM hm_vectors")
        }


def test_embeds_user_and_assistant_text_with_the_message_before(tmp_path: Path) -> None:
    emb = HashEmbedder()
    with SessionStore(tmp_path / "a.db", embedder=emb, embed_in_background=False) as store:
        _fill(store)
        assert store.embed_pending() == 4
        assert store.embed_pending() == 0  # nothing left: resumable, idempotent
        cov = store.vector_coverage()
        assert (cov["embedded"], cov["total"], cov["other_models"]) == (4, 4, 0)
    assert "tool output is never embedded" not in "\n".join(emb.documents)
    # Each message is embedded after the conversational message before it (same session only).
    assert emb.documents[0] == "my sister plays the violin every sunday"
    assert emb.documents[1] == "my sister plays the violin every sunday\nthat sounds lovely"
    assert emb.documents[2] == "部署 在 周四"
    assert emb.documents[3] == "部署 在 周四\ndeploy thursday noted"


def test_stored_vectors_are_int8_blobs_of_the_embedder_vectors(tmp_path: Path) -> None:
    emb = HashEmbedder()
    with SessionStore(tmp_path / "a.db", embedder=emb, embed_in_background=False) as store:
        store.create_session("s")
        mid = store.append_message("s", "user", "alpha beta gamma")
        store.embed_pending()
    with sqlite3.connect(tmp_path / "a.db") as conn:
        blob = conn.execute("SELECT vec FROM hm_vectors WHERE message_id = ?", (mid,)).fetchone()[0]
    assert len(blob) == 4 + emb.dim
    expected = emb._vector("alpha beta gamma")
    assert max(abs(a - b) for a, b in zip(dequantize_int8(blob), expected, strict=True)) < 0.01


def test_embed_pending_limit_resumes(tmp_path: Path) -> None:
    with SessionStore(
        tmp_path / "a.db", embedder=HashEmbedder(), embed_in_background=False
    ) as store:
        _fill(store)
        assert store.embed_pending(limit=3, batch_size=2) == 3
        assert store.vector_coverage()["embedded"] == 3
        assert store.embed_pending() == 1


def test_delete_prune_and_edits_keep_vectors_in_sync(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    with SessionStore(path, embedder=HashEmbedder(), embed_in_background=False) as store:
        _fill(store)
        store.embed_pending()
        assert len(_vector_rows(path)) == 4
        store.delete_session("s2")
        assert len(_vector_rows(path)) == 2
        store.end_session("s1", "done")
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE sessions SET started_at = 0 WHERE id = 's1'")
        assert store.prune(1) == 1
        assert _vector_rows(path) == {}
    # Deleting without any embedder attached (another program, an older release) too.
    with SessionStore(path, embedder=HashEmbedder(), embed_in_background=False) as store:
        _fill(store)
        store.embed_pending()
    with SessionStore(path) as store:
        store.delete_session("s1")
    assert len(_vector_rows(path)) == 2
    # An edited message loses its vector, and so do the next two (their context changed).
    with sqlite3.connect(path) as conn:
        first = conn.execute("SELECT MIN(id) FROM messages WHERE session_id = 's2'").fetchone()[0]
        conn.execute("UPDATE messages SET content = 'edited' WHERE id = ?", (first,))
    assert _vector_rows(path) == {}
    with SessionStore(path, embedder=HashEmbedder(), embed_in_background=False) as store:
        assert store.embed_pending() == 2


def test_append_never_waits_for_the_embedder(tmp_path: Path) -> None:
    emb = BlockingEmbedder()
    store = SessionStore(tmp_path / "a.db", embedder=emb)
    try:
        store.create_session("s")
        store.append_message("s", "user", "first message")
        assert emb.entered.wait(10)  # the worker is now stuck inside the embedder
        # Writes and lexical reads go on while the embedder is blocked.
        ids = [store.append_message("s", "user", f"message number {i}") for i in range(5)]
        assert len(ids) == 5
        assert store.search_messages("number", with_context=False)
        emb.release.set()
        assert store.vector_index is not None and store.vector_index.wait_idle(30)
        assert store.vector_coverage()["embedded"] == 6
    finally:
        emb.release.set()
        store.close()


def test_background_queue_is_bounded_and_the_rest_stays_pending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "QUEUE_SIZE", 3)
    emb = BlockingEmbedder()
    store = SessionStore(tmp_path / "a.db", embedder=emb)
    try:
        store.create_session("s")
        store.append_message("s", "user", "first")
        assert emb.entered.wait(10)
        store.append_messages("s", [{"role": "user", "content": f"m{i}"} for i in range(20)])
        index = store.vector_index
        assert index is not None and index.worker.queued() <= 3
        emb.release.set()
        assert index.wait_idle(30)
        cov = store.vector_coverage()
        assert cov["embedded"] < cov["total"] == 21
        assert store.embed_pending() == cov["total"] - cov["embedded"]
        assert store.vector_coverage()["embedded"] == 21
    finally:
        emb.release.set()
        store.close()


def test_the_worker_exits_when_its_store_is_closed_without_closing_the_index(
    tmp_path: Path,
) -> None:
    import time

    store = SessionStore(tmp_path / "a.db")
    index = vectors.VectorIndex(store, HashEmbedder())  # held outside the store
    assert index.worker.running and not store.closed
    store.close()  # closes the store's own (absent) index only
    assert store.closed
    deadline = time.monotonic() + 10
    while index.worker.running and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not index.worker.running
    index.close()


def test_embedder_failures_fail_open(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    with SessionStore(path) as plain:
        _fill(plain)
    lexical = session_search({"query": "violin"}, store=SessionStore(path, read_only=True))
    store = SessionStore(path, embedder=BrokenEmbedder())
    try:
        store.create_session("s3")
        store.append_message("s3", "user", "written while the embedder is down")
        index = store.vector_index
        assert index is not None and index.wait_idle(30)
        assert index.last_error is not None and "down" in index.last_error
        assert store.vector_coverage()["embedded"] == 0
        # The query embedding fails too: discovery is exactly the lexical one.
        out = json.loads(session_search({"query": "violin"}, store=store))
        assert out.pop("recall") == "lexical" and "embedded" in out.pop("recall_note")
        assert out == json.loads(lexical)
        with pytest.raises(EmbedderUnavailable):
            store.embed_pending()
    finally:
        store.close()


def test_other_model_vectors_are_ignored_and_can_be_dropped(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    with SessionStore(path, embedder=HashEmbedder("model-a"), embed_in_background=False) as store:
        _fill(store)
        store.embed_pending()
    other = HashEmbedder("model-b")
    with SessionStore(path, embedder=other, embed_in_background=False) as store:
        cov = store.vector_coverage()
        assert (cov["embedded"], cov["other_models"]) == (0, 4)
        index = store.vector_index
        assert index is not None
        query = index.query_vector("violin sunday")
        assert query is not None
        assert index.search(query, limit=5) == []  # model-a's vectors are not comparable
        assert index.reset(all_models=False) == 4
        assert store.embed_pending() == 4
        assert set(_vector_rows(path).values()) == {vectors.index_model("model-b")}


def test_removing_the_embedder_gives_back_lexical_search(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    queries = ("violin", "what does my sister play", "周四")
    with SessionStore(path) as store:
        _fill(store)
        want = [session_search({"query": q}, store=store) for q in queries]
    with SessionStore(path, embedder=HashEmbedder(), embed_in_background=False) as store:
        store.embed_pending()
        hybrid = [json.loads(session_search({"query": q}, store=store)) for q in queries]
    assert any(r.get("match") == "semantic" for h in hybrid for r in h["results"])
    with SessionStore(path) as store:  # embedder removed from the configuration
        assert [session_search({"query": q}, store=store) for q in queries] == want


def test_a_bad_embedder_object_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="lacks"):
        SessionStore(tmp_path / "a.db", embedder=object())


def test_read_only_archive_with_an_embedder_searches_without_writing(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    with SessionStore(path, embedder=HashEmbedder(), embed_in_background=False) as store:
        _fill(store)
        store.embed_pending()
    before = path.read_bytes()
    with SessionStore(path, embedder=HashEmbedder(), read_only=True) as store:
        rows = store.discover_messages("violin sunday", limit=3)
        assert rows and rows[0]["session_id"] == "s1"
    assert path.read_bytes() == before


def test_binary_pass_keeps_the_nearest_when_only_a_few_are_rescored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "RESCORE", 5)  # 5 of 120 vectors are scored exactly
    monkeypatch.setattr(vectors, "CONTEXT_BEFORE", 0)
    words = [f"w{i}" for i in range(40)]
    texts = [" ".join([*words[(i * 7) % 40 : (i * 7) % 40 + 3], f"u{i}"]) for i in range(120)]
    with SessionStore(tmp_path / "a.db", embedder=HashEmbedder(), embed_in_background=False) as s:
        s.create_session("s")
        ids = s.append_messages("s", [{"role": "user", "content": t} for t in texts])
        s.embed_pending()
        index = s.vector_index
        assert index is not None
        found = 0
        for mid, text in list(zip(ids, texts, strict=True))[::10]:
            query = index.query_vector(text)
            assert query is not None
            hits = index.search(query, limit=1)
            found += bool(hits) and hits[0].row["id"] == mid
        assert found >= 11  # of 12: the Hamming pass kept the exact match among 5


class PickyEmbedder(HashEmbedder):
    """Refuses any batch holding the word 'poison' (as a server refuses one bad input)."""

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if any("poison" in t for t in texts):
            raise EmbedderUnavailable("test: 400 Bad Request")
        return super().embed_documents(texts)


def test_a_message_the_embedder_refuses_never_blocks_the_others(tmp_path: Path) -> None:
    with SessionStore(
        tmp_path / "a.db", embedder=PickyEmbedder(), embed_in_background=False
    ) as store:
        store.create_session("s")
        store.append_message("s", "user", "harmless first message")
        store.create_session("p")
        bad = store.append_message("p", "user", "poison payload\x00with a NUL")
        store.create_session("t")
        store.append_message("t", "user", "harmless third message")
        assert store.embed_pending(batch_size=8) == 3
        assert store.embed_pending() == 0  # not retried forever
        cov = store.vector_coverage()
        assert cov["embedded"] == cov["total"] == 3
        index = store.vector_index
        assert index is not None
        query = index.query_vector("poison payload")
        assert query is not None
        assert bad not in [h.row["id"] for h in index.search(query, limit=5)]


class HungQueryEmbedder(HashEmbedder):
    """Query embedding never returns until released (a hung server without a timeout)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def embed_query(self, text: str) -> list[float]:
        self.release.wait(30)
        return super().embed_query(text)


def test_a_hung_query_embedder_leaves_search_lexical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "QUERY_TIMEOUT", 0.2)
    path = tmp_path / "a.db"
    with SessionStore(path) as plain:
        _fill(plain)
        want = session_search({"query": "violin"}, store=plain)
    emb = HungQueryEmbedder()
    store = SessionStore(path, embedder=emb, embed_in_background=False)
    try:
        store.embed_pending()
        # First call waits QUERY_TIMEOUT, the next does not wait for the hung call at all;
        # both answer lexically and say so.
        for _ in range(2):
            out = json.loads(session_search({"query": "violin"}, store=store))
            assert out.pop("recall") == "lexical" and "embedded" in out.pop("recall_note")
            assert out == json.loads(want)
        emb.release.set()
    finally:
        emb.release.set()
        store.close()


class ByMeaningEmbedder(HashEmbedder):
    """The query "retention" sits exactly on the greeting, and far from the message that
    contains the word: by meaning alone, the greeting would stand for its session."""

    def _vector(self, text: str) -> list[float]:
        axis = 0 if text == "retention" or ("Ada" in text and "retention" not in text) else 1
        if "retention" not in text and "Ada" not in text:
            axis = 2
        return [1.0 if i == axis else 0.0 for i in range(self.dim)]


def test_a_session_found_by_the_word_is_shown_at_the_word(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "a.db", embedder=ByMeaningEmbedder(), embed_in_background=False)
    try:
        store.create_session("backups", source="cli", started_at=1_700_000_000)
        store.append_message(
            "backups", "user", "Hi, I'm Ada. Keep answers short.", timestamp=1_700_000_001
        )
        store.append_message(
            "backups", "assistant", "Got it: 14-day retention on the NAS.", timestamp=1_700_000_002
        )
        store.create_session("other", source="cli", started_at=1_700_003_600)
        store.append_message(
            "other", "user", "The cat knocked a glass over", timestamp=1_700_003_601
        )
        store.append_message("other", "assistant", "Cats love gravity", timestamp=1_700_003_602)
        assert store.embed_pending() == 4
        out = json.loads(session_search({"query": "retention", "limit": 3}, store=store))
    finally:
        store.close()
    top = out["results"][0]
    assert top["session_id"] == "backups"
    assert ">>>retention<<<" in top["snippet"], top
    assert "match" not in top  # a word hit, shown as one
