"""`PostgresSessionArchive` keeps no credential its write API was given: not in the rows (read
with plain SQL) nor in the local spool of turns written while the server is away; the bulk
import keeps text as given. What both backends share is in
tests/backends/test_archive_backends_scrubbing.py."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg

from hermes_memory_postgres import PostgresSessionArchive

# Built from pieces so that no credential-shaped literal sits in the repository.
OPENAI_TAIL = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
OPENAI_KEY = "sk-proj-" + OPENAI_TAIL
PG_PASSWORD = "Zq7" + "vR2mK9wLx"


def test_no_secret_reaches_the_rows(pg_dsn: str, owner: str) -> None:
    archive = PostgresSessionArchive(pg_dsn, owner=owner)
    archive.create_session("s1", title=f"rotate {OPENAI_KEY}")
    archive.append_message("s1", "user", f"PGPASSWORD={PG_PASSWORD} psql")
    args = json.dumps({"api_key": OPENAI_KEY})
    archive.append_message("s1", "assistant", None, tool_calls=[{"id": "c", "arguments": args}])
    text = f"OPENAI_API_KEY={OPENAI_KEY}"
    archive.bulk_import([({"id": "bulk"}, [{"role": "user", "content": text, "timestamp": 1.0}])])
    assert archive.get_messages("bulk")[0]["content"] == text  # imports keep text as given
    archive.close()
    with psycopg.connect(pg_dsn) as conn:
        rows = conn.execute(
            "SELECT content, tool_calls, words::text FROM hm_messages"
            " WHERE owner = %s AND session_id = 's1'",
            (owner,),
        ).fetchall()
        titles = conn.execute(
            "SELECT title FROM hm_sessions WHERE owner = %s AND id = 's1'", (owner,)
        ).fetchall()
    stored = json.dumps([list(r) for r in rows] + [list(t) for t in titles])
    assert "[redacted]" in stored
    for secret in (OPENAI_TAIL, PG_PASSWORD, PG_PASSWORD.lower(), OPENAI_TAIL.lower()):
        assert secret not in stored, secret


def test_the_spool_holds_masked_turns(tmp_path: Path) -> None:
    """Turns written while the server is unreachable are masked before they are spooled
    (no server needed: the archive points at a closed port)."""
    spool = tmp_path / "spool"
    down = PostgresSessionArchive(
        "postgresql://nobody:x@127.0.0.1:1/none",
        owner="scrub-spool",
        spool_dir=spool,
        write_budget_s=0.2,
        read_budget_s=0.2,
    )
    down.create_session("s1", title=f"rotate {OPENAI_KEY}")
    assert down.append_message("s1", "user", f"PGPASSWORD={PG_PASSWORD} psql") == 0
    assert down.spool_state()["pending"] == 2
    data = b"".join(p.read_bytes() for p in spool.rglob("*") if p.is_file())
    assert b"[redacted]" in data
    assert OPENAI_TAIL.encode() not in data and PG_PASSWORD.encode() not in data
    down.close()


def test_turns_of_a_session_started_while_the_server_is_down_are_spooled(
    tmp_path: Path,
) -> None:
    """The sessions tier checks whether a session exists before its first turn: with the
    server down that read failed and the turn was lost; now the session and the turn are
    spooled (no server needed: a closed port)."""
    from hermes_memory_sessions.provider import SessionArchiveProvider

    down = PostgresSessionArchive(
        "postgresql://nobody:x@127.0.0.1:1/none",
        owner="spool-new-session",
        spool_dir=tmp_path / "spool",
        write_budget_s=0.2,
        read_budget_s=0.2,
    )
    provider = SessionArchiveProvider(store=down)
    provider.initialize("never-seen")
    provider.sync_turn("hello", "hi there", session_id="never-seen")
    assert down.spool_state()["pending"] >= 2  # the session and its turn
    down.close()
