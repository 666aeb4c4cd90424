"""Two embedding tiers over one archive: a fast model everywhere at once, the quality model
catching up, each message searched in exactly one tier (hermes_memory_sessions.vectors._tiers).

Deterministic hashed-word embedders stand in for the models (two different vector spaces:
each hashes words with its own salt and width), so these tests check the bookkeeping and the
merge, not a model.
"""

from __future__ import annotations

import hashlib
import math
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes_memory_sessions.search import discover
from hermes_memory_sessions.storage import SessionStore
from hermes_memory_sessions.tool import session_search
from hermes_memory_sessions.vectors import BinaryCodes, attach_configured_embedder, recall_state
from hermes_memory_sessions.vectors._embedding_config import (
    configured_fast_section,
    start_loading,
)
from hermes_memory_sessions.vectors._finish import finish_embedding
from hermes_memory_vectors import EmbedderUnavailable


class Salted:
    """Words hashed into ``dim`` dimensions with the embedder's name as salt."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = dim

    def _vector(self, text: str) -> list[float]:
        v = [0.0] * self.dim
        for word in text.lower().split():
            v[int(hashlib.sha256((self.name + word).encode()).hexdigest(), 16) % self.dim] += 1
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / norm for x in v]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


class Down(Salted):
    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbedderUnavailable("test: this CPU cannot run the quality model")

    def embed_query(self, text: str) -> list[float]:
        raise EmbedderUnavailable("test: this CPU cannot run the quality model")


TOPICS = ["backup", "garden", "violin", "taxes", "hiking", "recipes", "python", "cats"]


def quality() -> Salted:
    return Salted("quality:v1", 64)


def fast() -> Salted:
    return Salted("fast:v1", 48)


def tiered(path: Path) -> SessionStore:
    """An archive with both tiers, embedding only when asked."""
    return SessionStore(path, embedder=quality(), fast_embedder=fast(), embed_in_background=False)


def fill(store: SessionStore, n: int = 48) -> None:
    for s in range(n // 8):
        sid = f"s{s}"
        store.create_session(sid, source="cli")
        for i in range(8):
            topic = TOPICS[(s + i) % len(TOPICS)]
            store.append_message(
                sid,
                role="user" if i % 2 == 0 else "assistant",
                content=f"note {s}-{i} on {topic} plans and {TOPICS[i % 3]} weekend",
            )


def models(path: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(path) as conn:
        return [
            (int(r[0]), str(r[1]))
            for r in conn.execute("SELECT message_id, model FROM hm_vectors ORDER BY message_id")
        ]


def ranking(store: SessionStore, query: str) -> list[tuple[int, str]]:
    found = discover(store, query, limit=15)
    assert found is not None and found.hybrid
    return [(int(r["id"]), str(r["match"])) for r in found.rows]


QUERIES = ["garden weekend plans", "violin", "how do I file my taxes", "cats and python"]


def test_fast_tier_everywhere_then_quality_replaces_it(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    store = tiered(path)
    fill(store)
    index: Any = store.vector_index
    assert index.fast.embed_pending() == 48
    assert {m for _, m in models(path)} == {"fast:v1+ctx2"}
    assert index.quality.embed_pending(10) == 10  # newest first
    rows = models(path)
    assert len(rows) == 48  # one vector per message, never two
    upgraded = sorted(mid for mid, m in rows if m == "quality:v1+ctx2")
    assert upgraded == sorted(mid for mid, _ in rows)[-10:]
    # The fast tier never embeds a message the quality tier holds.
    assert index.fast.embed_pending() == 0
    assert index.fast._embed_ids(upgraded) == 0
    tiers = {t["tier"]: t for t in store.vector_coverage()["tiers"]}
    assert (tiers["quality"]["embedded"], tiers["fast"]["embedded"]) == (10, 38)
    assert tiers["fast"]["searched"] == 48
    store.close()


def test_schema_keys_vectors_by_message_and_model(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "a.db", embedder=quality(), embed_in_background=False)
    fill(store, 8)
    store.embed_pending()
    with store._write() as conn:
        conn.execute(
            "INSERT INTO hm_vectors(message_id, model, vec)"
            " SELECT message_id, 'other+ctx2', vec FROM hm_vectors"
        )
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute(
                "INSERT INTO hm_vectors(message_id, model, vec)"
                " SELECT message_id, model, vec FROM hm_vectors LIMIT 1"
            )
        # An edited message loses both tiers' vectors (the trigger is by message id).
        first = conn.execute("SELECT MIN(message_id) FROM hm_vectors").fetchone()[0]
        conn.execute("UPDATE messages SET content = 'changed' WHERE id = ?", (first,))
        left = conn.execute(
            "SELECT COUNT(*) FROM hm_vectors WHERE message_id = ?", (first,)
        ).fetchone()[0]
    assert left == 0
    store.close()


def test_old_one_vector_per_message_table_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    store = SessionStore(path, embedder=quality(), embed_in_background=False)
    fill(store, 8)
    store.embed_pending()
    store.close()
    with sqlite3.connect(path) as conn:  # rebuild the table as an older release made it
        rows = conn.execute("SELECT seq, message_id, model, vec FROM hm_vectors").fetchall()
        conn.executescript(
            "DROP TRIGGER hm_vectors_msg_ad; DROP TRIGGER hm_vectors_msg_au; DROP TABLE hm_vectors;"
            "CREATE TABLE hm_vectors (seq INTEGER PRIMARY KEY AUTOINCREMENT,"
            " message_id INTEGER NOT NULL UNIQUE, model TEXT NOT NULL, vec BLOB NOT NULL);"
        )
        conn.executemany("INSERT INTO hm_vectors VALUES (?, ?, ?, ?)", rows)
    store = tiered(path)
    assert sorted(models(path)) == sorted((int(r[1]), str(r[2])) for r in rows)
    with sqlite3.connect(path) as conn:
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'hm_vectors'").fetchone()[0]
        seqs = [r[0] for r in conn.execute("SELECT seq FROM hm_vectors ORDER BY seq")]
    assert "UNIQUE (message_id, model)" in sql
    assert seqs == sorted(r[0] for r in rows)
    assert ranking(store, "violin")  # searchable after the migration
    store.close()


def test_upgraded_message_leaves_the_fast_codes(tmp_path: Path) -> None:
    store = tiered(tmp_path / "a.db")
    fill(store)
    index: Any = store.vector_index
    index.fast.embed_pending()
    query = np.asarray(fast().embed_query("violin"), dtype=np.float32)
    before = set(index.fast._codes.nearest(query, 1000))
    assert len(before) == 48
    index.quality.embed_pending(5)
    after = set(index.fast._codes.nearest(query, 1000))
    upgraded = {mid for mid, m in models(tmp_path / "a.db") if m.startswith("quality")}
    assert after == before - upgraded and len(upgraded) == 5
    store.close()


def test_binary_codes_drop_filters_then_compacts() -> None:
    rng = np.random.default_rng(7)
    rows = rng.normal(size=(3000, 32)).astype(np.float32)
    blobs = [
        np.float32(1.0).tobytes() + np.clip(r * 40, -127, 127).astype(np.int8).tobytes()
        for r in rows
    ]
    codes = BinaryCodes()
    codes.add(list(range(3000)), blobs)
    codes.drop(list(range(100)))
    codes.compact()  # fewer than COMPACT_AT: filtered, not yet removed
    assert codes.n == 3000
    found = codes.nearest(rows[0], 3000)
    assert len(found) == 2900 and not set(found) & set(range(100))
    # Fewer asked than there are codes: the dropped ones take no place among them.
    near = codes.nearest(rows[0], 50)
    assert len(near) == 50 and not set(near) & set(range(100))
    codes.drop(list(range(100, 1100)))
    codes.compact()
    assert codes.n == 1900 and not codes.dropped
    assert set(codes.nearest(rows[0], 5000)) == set(range(1100, 3000))
    codes.add([5], blobs[5:6])  # embedded again by this tier: counts again
    assert 5 in codes.nearest(rows[5], 3)


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("end", ["fast", "quality"])
def test_either_end_equals_that_model_alone(tmp_path: Path, query: str, end: str) -> None:
    """Nothing caught up: the fast model's hybrid; all caught up: the quality model's."""
    both = tiered(tmp_path / "t.db")
    single = SessionStore(
        tmp_path / "s.db",
        embedder=fast() if end == "fast" else quality(),
        embed_in_background=False,
    )
    for store in (both, single):
        fill(store)
    if end == "fast":
        both.vector_index.fast.embed_pending()  # type: ignore[union-attr]
    else:
        both.embed_pending()  # fast everywhere, then quality everywhere (replacing it)
        assert {m for _, m in models(tmp_path / "t.db")} == {"quality:v1+ctx2"}
    single.embed_pending()
    assert ranking(both, query) == ranking(single, query)
    both.close()
    single.close()


def test_half_caught_up_merges_both_tiers(tmp_path: Path) -> None:
    store = tiered(tmp_path / "t.db")
    fill(store)
    index: Any = store.vector_index
    index.fast.embed_pending()
    index.quality.embed_pending(24)
    found = discover(store, "violin weekend", limit=48)
    assert found is not None and found.hybrid
    held = dict(models(tmp_path / "t.db"))
    tiers = {held[mid] for mid in found.dense_scores}
    assert tiers == {"quality:v1+ctx2", "fast:v1+ctx2"}  # candidates from both tiers
    store.close()


def test_quality_model_unavailable_fast_tier_alone_says_so(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "a.db")
    fill(store)
    thread = start_loading(store, lambda: None, lambda: fast())  # quality failed to load
    thread.join(10)
    index: Any = store.vector_index
    assert index is not None and index.model == "fast:v1+ctx2"
    assert index.wait_idle(10)
    state = recall_state(store)
    assert state is not None and state[0] == "hybrid" and "fast model" in state[1]
    assert "fast model" in store.vector_coverage()["note"]
    import json

    answer = json.loads(session_search({"query": "violin"}, store=store))
    assert answer["recall"] == "hybrid" and "fast model" in answer["recall_note"]
    store.close()


def test_fast_embedder_config_defaults() -> None:
    assert configured_fast_section({"sessions": {"embedder": "default"}}) == {"embedder": "static"}
    assert configured_fast_section({"sessions": {"embedder": "static"}}) is None
    assert (
        configured_fast_section({"sessions": {"embedder": "default", "fast_embedder": "none"}})
        is None
    )
    assert configured_fast_section({"sessions": {}}) is None
    threads = {"sessions": {"embedder": "default", "embedder_threads": 1}}
    assert configured_fast_section(threads) == {"embedder": "static", "embedder_threads": 1}


def test_broken_quality_model_leaves_fast_tier_working(tmp_path: Path) -> None:
    store = SessionStore(
        tmp_path / "a.db",
        embedder=Down("quality:v1", 64),
        fast_embedder=fast(),
        embed_in_background=False,
    )
    fill(store)
    index: Any = store.vector_index
    index.fast.embed_pending()
    with pytest.raises(EmbedderUnavailable):
        index.quality.embed_pending()
    found = discover(store, "violin", limit=5)
    assert found is not None and found.hybrid  # the fast tier still answers by meaning
    store.close()


def test_shutdown_reports_pending_per_tier(tmp_path: Path) -> None:
    store = tiered(tmp_path / "a.db")
    fill(store)
    report = finish_embedding(store, 0.0)
    tiers = {t["tier"]: t for t in report["tiers"]}
    assert report["left"] == 48 and tiers["fast"]["left"] == 48 and tiers["quality"]["left"] == 48
    report = finish_embedding(store, 30.0)
    tiers = {t["tier"]: t for t in report["tiers"]}
    assert tiers["fast"]["embedded"] == 48 and tiers["fast"]["left"] == 0
    assert tiers["quality"]["embedded"] == 48 and report["left"] == 0
    store.close()


def test_configured_tiers_attach_from_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_memory_sessions.vectors import _embedding_config as cfg

    built: list[str] = []

    def fake_build(section: Any, *, strict: bool) -> Any:
        built.append(str(section["embedder"]))
        return fast() if section["embedder"] == "static" else quality()

    monkeypatch.setattr(cfg, "build_embedder", fake_build)
    store = SessionStore(tmp_path / "a.db")
    fill(store)
    thread = attach_configured_embedder(store, {"sessions": {"embedder": "default"}})
    assert thread is not None
    thread.join(10)
    index: Any = store.vector_index
    assert built == ["default", "static"] and [t.model for t in index.tiers] == [
        "quality:v1+ctx2",
        "fast:v1+ctx2",
    ]
    assert index.fast.wait_idle(10)  # the fast tier's worker embeds the whole archive
    tiers = {t["tier"]: t for t in store.vector_coverage()["tiers"]}
    assert tiers["fast"]["searched"] == 48
    store.close()


def test_first_query_waits_for_the_quality_model_only(tmp_path: Path) -> None:
    import threading

    store = SessionStore(tmp_path / "a.db")
    fill(store)
    release = threading.Event()

    def slow_fast() -> Salted:
        release.wait(10)  # the static model takes seconds to load
        return fast()

    thread = start_loading(store, quality, slow_fast)
    deadline = 50
    while store.vector_index is None and deadline:
        thread.join(0.1)
        deadline -= 1
    index: Any = store.vector_index
    assert index is not None and not hasattr(index, "tiers")  # hybrid already, one tier
    assert ranking(store, "violin")
    release.set()
    thread.join(10)
    index = store.vector_index
    assert [t.model for t in index.tiers] == ["quality:v1+ctx2", "fast:v1+ctx2"]
    assert index.fast.wait_idle(10)
    assert {t["tier"]: t["searched"] for t in store.vector_coverage()["tiers"]}["fast"] == 48
    store.close()


def test_quality_tier_catches_up_the_backlog_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from hermes_memory_sessions.vectors import _index

    monkeypatch.setattr(_index, "CATCH_UP", 4)  # the start-up catch-up alone covers 4
    path = tmp_path / "a.db"
    store = tiered(path)
    fill(store)  # 48 messages, none embedded
    store.close()
    store = SessionStore(path, embedder=quality(), fast_embedder=fast())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if sum(m == "quality:v1+ctx2" for _, m in models(path)) == 48:
            break
        time.sleep(0.1)
    store.close()
    rows = models(path)
    assert len(rows) == 48 and {m for _, m in rows} == {"quality:v1+ctx2"}


def test_fast_embedder_key_reaches_the_provider_settings() -> None:
    # The provider reads ``sessions:`` through SessionsSettings; the key was once dropped
    # there as unknown, so `fast_embedder: none` still gave two tiers.
    from hermes_memory_sessions import SessionsSettings

    off = SessionsSettings.load({"embedder": "default", "fast_embedder": "none"})
    assert configured_fast_section(off) is None
    on = SessionsSettings.load({"embedder": "default"})
    assert configured_fast_section(on) == {"embedder": "static"}
    assert "fast_embedder" in {f["key"] for f in SessionsSettings.schema()}
