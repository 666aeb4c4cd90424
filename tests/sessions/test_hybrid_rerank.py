"""The ranking after fusion in a real archive (issue 22): a question whose evidence lies in two
sessions gets both into the top when one session would otherwise fill it, and semantic-only
hits below the similarity floor stay out however the list is diversified."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sessions_helpers import WordsEmbedder

import hermes_memory_sessions.search._hybrid as hybrid
from hermes_memory_sessions.search._hybrid import discover
from hermes_memory_sessions.storage import SessionStore

pytest.importorskip("numpy")


#: Session "trip" talks about the flights at length; the hotel is in session "stay" only.
SESSIONS = {
    "trip": [
        "We booked the flights to Lisbon for May",
        "The Lisbon flights leave early in the morning",
        "I hope the Lisbon flights are not delayed",
        "Lisbon flights again: window seats for both",
    ],
    "stay": [
        "The hotel in Lisbon is near the river",
        "Sounds lovely",
    ],
}
for n in range(25):  # unrelated background, so the dense side has a real median
    SESSIONS[f"bg{n}"] = [f"note {n}: groceries milk bread {n}", f"reply {n}: fine"]
QUESTION = "Lisbon flights and hotel"


def _archive(path: Path, sessions: dict[str, list[str]]) -> SessionStore:
    """A real archive of ``sessions`` (an hour apart; user and assistant alternating)."""
    s = SessionStore(path, embedder=WordsEmbedder(), embed_in_background=False)
    for i, (sid, turns) in enumerate(sessions.items()):
        s.create_session(sid, source="cli", started_at=1_700_000_000 + i * 3600)
        for t, text in enumerate(turns):
            role = "user" if t % 2 == 0 else "assistant"
            s.append_message(sid, role, text, timestamp=1_700_000_000 + i * 3600 + t)
    s.embed_pending()
    return s


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    s = _archive(tmp_path / "a.db", SESSIONS)
    yield s
    s.close()


def _sessions(store: SessionStore, limit: int) -> list[str]:
    found = discover(store, QUESTION, limit=limit, role_filter=["user", "assistant"])
    assert found is not None and found.hybrid
    return [str(r["session_id"]) for r in found.rows]


def test_without_diversity_one_session_fills_the_top(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hybrid, "SESSION_DIVERSITY", 0.0)
    assert _sessions(store, 3) == ["trip", "trip", "trip"]


def test_diversity_brings_the_second_session_of_the_evidence_into_the_top(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The hotel turn scores about half the best flights turn here: a penalty of half the
    # best score per pick lets it in second (the pure ranking: test_fusion_rerank.py).
    monkeypatch.setattr(hybrid, "SESSION_DIVERSITY", 0.5)
    top = _sessions(store, 3)
    assert top[0] == "trip" and "stay" in top
    # Nothing is lost: the same messages, in another order.
    every = _sessions(store, 200)
    monkeypatch.setattr(hybrid, "SESSION_DIVERSITY", 0.0)
    assert sorted(every) == sorted(_sessions(store, 200))


def test_a_semantic_only_hit_below_the_floor_stays_out_when_diversified(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A floor no cosine reaches: only rows with a query word remain, diversified or not.
    monkeypatch.setitem(hybrid.DENSE_FLOORS, WordsEmbedder.name, 1.01)
    monkeypatch.setattr(hybrid, "SESSION_DIVERSITY", 0.5)
    found = discover(store, QUESTION, limit=50, role_filter=["user", "assistant"])
    assert found is not None
    assert found.rows and all(r["match"] != "semantic" for r in found.rows)
    assert {str(r["session_id"]) for r in found.rows} == {"trip", "stay"}


#: One session plans the party over four turns (the last names neither word); another
#: mentions a garden party once, in passing.
PARTY = {
    "plan": [
        "Planning the garden party with Ana",
        "Bring chairs to the garden party",
        "We start the party at noon on Sunday",
        "Ana will bake a cake for it",
    ],
    "other": ["Garden party at the office was fun years ago", "Nice"],
}


def test_session_support_ranks_the_planning_session_above_a_passing_mention(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    background = {k: v for k, v in SESSIONS.items() if k.startswith("bg")}
    s = _archive(tmp_path / "p.db", {**PARTY, **background})
    try:

        def top_four() -> list[str]:
            found = discover(
                s, "When is the garden party?", limit=4, role_filter=["user", "assistant"]
            )
            assert found is not None
            return [str(r["session_id"]) for r in found.rows]

        assert hybrid.SESSION_SUPPORT > 0  # shipped: chosen by the dev CV
        assert top_four() == ["plan"] * 4  # the cake turn outranks the passing mention
        monkeypatch.setattr(hybrid, "SESSION_SUPPORT", 0.0)
        assert "other" in top_four()
    finally:
        s.close()
