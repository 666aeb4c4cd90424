"""Natural-language questions on a small realistic archive: any-term BM25 + neighbour smoothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import hermes_memory_sessions.search._lexical as lexical
from hermes_memory_sessions.search._query import any_terms, parse_query
from hermes_memory_sessions.storage import SessionStore
from hermes_memory_sessions.tool import session_search

# Each session: (id, started_at, [(role, content), ...]). The answers of the questions below
# sit in the turn *after* the one sharing the question's words.
CORPUS: list[tuple[str, float, list[tuple[str, str]]]] = [
    (
        "deploy",
        1.70e9,
        [
            ("user", "Our docker deployment on staging keeps failing after the image update."),
            (
                "assistant",
                "The api container needs longer to boot: set start_period to 30s in the"
                " compose healthcheck and pin the base image.",
            ),
            ("user", "That worked, the rollout is green now."),
            ("assistant", "Great. I also added a smoke test to the pipeline."),
        ],
    ),
    (
        "kyoto",
        1.71e9,
        [
            ("user", "Can you look for a hotel in Kyoto for the autumn trip?"),
            ("assistant", "Reserved: the Gion ryokan for three nights, breakfast included."),
            ("user", "Perfect, add it to the shared calendar."),
        ],
    ),
    (
        "bread",
        1.72e9,
        [
            ("user", "My sourdough starter smells like acetone."),
            ("assistant", "Feed it twice a day at 1:1:1 and keep it warmer, around 26 C."),
        ],
    ),
    (
        "caroline",
        1.73e9,
        [
            ("user", "Caroline: I love painting sunsets on weekends."),
            ("assistant", "Melanie: that sounds relaxing."),
            ("user", "Caroline: I moved here from Sweden 4 years ago."),
            ("assistant", "Melanie: do you miss it?"),
        ],
    ),
]
# Newer sessions sharing single common words with the questions.
NOISE = [
    "docker desktop asks for an update again",
    "the staging calendar is full this week",
    "a hotel newsletter landed in my inbox",
    "Caroline: the weekend was busy",
    "deployment of the new office chairs is next month",
    "the image in the slide deck is blurry",
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    s = SessionStore(tmp_path / "sessions.db")
    for sid, started, turns in CORPUS:
        s.create_session(sid, started_at=started)
        s.append_messages(sid, [{"role": r, "content": c} for r, c in turns])
    for i, text in enumerate(NOISE):
        s.create_session(f"noise{i}", started_at=1.8e9 + i)
        s.append_messages(f"noise{i}", [{"role": "user", "content": text}])
    yield s
    s.close()


def call(store: SessionStore, **args: object) -> dict:
    return json.loads(session_search(args, store=store))


def _contents(store: SessionStore, query: str, limit: int) -> list[str]:
    rows = store.search_messages(query, any_terms=True, limit=limit, with_context=False)
    ids = [r["id"] for r in rows]
    with store.read() as conn:
        text = dict(conn.execute("SELECT id, content FROM messages").fetchall())
    return [text[i] for i in ids]


def test_answer_in_the_next_turn_ranks_above_single_word_matches(store: SessionStore) -> None:
    question = "why was the docker deployment failing on staging"
    answer = next(c for r, c in CORPUS[0][2] if "start_period" in c)
    # the answer shares no content word with the question: plain BM25 cannot find it
    words = {t.text.casefold() for t in any_terms(parse_query(question))}
    assert not words & set(answer.casefold().replace(":", " ").split())
    top = _contents(store, question, 10)
    assert top[0].startswith("Our docker deployment on staging")
    # the next turn comes second, before every noise message sharing one question word
    assert top[1] == answer
    noise = [i for i, t in enumerate(top) if t in NOISE]
    assert noise and min(noise) > 1


def test_session_search_question_finds_session_and_answer(store: SessionStore) -> None:
    out = call(store, query="which hotel did we book in Kyoto for the trip")
    assert out["fallback"] == "any_terms"
    first = out["results"][0]
    assert first["session_id"] == "kyoto"
    assert first["match"] == "any_terms"
    assert any("Gion ryokan" in (m["content"] or "") for m in first["messages"])


def test_time_words_are_content_words(store: SessionStore) -> None:
    # "years" and "ago" are what the answer says; dropping them would tie it with every
    # other "Caroline" message.
    assert {"years", "ago", "move"} <= {
        t.text for t in any_terms(parse_query("Where did Caroline move from 4 years ago?"))
    }
    top = _contents(store, "Where did Caroline move from 4 years ago?", 1)
    assert top == ["Caroline: I moved here from Sweden 4 years ago."]


def test_function_words_alone_do_not_match(store: SessionStore) -> None:
    assert any_terms(parse_query("what did we do about it then")) == []
    assert store.search_messages("what did we do about it then", any_terms=True) == []


def test_fallback_runs_a_bounded_number_of_statements(tmp_path: Path) -> None:
    # One long session: no second lineage exists, so the fallback cannot fill `limit`; it
    # must still stop after a bounded number of SQL statements, not page through it all.
    s = SessionStore(tmp_path / "one.db")
    s.create_session("one", started_at=1.7e9)
    turns = [
        f"docker compose healthcheck step {i}: deployment of service {i % 7} on staging"
        for i in range(400)
    ]
    s.append_messages(
        "one", [{"role": ("user", "assistant")[i % 2], "content": t} for i, t in enumerate(turns)]
    )
    statements: list[str] = []
    s.conn.set_trace_callback(statements.append)
    try:
        out = json.loads(
            session_search({"query": "what did we decide about the docker deployment"}, store=s)
        )
    finally:
        s.conn.set_trace_callback(None)
        s.close()
    assert out["count"] == 1
    top_level = [st for st in statements if not st.startswith(("--", "PRAGMA"))]
    assert len(top_level) <= 40, top_level


@pytest.fixture
def capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SessionStore]:
    """An archive whose fallback calls a word matching 5 messages or more common, with an
    empty session "common"."""
    monkeypatch.setattr(lexical, "COMMON_TERM_CAP", 5)
    store = SessionStore(tmp_path / "common.db")
    store.create_session("common")
    yield store
    store.close()


def test_a_word_no_message_holds_does_not_stand_in_for_the_common_ones(
    capped: SessionStore,
) -> None:
    # "week" is in no message: kept as the one rare term it made the fallback find nothing.
    ids = [capped.append_message("common", "user", f"docker deployment {i}") for i in range(8)]
    rows = capped.search_messages("docker deployment last week", any_terms=True, limit=20)
    assert {r["id"] for r in rows} == set(ids)


def test_the_fallback_drops_a_common_term_while_rarer_ones_are_left(
    capped: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "alpha" in eight messages is common (cap 5): only "beta" ranks; with a cap above
    # both, both do (the PostgreSQL archive's test_pg_termstats checks the same).
    for i in range(8):
        capped.append_message("common", "user", f"alpha note {i}")
    capped.create_session("rare")
    rare = capped.append_message("rare", "user", "beta only here")
    rows = capped.search_messages("alpha beta", any_terms=True, limit=20)
    assert [r["id"] for r in rows] == [rare]
    monkeypatch.setattr(lexical, "COMMON_TERM_CAP", 50)
    assert len(capped.search_messages("alpha beta", any_terms=True, limit=20)) == 9


def test_when_every_term_is_common_the_fallback_ranks_the_newest_few(
    capped: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The best match is the oldest; ten newer messages make both words common (cap 5).
    # With no rare word to reach old sessions, only the newest RANK_WINDOW (4) matches
    # are ranked; with the wide window it comes first. The PostgreSQL archive's
    # test_pg_termstats checks the same.
    capped.create_session("old")
    best = capped.append_message("old", "user", "alpha beta alpha beta")
    newer = [capped.append_message("common", "user", f"alpha beta note {i}") for i in range(10)]
    monkeypatch.setattr(lexical, "NATURAL_POOL", 2)
    monkeypatch.setattr(lexical, "RANK_WINDOW", 4)
    rows = capped.search_messages("alpha beta", any_terms=True, limit=2)
    assert rows and {r["id"] for r in rows} <= set(newer[-4:])
    monkeypatch.setattr(lexical, "RANK_WINDOW", lexical.NATURAL_WINDOW)
    assert capped.search_messages("alpha beta", any_terms=True, limit=2)[0]["id"] == best
    # A rare word left keeps the wide window: the old session is reached.
    monkeypatch.setattr(lexical, "RANK_WINDOW", 4)
    omega = capped.append_message("old", "user", "omega")
    rows = capped.search_messages("alpha beta omega", any_terms=True, limit=2)
    assert omega in {r["id"] for r in rows}
