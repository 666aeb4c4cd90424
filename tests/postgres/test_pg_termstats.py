"""The per-owner term statistics (``hm_term_df``) stay exact through every write path, and
the natural-language fallback reads them to drop over-common terms."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

import hermes_memory_postgres.archive._natural as natural
from hermes_memory_postgres import PostgresSessionArchive
from hermes_memory_postgres.archive._filters import BOTH, NOT_TOOL, TOOL
from hermes_memory_postgres.archive._termstats import frequencies
from hermes_memory_sessions.search import Term, parse_query
from hermes_memory_sessions.search._query import folded, word_forms


def _stored(archive: PostgresSessionArchive) -> dict[str, int]:
    rows = archive.db.run(
        lambda c: c.execute(
            "SELECT lexeme, df FROM hm_term_df WHERE owner = %s AND df <> 0", (archive.owner,)
        ).fetchall()
    )
    return {str(r["lexeme"]): int(r["df"]) for r in rows}


def _recounted(archive: PostgresSessionArchive) -> dict[str, int]:
    rows: list[Any] = archive.db.run(
        lambda c: c.execute(
            "SELECT CASE WHEN role = 'tool' THEN 'tool ' ELSE '' END || lex AS lex,"
            " COUNT(*) AS n FROM hm_messages,"
            " unnest(tsvector_to_array(COALESCE(words, ''::tsvector))) AS lex"
            " WHERE owner = %s GROUP BY 1 UNION ALL"
            " SELECT CASE WHEN role = 'tool' THEN 'tool ' ELSE '' END, COUNT(*)"
            " FROM hm_messages WHERE owner = %s GROUP BY 1",
            (archive.owner, archive.owner),
        ).fetchall()
    )
    return {str(r["lex"]): int(r["n"]) for r in rows}


def _ranking_parameters(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The parameters of every ranking statement sent from now on (filled as they go)."""
    sent: list[str] = []
    execute = psycopg.Connection.execute

    def spy(self: Any, query: Any, params: Any = None, **kw: Any) -> Any:
        if "ts_rank" in str(query):
            sent.extend(str(p) for p in params or ())
        return execute(self, query, params, **kw)

    monkeypatch.setattr(psycopg.Connection, "execute", spy)
    return sent


@pytest.fixture
def archive(pg_dsn, owner):
    store = PostgresSessionArchive(pg_dsn, owner=owner)
    yield store
    store.close()


def test_statistics_follow_every_insert_and_delete(archive, pg_dsn, owner):
    archive.create_session("a")
    archive.append_message("a", "user", "Deploy the SERVER, deploy it twice 部署")
    archive.append_messages("a", [{"role": "assistant", "content": "server déployé"}])
    archive.import_session(
        {"id": "b", "source": "cli"},
        [{"role": "user", "content": "backup server", "timestamp": 1.0}],
    )
    archive.bulk_import(
        [({"id": f"c{i}"}, [{"role": "user", "content": f"bulk server w{i}"}]) for i in range(3)]
    )
    archive.import_more(
        "b", [{"role": "tool", "content": "tool says server"}], import_source="x", source_last_id=2
    )
    stored = _stored(archive)
    assert stored == _recounted(archive)
    assert stored["server"] == 6 and stored["deploy"] == 1 and stored[""] == 6
    assert stored["tool server"] == 1 and stored["tool "] == 1  # tool output apart
    assert stored["deploye"] == 1  # diacritics folded as in the index
    other = PostgresSessionArchive(pg_dsn, owner=owner + "-other")
    other.create_session("a")
    other.append_message("a", "user", "server")
    assert _stored(archive)["server"] == 6  # another owner's writes are not counted here
    other.close()
    assert archive.delete_session("a")
    archive.end_session("b", "done")
    archive.db.run(
        lambda c: c.execute(
            "UPDATE hm_sessions SET started_at = 0 WHERE owner = %s AND id = 'b'",
            (archive.owner,),
        )
    )
    assert archive.prune(1) == 1
    stored = _stored(archive)
    assert stored == _recounted(archive)
    assert stored["server"] == 3 and "deploy" not in stored and stored[""] == 3
    assert "tool server" not in stored and "tool " not in stored


