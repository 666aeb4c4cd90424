"""A search's query embedding overlaps the rest of the work: it starts before the lexical
side reads (hermes_memory_sessions.search._hybrid), and two tiers embed it with both models
at once, not one after the other (hermes_memory_sessions.search._tiered).

Stand-in models wait for each other, or the lexical read waits for the embedding to have
started: done one after the other, the wait times out and the test fails.
"""

from __future__ import annotations

import threading
from pathlib import Path

from sessions_helpers import HashedWordsEmbedder

from hermes_memory_sessions.search import discover
from hermes_memory_sessions.search._tiered import tiered_dense
from hermes_memory_sessions.storage import SessionStore


class Meeting(HashedWordsEmbedder):
    """Hashed words; ``embed_query`` returns only once the other model is embedding too."""

    def __init__(self, name: str, meeting: threading.Barrier) -> None:
        super().__init__(dim=32, name=name)
        self.meeting = meeting
        self.waiting = False

    def embed_query(self, text: str) -> list[float]:
        if self.waiting:
            self.meeting.wait()  # BrokenBarrierError after its timeout: the embedding fails
        return super().embed_query(text)


def test_both_tiers_embed_the_query_at_the_same_time(tmp_path: Path) -> None:
    meeting = threading.Barrier(2, timeout=3.0)
    quality, fast = Meeting("quality:v1", meeting), Meeting("fast:v1", meeting)
    with SessionStore(
        tmp_path / "a.db", embedder=quality, fast_embedder=fast, embed_in_background=False
    ) as store:
        store.create_session("s")
        ids = store.append_messages(
            "s", [{"role": "user", "content": f"kyoto hotel note {i}"} for i in range(6)]
        )
        index = store.vector_index
        assert index is not None and hasattr(index, "tiers")
        index.fast.embed_pending()
        index.quality.embed_pending(3)  # the newest three move to the quality tier
        quality.waiting = fast.waiting = True
        merged = tiered_dense(tuple(index.tiers), "kyoto hotel", 10, {})
    assert merged is not None
    assert [len(part.hits) for part in merged.parts] == [3, 3]
    assert sorted(int(h.row["id"]) for h in merged.hits) == sorted(ids)


class Announcing(HashedWordsEmbedder):
    """Hashed words; ``embed_query`` says it has started."""

    def __init__(self) -> None:
        super().__init__(dim=32)
        self.started = threading.Event()

    def embed_query(self, text: str) -> list[float]:
        self.started.set()
        return super().embed_query(text)


def test_the_query_is_embedded_while_the_lexical_side_reads(tmp_path: Path) -> None:
    embedder = Announcing()
    with SessionStore(tmp_path / "a.db", embedder=embedder, embed_in_background=False) as store:
        store.create_session("s")
        store.append_messages(
            "s", [{"role": "user", "content": f"kyoto hotel note {i}"} for i in range(6)]
        )
        store.embed_pending()
        seen: list[bool] = []

        def on_statement(sql: str) -> None:
            if "MATCH" in sql and not seen:  # the lexical side's first full-text read
                seen.append(embedder.started.wait(timeout=3.0))

        with store.read() as conn:
            conn.set_trace_callback(on_statement)
        try:
            found = discover(store, "kyoto hotel", limit=5)
        finally:
            with store.read() as conn:
                conn.set_trace_callback(None)
    assert seen == [True]
    assert found is not None
    assert found.hybrid
