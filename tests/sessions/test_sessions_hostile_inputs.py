"""Hostile queries and huge messages: never an SQLite error, snippets from a bounded window."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_memory_sessions.search._lexical import SNIPPET_FTS_MAX_CHARS
from hermes_memory_sessions.storage._store import SessionStore
from hermes_memory_sessions.tool import session_search


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    s = SessionStore(tmp_path / "archive.db")
    s.create_session("s1", title="Deploy notes")
    s.append_message("s1", "user", "deploy with docker compose")
    s.append_message("s1", "assistant", "ok")
    return s


def call(store: SessionStore, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(session_search(args, store=store))
    return result


@pytest.mark.parametrize("char", ["%", "_", "\\", '"', "*"])
def test_a_huge_query_of_pattern_characters_is_answered(store: SessionStore, char: str) -> None:
    for query in (char * 50_000, char * 50_000 + " deploy"):
        out = call(store, query=query)
        assert out.get("success") is True, out
    scrolled = call(store, session_id="%" * 50_000)
    assert "LIKE" not in json.dumps(scrolled)
    assert store.resolve_session_id("%" * 50_000) is None


def test_a_long_message_gets_a_linear_snippet(store: SessionStore) -> None:
    log = " ".join(f"line{i} ok" for i in range(30_000)) + " kaboom failure at the end"
    assert len(log) > SNIPPET_FTS_MAX_CHARS
    store.create_session("s2")
    store.append_message("s2", "user", log)
    out = call(store, query="kaboom")
    [hit] = out["results"]
    assert ">>>kaboom<<<" in hit["snippet"] and len(hit["snippet"]) < 2_000


def test_the_archive_directory_is_private(tmp_path: Path) -> None:
    import stat

    store = SessionStore(tmp_path / "home" / "hermes-memory" / "sessions.db")
    store.close()
    for part in ("home", "home/hermes-memory"):
        assert stat.S_IMODE((tmp_path / part).stat().st_mode) == 0o700, part
