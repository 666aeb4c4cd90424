"""Two tiers embed a search's query with both models at once, not one after the other
(the fast model's time hides in the quality model's; hermes_memory_sessions.search._tiered).

Each stand-in model waits in ``embed_query`` until the other one has started too: embedded
one after the other, the first would give up (its query embedding fails) and only one tier
would answer.
"""

from __future__ import annotations

import threading
from pathlib import Path

from sessions_helpers import HashedWordsEmbedder

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
