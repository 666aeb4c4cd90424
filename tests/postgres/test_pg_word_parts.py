"""The word index in two parts (schema 8), as the SQLite archive's two word tables: tool
output apart from the conversation. Every search of it names its part literally (so that
even a generic plan can use the part's partial index), and a database of schema 7 is
upgraded to it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from hermes_memory_postgres import PostgresSessionArchive
from hermes_memory_postgres.archive._filters import BOTH, NOT_TOOL, TOOL

TALK = ["user", "assistant"]


def _indexes(archive: PostgresSessionArchive) -> dict[str, str]:
    rows: Any = archive.db.run(
        lambda c: c.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'hm_messages'"
            " AND schemaname = current_schema() AND indexdef LIKE '%%(words)%%'"
        ).fetchall()
    )
    return {r["indexname"]: r["indexdef"] for r in rows}


def _fill(archive: PostgresSessionArchive) -> tuple[int, int]:
    archive.create_session("p")
    said = archive.append_message("p", "user", "the kestrel migration plan")
    (tool,) = archive.append_messages("p", [{"role": "tool", "content": "kestrel: 3 rows"}])
    return said, tool


def _found(archive: PostgresSessionArchive, query: str, **kw: Any) -> set[int]:
    hits = archive.find_hits(query, **kw)
    return set() if hits is None else {int(r["id"]) for r in hits.rows}


@pytest.fixture
def archive(schema_dsn: str, owner: str) -> Iterator[PostgresSessionArchive]:
    store = PostgresSessionArchive(schema_dsn, owner=owner)
    yield store
    store.close()


def test_two_partial_indexes_split_by_role(archive: PostgresSessionArchive) -> None:
    found = _indexes(archive)
    assert set(found) == {"hm_messages_words", "hm_messages_tools"}
    assert "WHERE (role <> 'tool'::text)" in found["hm_messages_words"]
    assert "WHERE (role = 'tool'::text)" in found["hm_messages_tools"]
    assert set(archive.index_sizes()) == {"words", "tools", "cjk"}


def test_a_schema_7_database_is_upgraded(schema_dsn: str, owner: str) -> None:
    old = PostgresSessionArchive(schema_dsn, owner=owner)
    said, tool = _fill(old)

    def downgrade(conn: psycopg.Connection[Any]) -> None:
        conn.execute("DROP INDEX hm_messages_words, hm_messages_tools")
        conn.execute("CREATE INDEX hm_messages_words ON hm_messages USING gin (words)")
        conn.execute("DELETE FROM hm_schema_version WHERE version >= 8")

    old.db.run(downgrade)
    assert list(_indexes(old)) == ["hm_messages_words"]
    old.close()
    upgraded = PostgresSessionArchive(schema_dsn, owner=owner)
    try:
        assert set(_indexes(upgraded)) == {"hm_messages_words", "hm_messages_tools"}
        assert _found(upgraded, "kestrel") == {said, tool}
        assert _found(upgraded, "kestrel", role_filter=TALK) == {said}
        assert _found(upgraded, "kestrel", role_filter=["tool"]) == {tool}
    finally:
        upgraded.close()


def _parts_named(
    archive: PostgresSessionArchive, monkeypatch: pytest.MonkeyPatch, roles: list[str] | None
) -> set[str]:
    """The parts of the word index named by the statements a range of searches sends
    (each must name one: `NOT_TOOL`, `TOOL` or `BOTH`)."""
    named: set[str] = set()
    real = psycopg.Connection.execute

    def spy(self: Any, query: Any, params: Any = None, **kw: Any) -> Any:
        if isinstance(query, str) and "words @@" in query:
            part = next((p for p in (BOTH, NOT_TOOL, TOOL) if p in query), None)
            assert part is not None, query
            named.add(part)
        return real(self, query, params, **kw)

    monkeypatch.setattr(psycopg.Connection, "execute", spy)
    for query in ("kestrel plan", "what was the kestrel plan", '"kestrel migration"', "kest*"):
        for fallback in (False, True):
            for sort in (None, "newest"):
                archive.find_hits(query, role_filter=roles, any_terms=fallback, sort=sort)
    monkeypatch.undo()
    return named


def test_every_word_search_names_its_part(
    archive: PostgresSessionArchive, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A role filter is a parameter, from which a generic plan (a prepared statement, or a
    # pooler's) cannot prove a partial index's predicate: each statement over the word
    # index names its part literally, so that any plan may use that part's index.
    _fill(archive)
    assert _parts_named(archive, monkeypatch, TALK) == {NOT_TOOL}
    assert _parts_named(archive, monkeypatch, ["user"]) == {NOT_TOOL}
    assert _parts_named(archive, monkeypatch, None) == {BOTH}
    assert _parts_named(archive, monkeypatch, ["assistant", "tool"]) == {BOTH}
    assert _parts_named(archive, monkeypatch, ["tool"]) == {TOOL}