def test_natural_fallback_drops_terms_the_statistics_call_common(archive, monkeypatch):
    monkeypatch.setattr(natural, "COMMON_TERM_CAP", 5)
    archive.create_session("common")
    archive.append_messages(
        "common", [{"role": "user", "content": f"alpha note {i}"} for i in range(8)]
    )
    archive.create_session("rare")
    rare = archive.append_message("rare", "user", "beta only here")
    hits = archive.find_hits("alpha beta", any_terms=True, limit=20)
    assert hits is not None
    assert [r["id"] for r in hits.rows] == [rare]
    monkeypatch.setattr(natural, "COMMON_TERM_CAP", 50)
    hits = archive.find_hits("alpha beta", any_terms=True, limit=20)
    assert hits is not None and len(hits.rows) == 9  # nothing common: both terms rank


def test_prefix_and_phrase_terms_are_counted_not_looked_up(archive, monkeypatch):
    monkeypatch.setattr(natural, "COMMON_TERM_CAP", 3)
    archive.create_session("s")
    archive.append_messages("s", [{"role": "user", "content": f"gamma{i} x"} for i in range(5)])
    archive.create_session("t")
    keep = archive.append_message("t", "user", "delta one")
    hits = archive.find_hits("gamma* delta", any_terms=True, limit=20)
    assert hits is not None and [r["id"] for r in hits.rows] == [keep]


def test_a_word_no_message_holds_does_not_stand_in_for_the_common_ones(archive, monkeypatch):
    # "week" is in no message: kept as the one rare term it made the fallback find nothing.
    monkeypatch.setattr(natural, "COMMON_TERM_CAP", 5)
    archive.create_session("common")
    ids = archive.append_messages(
        "common", [{"role": "user", "content": f"docker deployment {i}"} for i in range(8)]
    )
    hits = archive.find_hits("docker deployment last week", any_terms=True, limit=20)
    assert hits is not None and {r["id"] for r in hits.rows} == set(ids)


def test_folded_terms_search_only_the_forms_some_message_holds(archive, monkeypatch):
    archive.create_session("s")
    painted = archive.append_message("s", "user", "we painted the fence")
    terms = [Term("paint", forms=word_forms("paint") or ()), Term("zzyzx", forms=("zzyzx",))]
    df, _ = archive.db.run(
        lambda c: frequencies(c, archive.owner, natural.statistics_lexemes(terms), BOTH)
    )
    held = natural.held_forms(terms, df)
    assert held == [Term("paint", forms=("painted",))]  # the absent word is left out
    sent = _ranking_parameters(monkeypatch)
    hits = archive.find_hits(folded(parse_query("when did we paint zzyzx")), any_terms=True)
    assert hits is not None and [r["id"] for r in hits.rows] == [painted]
    # The ranking statement names only the held form: absent ones raise the planner's
    # estimate of the matches (a walk of every id at a million messages).
    assert sent and not [p for p in sent if "paints" in p or "painting" in p]


def test_a_folded_term_is_common_by_the_sum_of_its_forms(archive, monkeypatch):
    # "book" in three messages and "booking" in three: six together, common at a cap of 5
    # (as SQLite's count of the forms OR-ed), so only the rare "kyoto" ranks.
    monkeypatch.setattr(natural, "COMMON_TERM_CAP", 5)
    archive.create_session("b")
    archive.append_messages(
        "b",
        [
            {"role": "user", "content": f"{word} note {i}"}
            for word in ("book", "booking")
            for i in range(3)
        ],
    )
    archive.create_session("k")
    kyoto = archive.append_message("k", "user", "kyoto only here")
    hits = archive.find_hits(folded(parse_query("book kyoto")), any_terms=True, limit=20)
    assert hits is not None and [r["id"] for r in hits.rows] == [kyoto]


