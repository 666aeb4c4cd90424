"""Discovery on PostgreSQL at scale: the newest matches are looked for among the newest ids
first (same answers), and no text search is left to a generic plan (never prepared)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

import hermes_memory_postgres.archive._natural as natural_mod
import hermes_memory_postgres.archive._recent as recent_mod
import hermes_memory_postgres.archive._search as search_mod
from hermes_memory_postgres import Database, PostgresSessionArchive


@pytest.fixture
def archive(pg_dsn: str, owner: str) -> Iterator[PostgresSessionArchive]:
    store = PostgresSessionArchive(pg_dsn, owner=owner)
    yield store
    store.close()


def _fill(archive: PostgresSessionArchive) -> None:
    archive.create_session("s")
    messages = []
    # "alpha" in every other message; "gamma" in the 30 oldest; "omega" in three old ones.
    for i in range(200):
        text = f"alpha note {i}" if i % 2 == 0 else f"beta item {i}"
        text += " gamma" if i < 30 else ""
        messages.append({"role": "user", "content": text + (" omega" if i in (1, 3, 5) else "")})
    archive.append_messages("s", messages)


def _answers(archive: PostgresSessionArchive, queries: list[str]) -> list[list[int]]:
    out = []
    for q in queries:
        for fallback in (False, True):
            hits = archive.find_hits(q, any_terms=fallback, limit=20)
            out.append([int(r["id"]) for r in hits.rows] if hits else [])
    return out


def test_the_newest_ids_first_give_the_same_answers(
    archive: PostgresSessionArchive, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Windows of 10 matches: the newest 40 ids hold 20 "alpha" messages, enough.
    monkeypatch.setattr(search_mod, "RANK_WINDOW", 10)
    monkeypatch.setattr(search_mod, "NATURAL_WINDOW", 10)
    monkeypatch.setattr(natural_mod, "NATURAL_WINDOW", 10)
    _fill(archive)
    bounded: list[bool] = []
    real = recent_mod.newest_matches

    def spy(conn: Any, owner: str, query: Callable[..., Any], window: int) -> Any:
        def recorded(extra: str, params: list[Any]) -> Any:
            bounded.append(bool(extra))
            return query(extra, params)

        return real(conn, owner, recorded, window)

    monkeypatch.setattr(search_mod, "newest_matches", spy)
    queries = ["alpha", "alpha note", "gamma", "omega", "beta item", "where are alpha and omega"]
    monkeypatch.setattr(recent_mod, "RECENT_IDS", (40, 80))
    with_bound = _answers(archive, queries)
    assert True in bounded and False in bounded  # some answered in the range, some not
    bounded.clear()
    monkeypatch.setattr(recent_mod, "RECENT_IDS", ())
    assert _answers(archive, queries) == with_bound
    assert True not in bounded
    # A frequent word is answered from the newest ids alone: one bounded query.
    monkeypatch.setattr(recent_mod, "RECENT_IDS", (40, 80))
    bounded.clear()
    assert archive.find_hits("alpha", limit=5) is not None
    assert bounded == [True]
    # An old one widens the range, then searches everything.
    bounded.clear()
    hits = archive.find_hits("gamma", limit=5)
    assert hits is not None and len(hits.rows) == 5
    assert bounded == [True, True, False]
    # A word the statistics call rarer than the window: the whole archive at once.
    bounded.clear()
    hits = archive.find_hits("omega", limit=5)
    assert hits is not None and len(hits.rows) == 3
    assert bounded == []


def test_the_second_range_is_sized_from_the_first_ones_matches(
    archive: PostgresSessionArchive, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_mod, "RANK_WINDOW", 10)
    archive.create_session("d")
    # "delta" in every fourth message: 5 of the newest 20, 10 needs about 40 ids.
    archive.append_messages(
        "d",
        [
            {"role": "user", "content": f"note {i}" + (" delta" if i % 4 == 0 else "")}
            for i in range(200)
        ],
    )
    spans: list[int | None] = []
    real = recent_mod.newest_matches

    def spy(conn: Any, owner: str, query: Callable[..., Any], window: int) -> Any:
        def recorded(extra: str, params: list[Any]) -> Any:
            spans.append(params[0] if params else None)
            return query(extra, params)

        return real(conn, owner, recorded, window)

    monkeypatch.setattr(search_mod, "newest_matches", spy)
    monkeypatch.setattr(recent_mod, "RECENT_IDS", (20, 150))
    hits = archive.find_hits("delta", limit=10)
    assert hits is not None
    top = max(int(m["id"]) for m in archive.get_messages("d"))
    # 20 ids held 5 matches: the next range is 20 * 10 / 5 * 1.5 = 60 ids, not 150.
    assert spans == [top - 20, top - 60]
    spans.clear()
    monkeypatch.setattr(recent_mod, "RECENT_IDS", ())
    unbounded = archive.find_hits("delta", limit=10)
    assert spans == [None]
    assert unbounded is not None
    assert [r["id"] for r in unbounded.rows] == [r["id"] for r in hits.rows]


def test_text_searches_are_never_prepared_for_a_generic_plan(pg_dsn: str, owner: str) -> None:
    db = Database(pg_dsn, max_size=1)  # one connection: its prepared statements are ours
    archive = PostgresSessionArchive(owner=owner, database=db)
    try:
        _fill(archive)
        for _ in range(8):  # psycopg prepares a statement from its fifth run by default
            assert archive.find_hits("alpha note", limit=5) is not None
            assert archive.find_hits("where is the alpha note", any_terms=True, limit=5)

        def prepared(conn: Any) -> list[str]:
            rows = conn.execute("SELECT statement FROM pg_prepared_statements").fetchall()
            return [str(r["statement"]) for r in rows]

        statements = db.run(prepared)
        assert statements  # the id lookups are prepared as before
        assert not [s for s in statements if "@@" in s]
    finally:
        archive.close()
        db.close()
