"""Results found by meaning only must clear a similarity floor (per embedder): an unrelated
question gets no answer instead of ``limit`` unrelated ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hermes_memory_sessions.search._hybrid as hybrid
from hermes_memory_sessions.storage._store import SessionStore
from hermes_memory_sessions.tool import session_search

pytest.importorskip("numpy")

from test_hybrid_lifecycle import Words  # after the numpy guard


class FlooredWords(Words):
    name = "test-words-floored"
    similarity_floor = 0.5


def _store(path: Path, embedder: Words) -> SessionStore:
    store = SessionStore(path, embedder=embedder, embed_in_background=False)
    store.create_session("music", source="cli")
    store.append_message("music", "user", "my violin teacher moved to Porto")
    store.create_session("food", source="cli")
    store.append_message("food", "user", "the sourdough starter died again")
    store.embed_pending()
    return store


def test_without_a_floor_every_query_returns_semantic_rows(tmp_path: Path) -> None:
    store = _store(tmp_path / "a.db", Words())
    try:
        rows = store.discover_messages("quantum chromodynamics lecture notes", limit=5)
        assert rows and {r["match"] for r in rows} == {"semantic"}
    finally:
        store.close()


def test_a_declared_floor_drops_unrelated_semantic_rows(tmp_path: Path) -> None:
    store = _store(tmp_path / "a.db", FlooredWords())
    try:
        assert store.discover_messages("quantum chromodynamics lecture notes", limit=5) == []
        out = json.loads(session_search({"query": "quantum chromodynamics"}, store=store))
        assert out["count"] == 0
        # Close in meaning (shares words) still passes; word matches never need the floor.
        close = store.discover_messages("who teaches violin", limit=5)
        assert close and close[0]["session_id"] == "music"
        words = store.discover_messages("sourdough", limit=5)
        assert words[0]["session_id"] == "food" and words[0]["match"] == "and"
    finally:
        store.close()


def test_floors_by_embedder_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(hybrid.DENSE_FLOORS, Words.name, 0.5)
    store = _store(tmp_path / "a.db", Words())
    try:
        assert store.discover_messages("quantum chromodynamics lecture notes", limit=5) == []
    finally:
        store.close()


class MarginWords(Words):
    name = "test-words-margin"
    similarity_margin = 0.3


def test_a_margin_over_the_median_candidate_drops_what_does_not_stand_out(
    tmp_path: Path,
) -> None:
    topics = ["violin lessons", "sourdough bread", "garden roses", "tax return", "bike repair"]

    def build(path: Path, embedder: Words) -> SessionStore:
        store = SessionStore(path, embedder=embedder, embed_in_background=False)
        for i, topic in enumerate(topics * 5):  # above MARGIN_MIN_POOL candidates
            store.create_session(f"s{i}", source="cli")
            store.append_message(f"s{i}", "user", f"week {i} {topic}")
        store.embed_pending()
        return store

    plain = build(tmp_path / "p.db", Words())
    margin = build(tmp_path / "m.db", MarginWords())
    try:
        # No word of the question is in the archive: by meaning alone, nothing stands out.
        assert plain.discover_messages("quantum physics lecture", limit=5)
        assert margin.discover_messages("quantum physics lecture", limit=5) == []
        # Word matches never need the margin.
        rows = margin.discover_messages("garden roses", limit=5)
        assert rows and {r["session_id"] for r in rows} == {f"s{i}" for i in range(2, 25, 5)}
    finally:
        plain.close()
        margin.close()
