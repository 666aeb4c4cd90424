"""PostgreSQL indexes the same bounded text of a message as the SQLite archive."""

from __future__ import annotations

from hermes_memory_postgres._text import cjk_tsvector, words_document
from hermes_memory_sessions.storage import MESSAGE_INDEX_PREFIX


def test_a_long_message_is_indexed_up_to_the_prefix() -> None:
    head = "earlybird " + "x" * (MESSAGE_INDEX_PREFIX - 10)
    tokens = words_document("user", f"{head} latecomer", None, None)
    assert "earlybird" in tokens and "latecomer" not in tokens
    calls = words_document("assistant", "ok", None, f"{head} latecomer")
    assert "earlybird" in calls and "latecomer" not in calls


def test_cjk_past_the_prefix_is_not_indexed() -> None:
    head = "部署" + "x" * MESSAGE_INDEX_PREFIX
    vector = cjk_tsvector("user", f"{head} 周五", None) or ""
    assert "部署" in vector and "周五" not in vector
