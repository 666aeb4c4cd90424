"""SessionArchiveProvider: lazy open, recording turns, session lifecycle, tool, entry point."""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path

from hermes_memory_core import MemoryProvider
from hermes_memory_sessions.provider import SessionArchiveProvider
from hermes_memory_sessions.storage._store import SessionStore


def turn_messages(n: int) -> list[dict]:
    return [
        {"role": "user", "content": f"please check the disk usage {n}"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call{n}",
                    "type": "function",
                    "function": {"name": "terminal", "arguments": '{"cmd": "df -h"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": f"call{n}", "content": f"/dev/sda1 93% used {n}"},
        {"role": "assistant", "content": [{"type": "text", "text": f"Disk is 93% full {n}."}]},
    ]


def test_entry_point_and_plugin_module() -> None:
    eps = {ep.name: ep for ep in entry_points(group="hermes_memory")}
    assert eps["sessions"].value == "hermes_memory_sessions.plugin"
    module = eps["sessions"].load()
    registered = []
    module.register_memory_providers(lambda cls, name: registered.append((cls, name)))
    assert registered == [(SessionArchiveProvider, "sessions")]


def test_lazy_open_and_config_path(tmp_path: Path) -> None:
    home = tmp_path / "home"
    p = SessionArchiveProvider(hermes_home=home, config={"sessions": {"db_path": "db/arch.db"}})
    assert isinstance(p, MemoryProvider) and p.name == "sessions"
    assert p.is_available()
    p.initialize("s1", hermes_home=str(home), platform="cli")
    assert not (home / "db" / "arch.db").exists()
    assert p.db_path == home / "db" / "arch.db"
    assert [s["name"] for s in p.get_tool_schemas()] == ["session_search"]
    default = SessionArchiveProvider(hermes_home=home)
    assert default.db_path == home / "hermes-memory" / "sessions.db"


def test_sync_turn_records_tool_messages_without_duplicates(tmp_path: Path) -> None:
    p = SessionArchiveProvider(hermes_home=tmp_path)
    p.initialize("s1", hermes_home=str(tmp_path), platform="telegram", model="gpt-x")
    p.sync_turn("please check the disk usage 1", "Disk is 93% full 1.", messages=turn_messages(1))
    p.sync_turn("please check the disk usage 1", "Disk is 93% full 1.", messages=turn_messages(1))
    # a host that passes the whole transcript each turn
    p.sync_turn("u2", "a2", messages=turn_messages(1) + turn_messages(2))
    p.sync_turn("plain", "reply")
    p.shutdown()
    with SessionStore(tmp_path / "hermes-memory" / "sessions.db") as store:
        rows = store.get_messages("s1")
        assert [r["role"] for r in rows] == ["user", "assistant", "tool", "assistant"] * 2 + [
            "user",
            "assistant",
        ]
        assert rows[2]["tool_name"] == "terminal" and rows[2]["tool_call_id"] == "call1"
        assert rows[3]["content"] == "Disk is 93% full 1."
        assert json.loads(rows[1]["tool_calls"])[0]["id"] == "call1"
        sess = store.get_session("s1")
        assert sess["source"] == "telegram" and sess["model"] == "gpt-x"
    # a new process continuing the same session does not re-append the transcript
    p2 = SessionArchiveProvider(hermes_home=tmp_path)
    p2.initialize("s1", hermes_home=str(tmp_path))
    plain = [{"role": "user", "content": "plain"}, {"role": "assistant", "content": "reply"}]
    history = [{"role": "system", "content": "sys"}, *turn_messages(1), *turn_messages(2), *plain]
    p2.sync_turn("u", "a", messages=[*history, *turn_messages(3)])
    p2.sync_turn("u", "a", messages=turn_messages(3))  # re-delivered turn
    p2.shutdown()
    with SessionStore(tmp_path / "hermes-memory" / "sessions.db") as store:
        assert len(store.get_messages("s1")) == 14


def test_session_end_switch_and_tool(tmp_path: Path) -> None:
    p = SessionArchiveProvider(hermes_home=tmp_path)
    p.initialize("old", hermes_home=str(tmp_path))
    p.sync_turn("we picked postgres for the billing service", "noted: postgres")
    p.on_session_switch("cont", parent_session_id="old")  # e.g. compression
    p.sync_turn("continuing", "ok")
    p.on_session_switch("fresh", reset=True)
    p.sync_turn("new topic entirely", "sure")
    p.on_session_end([])
    store = p.store
    assert store.get_session("old")["end_reason"] == "compression"  # continued by "cont"
    assert store.get_session("cont")["parent_session_id"] == "old"
    assert store.get_session("cont")["end_reason"] == "session_reset"
    assert store.get_session("fresh")["parent_session_id"] is None
    assert store.get_session("fresh")["end_reason"] == "session_end"
    out = json.loads(p.handle_tool_call("session_search", {"query": "postgres billing"}))
    assert out["results"][0]["session_id"] == "old"
    # from inside the old lineage, it is the caller's own context and is skipped
    p.on_session_switch("cont2", parent_session_id="cont")
    out = json.loads(p.handle_tool_call("session_search", {"query": "postgres billing"}))
    assert out["count"] == 0
    assert json.loads(p.handle_tool_call("nope", {}))["success"] is False
    p.shutdown()


def test_non_primary_context_writes_nothing(tmp_path: Path) -> None:
    p = SessionArchiveProvider(hermes_home=tmp_path)
    p.initialize("sub", hermes_home=str(tmp_path), agent_context="subagent")
    p.sync_turn("hello", "world")
    p.on_session_end([])
    assert not (tmp_path / "hermes-memory" / "sessions.db").exists()


def test_injected_store_is_not_closed(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "x.db")
    p = SessionArchiveProvider(store)
    p.initialize("s")
    p.sync_turn("hi", "there")
    p.shutdown()
    assert len(store.get_messages("s")) == 2
    store.close()


def test_fts5_probe_runs_once_per_process(tmp_path: Path) -> None:
    """is_available() is called on every turn by some hosts: the SQLite probe is cached."""
    from hermes_memory_sessions import provider as provider_module

    provider_module._sqlite_has_fts5.cache_clear()
    providers = [SessionArchiveProvider(hermes_home=tmp_path) for _ in range(3)]
    assert all(p.is_available() and p.unavailable_reason() == "" for p in providers)
    info = provider_module._sqlite_has_fts5.cache_info()
    assert info.misses == 1 and info.hits == 5