def test_when_every_term_is_common_the_fallback_ranks_the_newest_few(archive, monkeypatch):
    # As on SQLite (test_sessions_natural): the oldest, best match is outside the newest
    # RANK_WINDOW (4) matches of two common words, and inside the wide window.
    monkeypatch.setattr(natural, "COMMON_TERM_CAP", 5)
    monkeypatch.setattr(natural, "NATURAL_POOL", 2)
    monkeypatch.setattr(natural, "RANK_WINDOW", 4)
    archive.create_session("old")
    best = archive.append_message("old", "user", "alpha beta alpha beta")
    archive.create_session("common")
    newer = archive.append_messages(
        "common", [{"role": "user", "content": f"alpha beta note {i}"} for i in range(10)]
    )

    def found(query: str) -> list[int]:
        hits = archive.find_hits(query, any_terms=True, limit=2)
        assert hits is not None
        return [int(r["id"]) for r in hits.rows]

    assert found("alpha beta") and set(found("alpha beta")) <= set(newer[-4:])
    monkeypatch.setattr(natural, "RANK_WINDOW", natural.NATURAL_WINDOW)
    assert found("alpha beta")[0] == best
    monkeypatch.setattr(natural, "RANK_WINDOW", 4)
    omega = archive.append_message("old", "user", "omega")
    assert omega in found("alpha beta omega")


def test_tool_output_is_counted_in_its_own_part(archive, monkeypatch):
    # As on SQLite, whose two word tables count their words apart: a word that tool output
    # repeats is common there, not in the conversation, where the fallback keeps it.
    monkeypatch.setattr(natural, "COMMON_TERM_CAP", 5)
    archive.create_session("s")
    said = archive.append_message("s", "user", "the grafana dashboard broke once")
    archive.append_message("s", "assistant", "which panel of it")
    archive.append_messages(
        "s", [{"role": "tool", "content": f"grafana query {i} ok"} for i in range(8)]
    )

    def counts(part: str) -> tuple[dict[str, int], int]:
        return archive.db.run(lambda c: frequencies(c, archive.owner, ["grafana"], part))

    assert counts(NOT_TOOL) == ({"grafana": 1}, 2)
    assert counts(TOOL) == ({"grafana": 8}, 8)
    assert counts(BOTH) == ({"grafana": 9}, 10)
    # Rare in the conversation, "grafana" is ranked on there beside "panel" (counted over
    # every role it was common, and dropped for the rarer word).
    sent = _ranking_parameters(monkeypatch)
    hits = archive.find_hits("grafana panel", any_terms=True, role_filter=["user", "assistant"])
    monkeypatch.undo()
    assert "'grafana'" in sent and "'panel'" in sent
    assert hits is not None and said in {r["id"] for r in hits.rows}


def test_a_schema_9_database_gets_its_statistics_recounted(schema_dsn, owner):
    store = PostgresSessionArchive(schema_dsn, owner=owner)
    store.create_session("s")
    store.append_message("s", "user", "grafana alert")
    store.append_messages("s", [{"role": "tool", "content": "grafana ok"}])

    def downgrade(conn: psycopg.Connection[Any]) -> None:  # schema 9 counted every role
        conn.execute("DELETE FROM hm_term_df")
        conn.execute(
            "INSERT INTO hm_term_df (owner, lexeme, df) VALUES (%s, 'grafana', 2),"
            " (%s, 'alert', 1), (%s, 'ok', 1), (%s, '', 2)",
            (owner, owner, owner, owner),
        )
        conn.execute("DELETE FROM hm_schema_version WHERE version >= 10")

    store.db.run(downgrade)
    store.close()
    upgraded = PostgresSessionArchive(schema_dsn, owner=owner)
    try:
        assert _stored(upgraded) == _recounted(upgraded)
        assert _stored(upgraded) == {
            "grafana": 1,
            "alert": 1,
            "": 1,
            "tool grafana": 1,
            "tool ok": 1,
            "tool ": 1,
        }
    finally:
        upgraded.close()
