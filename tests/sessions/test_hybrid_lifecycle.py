"""Hybrid recall from the first query to the last message of a process.

* the first discovery of a process waits for an embedder that is still loading (within
  ``FIRST_QUERY_WAIT``), or its answer says that recall is lexical for now;
* ``SessionArchiveProvider.shutdown`` embeds what is pending within a bound and reports (and logs)
  what it left.

A small deterministic embedder stands in for the model (real threads, real SQLite).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import hermes_memory_sessions.vectors._embedding_config as ec
from hermes_memory_sessions.provider import SessionArchiveProvider
from hermes_memory_sessions.storage._store import SessionStore
from hermes_memory_sessions.tool import session_search

pytest.importorskip("numpy")


class Words:
    """Hashed bag of words: texts sharing words are similar; ``delay`` per document batch."""

    name = "test-words"
    dim = 64

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay

    def _vector(self, text: str) -> list[float]:
        out = [0.0] * self.dim
        for word in re.findall(r"\w+", text.lower()):
            out[hashlib.sha256(word.encode()).digest()[0] % self.dim] += 1.0
        out[1] += 0.01
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        time.sleep(self.delay)
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


def _store(path: Path) -> SessionStore:
    store = SessionStore(path)
    store.create_session("music", source="cli")
    store.append_message("music", "user", "my violin teacher moved to Porto")
    store.create_session("food", source="cli")
    store.append_message("food", "user", "the sourdough starter died again")
    return store


def _ask(store: SessionStore, query: str) -> dict[str, Any]:
    return json.loads(session_search({"query": query, "limit": 3}, store=store))


def test_first_query_waits_for_a_loading_embedder(tmp_path: Path) -> None:
    store = _store(tmp_path / "a.db")
    try:

        def load() -> Words:
            time.sleep(0.3)  # a model loading
            return Words()

        ec.start_loading(store, load)
        out = _ask(store, "violin teacher")
        assert out["recall"] == "hybrid" and "recall_note" not in out
        assert out["results"][0]["session_id"] == "music"
    finally:
        store.close()


def test_first_query_says_lexical_when_the_embedder_is_late(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(ec, "FIRST_QUERY_WAIT", 0.2)
    release = threading.Event()
    store = _store(tmp_path / "a.db")
    try:

        def load() -> Words:
            release.wait(10)
            return Words()

        thread = ec.start_loading(store, load)
        out = _ask(store, "violin teacher")
        assert out["success"] and out["results"][0]["session_id"] == "music"
        assert out["recall"] == "lexical" and "still loading" in out["recall_note"]
        release.set()
        thread.join(5)
        again = _ask(store, "violin teacher")
        assert again["recall"] == "hybrid"
    finally:
        release.set()
        store.close()


def test_an_embedder_that_cannot_load_is_reported(tmp_path: Path) -> None:
    store = _store(tmp_path / "a.db")
    try:
        ec.start_loading(store, lambda: None).join(5)
        out = _ask(store, "violin teacher")
        assert out["recall"] == "lexical" and "could not be loaded" in out["recall_note"]
        none = _ask(store, "nothing like this anywhere")
        assert none["count"] == 0 and none["recall"] == "lexical"
    finally:
        store.close()


def test_no_embedder_configured_keeps_the_lexical_shape(tmp_path: Path) -> None:
    store = _store(tmp_path / "a.db")
    try:
        out = _ask(store, "violin teacher")
        assert "recall" not in out and "recall_note" not in out
    finally:
        store.close()


def test_shutdown_embeds_pending_within_its_bound_and_reports(tmp_path, caplog) -> None:
    store = SessionStore(tmp_path / "a.db", embedder=Words(), embed_in_background=False)
    provider = SessionArchiveProvider(store=None, config={})
    provider._store = store  # the provider owns it, as when it opened it itself
    store.create_session("s", source="cli")
    store.append_messages("s", [{"role": "user", "content": f"note {i}"} for i in range(5)])
    ec.start_loading(store, lambda: None).join(5)  # marks an embedder as configured
    assert store.vector_coverage()["embedded"] == 0
    provider.shutdown()
    assert provider.last_shutdown is not None
    assert provider.last_shutdown["embedded"] == 5 and provider.last_shutdown["left"] == 0
    reopened = SessionStore(tmp_path / "a.db", embedder=Words(), embed_in_background=False)
    try:
        assert reopened.vector_coverage()["embedded"] == 5
    finally:
        reopened.close()


def test_shutdown_reports_what_it_left_past_the_bound(tmp_path, caplog) -> None:
    store = SessionStore(tmp_path / "a.db", embedder=Words(delay=0.3), embed_in_background=False)
    provider = SessionArchiveProvider(store=None, config={})
    provider._store = store
    provider.SHUTDOWN_EMBED_S = 0.1
    store.create_session("s", source="cli")
    store.append_messages("s", [{"role": "user", "content": f"note {i}"} for i in range(40)])
    ec.start_loading(store, lambda: None).join(5)
    with caplog.at_level(logging.WARNING, logger="hermes_memory_sessions.provider"):
        provider.shutdown()
    report = provider.last_shutdown
    assert report is not None and report["left"] > 0
    assert report["embedded"] + report["left"] == 40
    assert any("left without vectors" in r.getMessage() for r in caplog.records)
