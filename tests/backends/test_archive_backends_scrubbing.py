"""Both archives mask credentials on their own write API (``scrub_secrets=True``, the
default): message text, tool calls and titles, as read back and as searched;
``scrub_secrets=False`` and the imports keep text as given. File- and server-level checks
are in tests/sessions/test_archive_scrubbing.py and tests/postgres/test_pg_archive_scrubbing.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_memory_core import REDACTED
from hermes_memory_sessions.tool import session_search

# Built from pieces so that no credential-shaped literal sits in the repository.
OPENAI_TAIL = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
OPENAI_KEY = "sk-proj-" + OPENAI_TAIL
PG_PASSWORD = "Zq7" + "vR2mK9wLx"
PROSE_PASSWORD = "Tr0ub4" + "dor8horse"


def _found(archive: Any, query: str) -> int:
    return int(json.loads(session_search({"query": query}, store=archive))["count"])


def _open(backend: str, request: pytest.FixtureRequest, tmp_path: Path, owner: str, **kw: Any):
    if backend == "sqlite":
        from hermes_memory_sessions.storage import SessionStore

        return SessionStore(tmp_path / "other.db", **kw)
    from hermes_memory_postgres import PostgresSessionArchive

    return PostgresSessionArchive(request.getfixturevalue("pg_dsn"), owner=owner + "-o", **kw)


def test_recording_api_masks_credentials(archive: Any) -> None:
    assert archive.scrub_secrets is True
    archive.create_session("s1", title=f"rotate {OPENAI_KEY}")
    archive.append_message("s1", "user", f"deploy with OPENAI_API_KEY={OPENAI_KEY} please")
    archive.append_message("s1", "user", f"then run PGPASSWORD={PG_PASSWORD} psql -h db")
    archive.append_message("s1", "user", f"my password is {PROSE_PASSWORD} for the deploy box")
    arguments = json.dumps({"password": PROSE_PASSWORD, "host": "db.internal"})
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "login", "arguments": arguments}}
    ]
    archive.append_message("s1", "assistant", None, tool_calls=calls, timestamp=1000.5)
    # tool_calls given as JSON text: the arguments nested in it are seen decoded
    archive.append_message("s1", "assistant", "", tool_calls=json.dumps(calls), timestamp=1001.0)
    archive.append_messages(
        "s1",
        [
            {
                "role": "tool",
                "content": f"logged in; token={OPENAI_KEY}",
                "tool_name": "login",
                "tool_call_id": "c1",
                "timestamp": 1002.0,
            },
            {"role": "assistant", "content": "done", "reasoning": f"the key {OPENAI_KEY} worked"},
        ],
    )
    rows = archive.get_messages("s1")
    assert [r["content"] for r in rows[:3]] == [
        f"deploy with OPENAI_API_KEY={REDACTED} please",
        f"then run PGPASSWORD={REDACTED} psql -h db",
        f"my password is {REDACTED} for the deploy box",
    ]
    for row in rows[3:5]:
        [call] = json.loads(row["tool_calls"])
        assert call["id"] == "c1" and call["function"]["name"] == "login"
        args = json.loads(call["function"]["arguments"])
        assert args == {"password": REDACTED, "host": "db.internal"}
    tool = rows[5]
    assert tool["content"] == f"logged in; token={REDACTED}"
    assert (tool["role"], tool["tool_name"], tool["tool_call_id"], tool["timestamp"]) == (
        "tool",
        "login",
        "c1",
        1002.0,
    )
    assert rows[6]["reasoning"] == f"the key {REDACTED} worked"
    assert archive.get_session("s1")["tool_call_count"] == 2
    assert archive.get_session("s1")["title"] == f"rotate {REDACTED}"
    archive.create_session("s2")
    assert archive.set_title("s2", f"db PGPASSWORD={PG_PASSWORD}") == f"db PGPASSWORD={REDACTED}"
    # masked before the uniqueness check: the stored title is what is compared
    with pytest.raises(ValueError, match="already in use"):
        archive.set_title("s2", f"rotate  {OPENAI_KEY}\u200b")
    for secret in (OPENAI_TAIL, PG_PASSWORD, PROSE_PASSWORD):
        assert archive.find_hits(secret) is None, secret
        assert _found(archive, secret) == 0, secret
    assert archive.find_hits("deploy") is not None and _found(archive, "psql") == 1


def test_scrub_secrets_false_keeps_text_verbatim(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, owner: str
) -> None:
    plain = _open(backend, request, tmp_path, owner, scrub_secrets=False)
    try:
        assert plain.scrub_secrets is False
        plain.create_session("s1", title=f"rotate {OPENAI_KEY}")
        plain.append_message("s1", "user", f"my password is {PROSE_PASSWORD} ok")
        args = json.dumps({"api_key": OPENAI_KEY})
        calls = [{"id": "c", "function": {"name": "x", "arguments": args}}]
        plain.append_message("s1", "assistant", None, tool_calls=calls)
        plain.create_session("s2")
        assert plain.set_title("s2", f"PGPASSWORD={PG_PASSWORD}") == f"PGPASSWORD={PG_PASSWORD}"
        rows = plain.get_messages("s1")
        assert rows[0]["content"] == f"my password is {PROSE_PASSWORD} ok"
        assert json.loads(rows[1]["tool_calls"]) == calls
        assert plain.get_session("s1")["title"] == f"rotate {OPENAI_KEY}"
        assert _found(plain, PROSE_PASSWORD) == 1  # the query form finds what is stored
    finally:
        plain.close()


def test_imports_keep_text_as_given(archive: Any) -> None:
    text = f"OPENAI_API_KEY={OPENAI_KEY}"
    archive.import_session(
        {"id": "imp", "title": f"t {OPENAI_KEY}"},
        [{"role": "user", "content": text, "timestamp": 10.0}],
        import_source="x",
        source_last_id=1,
    )
    archive.import_more(
        "imp",
        [{"role": "assistant", "content": f"PGPASSWORD={PG_PASSWORD}", "timestamp": 11.0}],
        import_source="x",
        source_last_id=2,
    )
    contents = [m["content"] for m in archive.get_messages("imp")]
    assert contents == [text, f"PGPASSWORD={PG_PASSWORD}"]
    assert archive.get_session("imp")["title"] == f"t {OPENAI_KEY}"
