"""The stemmed word index (schema 6): hybrid discovery's natural-language fallback searches
it, so every form of a word is one term ("connection" finds "connected", which the word
forms do not); it is built for an existing archive when it opens, follows edits and
deletes, and a read-only open of an older file falls back to the word forms."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sessions_folding_helpers import fill
from sessions_helpers import WordsEmbedder

from hermes_memory_sessions.search import _lexical
from hermes_memory_sessions.search._hybrid import _filters, discover
from hermes_memory_sessions.search._query import folded
from hermes_memory_sessions.storage import SessionStore
from hermes_memory_sessions.storage._schema import META_SCHEMA_KEY, SCHEMA_VERSION

pytest.importorskip("numpy")

WIFI = "Melanie: the printer finally connected to the office wifi."
QUESTION = "who had connection trouble with the printer"
#: "connection" and "connected" share no word form, only a stem.
STEM_ONLY = "any connection problems lately"


def _open(path: Path, *, read_only: bool = False) -> SessionStore:
    return SessionStore(
        path,
        embedder=None if read_only else WordsEmbedder(64),
        embed_in_background=False,
        read_only=read_only,
    )


def _archive(path: Path) -> None:
    with _open(path) as store:
        fill(store)
        store.create_session("office", source="cli", started_at=1_700_100_000)
        store.append_message("office", "user", WIFI)
        store.embed_pending()


def _found(store: SessionStore, question: str) -> dict[str, str]:
    """``{content: how it matched}`` of hybrid discovery's rows (a word embedder: "connection"
    and "connected" are unrelated directions, only the lexical side can join them)."""
    found = discover(store, question, limit=10)
    if found is None:
        return {}
    with store.read() as conn:
        text = dict(conn.execute("SELECT id, content FROM messages").fetchall())
    return {text[int(r["id"])]: str(r["match"]) for r in found.rows}


def _as_schema_5(path: Path) -> None:
    """``path`` as the previous release left it: no stemmed index, schema 5."""
    with sqlite3.connect(path) as conn:
        for trigger in ("ai", "ad", "au"):
            conn.execute(f"DROP TRIGGER hm_fts_stems_{trigger}")
        conn.execute("DROP TABLE hm_fts_stems")
        conn.execute("UPDATE state_meta SET value = '5' WHERE key = ?", (META_SCHEMA_KEY,))
    conn.close()


def test_the_folded_fallback_finds_a_word_by_its_stem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _archive(tmp_path / "a.db")
    with _open(tmp_path / "a.db") as store:
        assert _found(store, STEM_ONLY).get(WIFI) == "any_terms"
        monkeypatch.setattr(_lexical, "_has_stems", lambda conn: False)  # the word forms
        assert _found(store, STEM_ONLY).get(WIFI) != "any_terms"  # only the dense side's


def test_the_lexical_only_path_does_not_stem(tmp_path: Path) -> None:
    _archive(tmp_path / "a.db")
    with _open(tmp_path / "a.db") as store:
        rows = store.search_messages(STEM_ONLY, any_terms=True, with_context=False)
    assert not rows


def test_the_stemmed_index_follows_edits_and_deletes(tmp_path: Path) -> None:
    _archive(tmp_path / "a.db")
    with _open(tmp_path / "a.db") as store:
        with sqlite3.connect(tmp_path / "a.db") as conn:  # another program edits it
            conn.execute(
                "UPDATE messages SET content = 'Melanie: the printer jammed again.'"
                " WHERE content = ?",
                (WIFI,),
            )
        conn.close()
        assert not any("printer" in c for c in _found(store, STEM_ONLY))
        assert "Melanie: the printer jammed again." in _found(store, "who jams printers")
        store.delete_session("office")
        assert not any("printer" in c for c in _found(store, "who jams printers"))


def test_an_archive_of_schema_5_gets_the_stemmed_index_when_it_opens(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    _archive(path)
    _as_schema_5(path)
    with _open(path) as store:
        with store.read() as conn:
            version = conn.execute(
                "SELECT value FROM state_meta WHERE key = ?", (META_SCHEMA_KEY,)
            ).fetchone()[0]
        assert int(version) == SCHEMA_VERSION == 6
        assert _found(store, STEM_ONLY).get(WIFI) == "any_terms"  # the old rows indexed


def test_a_read_only_open_of_schema_5_keeps_the_word_forms(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    _archive(path)
    _as_schema_5(path)
    with _open(path, read_only=True) as store:
        with store.read() as conn:
            assert not _lexical._has_stems(conn)
            parsed = _lexical.parse_query("who went swimming")
            rows = _lexical.natural_rows(conn, folded(parsed), 10, _filters({}))
            text = dict(conn.execute("SELECT id, content FROM messages").fetchall())
    assert any(text[int(r["id"])].startswith("Caroline: I swim") for r in rows)
