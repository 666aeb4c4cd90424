"""`SessionStore` masks credentials on its own write API (``scrub_secrets=True``, the default),
checked on the file itself (raw sqlite3, the bytes of the file and its sidecars); the
``sessions`` provider relies on the `MemoryManager`'s scrubbing (no second pass) and its
PostgreSQL archive is opened the same way; a JSONL round trip and ``sessions migrate`` keep
text exactly. What both backends share (masked fields, ``scrub_secrets=False``, imports) is
in tests/backends/test_archive_backends_scrubbing.py."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

from hermes_memory_core import REDACTED
from hermes_memory_core._manager import MemoryManager
from hermes_memory_postgres import copy_archive, session_archive
from hermes_memory_sessions.importers._jsonl import export_jsonl, import_jsonl
from hermes_memory_sessions.provider import SessionArchiveProvider
from hermes_memory_sessions.storage import SessionStore
from hermes_memory_sessions.storage._message_rows import scrub_messages

# Built from pieces so that no credential-shaped literal sits in the repository.
OPENAI_TAIL = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
OPENAI_KEY = "sk-proj-" + OPENAI_TAIL
PG_PASSWORD = "Zq7" + "vR2mK9wLx"
PROSE_PASSWORD = "Tr0ub4" + "dor8horse"
SECRETS = (OPENAI_TAIL, PG_PASSWORD, PROSE_PASSWORD)


def _files_bytes(path: Path) -> bytes:
    """The archive file and its -wal/-shm sidecars, as bytes."""
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*") if p.is_file())


def _raw(path: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _record(store: SessionStore) -> None:
    store.create_session("s1", title=f"rotate {OPENAI_KEY}")
    store.append_message("s1", "user", f"deploy with OPENAI_API_KEY={OPENAI_KEY} please")
    store.append_message("s1", "user", f"my password is {PROSE_PASSWORD} for the deploy box")
    args = json.dumps({"cmd": f"PGPASSWORD={PG_PASSWORD} psql"})
    calls = [{"id": "c1", "function": {"name": "terminal", "arguments": args}}]
    store.append_message("s1", "assistant", None, tool_calls=calls)


def test_no_secret_reaches_the_file(tmp_path: Path) -> None:
    path = tmp_path / "archive.db"
    store = SessionStore(path)
    _record(store)
    store.close()
    rows = _raw(path, "SELECT content, tool_calls FROM messages ORDER BY id")
    assert rows[0][0] == f"deploy with OPENAI_API_KEY={REDACTED} please"
    assert rows[1][0] == f"my password is {REDACTED} for the deploy box"
    args = json.loads(json.loads(rows[2][1])[0]["function"]["arguments"])
    assert args == {"cmd": f"PGPASSWORD={REDACTED} psql"}
    assert _raw(path, "SELECT title FROM sessions") == [(f"rotate {REDACTED}",)]
    data = _files_bytes(path)
    for secret in SECRETS:
        assert secret.encode() not in data, secret


def test_scrub_secrets_false_writes_the_text_to_the_file(tmp_path: Path) -> None:
    path = tmp_path / "archive.db"
    store = SessionStore(path, scrub_secrets=False)
    _record(store)
    store.close()
    rows = _raw(path, "SELECT content FROM messages ORDER BY id")
    assert rows[1] == (f"my password is {PROSE_PASSWORD} for the deploy box",)
    assert _raw(path, "SELECT title FROM sessions") == [(f"rotate {OPENAI_KEY}",)]


def test_a_secret_recognised_in_one_message_is_masked_bare_in_another(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "a.db") as store:
        store.create_session("s1")
        store.append_messages(
            "s1",
            [
                {"role": "user", "content": f"export API_KEY={PG_PASSWORD}"},
                {"role": "assistant", "content": f"set; {PG_PASSWORD} is now in the env"},
            ],
        )
        assert [m["content"] for m in store.get_messages("s1")] == [
            f"export API_KEY={REDACTED}",
            f"set; {REDACTED} is now in the env",
        ]


def test_text_without_secrets_is_stored_exactly(tmp_path: Path) -> None:
    calls_text = '[{"id":"c","function":{"name":"df","arguments":"{}"}}]'  # compact, kept as is
    messages = [
        {"role": "user", "content": "password: required, token_count = 5"},
        {"role": "assistant", "content": None, "tool_calls": calls_text},
    ]
    assert all(a is b for a, b in zip(scrub_messages(messages), messages, strict=True))
    with SessionStore(tmp_path / "a.db") as store:
        store.create_session("s1")
        store.append_messages("s1", messages)
        rows = store.get_messages("s1")
        assert rows[0]["content"] == "password: required, token_count = 5"
        assert rows[1]["tool_calls"] == calls_text


def _turn() -> tuple[str, list[dict[str, Any]]]:
    user = f"use OPENAI_API_KEY={OPENAI_KEY} for the deploy"
    arguments = json.dumps({"cmd": f"PGPASSWORD={PG_PASSWORD} psql"})
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "terminal", "arguments": arguments},
    }
    messages = [
        {"role": "user", "content": user},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "connected"},
        {"role": "assistant", "content": f"done; my password is {PROSE_PASSWORD} now"},
    ]
    return user, messages


def _record_through_manager(home: Path, **options: Any) -> list[dict[str, Any]]:
    manager = MemoryManager(hermes_home=home, **options)
    provider = SessionArchiveProvider(hermes_home=home)
    try:
        manager.add_provider(provider, local=True)
        manager.initialize_all("s1", platform="cli", agent_context="primary")
        user, messages = _turn()
        manager.sync_all(user, messages[-1]["content"], messages=messages)
        assert provider.store.scrub_secrets is False  # the manager decides for this path
    finally:
        manager.shutdown_all()
    with SessionStore(home / "hermes-memory" / "sessions.db") as store:
        return store.get_messages("s1")


def test_provider_records_verbatim_when_the_manager_does_not_scrub(tmp_path: Path) -> None:
    rows = _record_through_manager(tmp_path, scrub_secrets=False)
    user, messages = _turn()
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "assistant"]
    assert rows[0]["content"] == user
    assert rows[3]["content"] == messages[3]["content"]
    args = json.loads(json.loads(rows[1]["tool_calls"])[0]["function"]["arguments"])
    assert args == {"cmd": f"PGPASSWORD={PG_PASSWORD} psql"}


def test_provider_records_masked_by_the_default_manager(tmp_path: Path) -> None:
    rows = _record_through_manager(tmp_path)
    assert rows[0]["content"] == f"use OPENAI_API_KEY={REDACTED} for the deploy"
    assert rows[3]["content"] == f"done; my password is {REDACTED} now"
    args = json.loads(json.loads(rows[1]["tool_calls"])[0]["function"]["arguments"])
    assert args == {"cmd": f"PGPASSWORD={REDACTED} psql"}
    data = _files_bytes(tmp_path / "hermes-memory" / "sessions.db")
    for secret in SECRETS:
        assert secret.encode() not in data, secret


def test_postgres_provider_path_opens_its_archive_without_scrubbing(tmp_path: Path) -> None:
    """The keyword reaches `PostgresSessionArchive` through the factory (nothing connects)."""
    from hermes_memory_postgres import _factory as factory

    dsn = "postgresql://nobody:x@127.0.0.1:1/none"
    config = {"sessions": {"backend": "postgres"}, "postgres": {"dsn": dsn, "owner": "o"}}
    try:
        assert session_archive(config, tmp_path).scrub_secrets is True
        assert session_archive(config, tmp_path, scrub_secrets=False).scrub_secrets is False
        provider = SessionArchiveProvider(hermes_home=tmp_path, config=config)
        assert provider.store.scrub_secrets is False
    finally:
        pool = factory._POOLS.pop(dsn, None)
        if pool is not None:
            pool.close()


def test_jsonl_export_import_round_trip_is_unchanged(tmp_path: Path) -> None:
    """An export holds what the archive held; importing it into a scrubbing archive keeps it."""
    src = SessionStore(tmp_path / "src.db", scrub_secrets=False)
    _record(src)
    before = (src.get_session("s1"), src.get_messages("s1"))
    out = io.BytesIO()
    assert export_jsonl(src, out) == 1
    src.close()
    dst = SessionStore(tmp_path / "dst.db")
    assert dst.scrub_secrets is True
    out.seek(0)
    assert import_jsonl(out, dst).sessions_imported == 1
    assert dst.get_messages("s1") == before[1]
    assert dst.get_session("s1")["title"] == f"rotate {OPENAI_KEY}"
    again = io.BytesIO()
    export_jsonl(dst, again)
    assert again.getvalue() == out.getvalue()
    dst.close()


def test_migration_between_archives_copies_exactly(tmp_path: Path) -> None:
    """``sessions migrate`` copies with ``import_session(keep_ids=True)``: a default
    (scrubbing) target holds exactly what the source held."""
    src = SessionStore(tmp_path / "src.db", scrub_secrets=False)
    _record(src)
    target = SessionStore(tmp_path / "target.db")
    report = copy_archive(src, target)
    assert report.sessions_copied == 1 and not report.errors
    assert target.get_messages("s1") == src.get_messages("s1")
    assert target.get_session("s1")["title"] == f"rotate {OPENAI_KEY}"
    target.close()
    src.close()
