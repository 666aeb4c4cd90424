"""RetainDBProvider against the loopback fake: recall overlay, writes, tools, failures."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest
from retaindb_fake import KEY, FakeRetainDB

from hermes_memory_core import MemoryManager
from hermes_memory_core.health import read_provider_status
from hermes_memory_retaindb import RetainDBProvider
from hermes_memory_retaindb._journal import journal_files
from hermes_memory_testing import RemoteFailures, Seen


def wait_for(condition, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def test_a_whole_session_through_the_manager(hermes_home: Path, fake: FakeRetainDB) -> None:
    fake.add("alice", "Prefers 中文 answers", "preference", "p")
    fake.add("alice", "Deploys with docker compose on 京都 servers", "factual", "p")
    fake.add("bob", "Bob also deploys with docker", "factual", "p")  # another user: never shown
    config = {
        "retaindb": {
            "api_key": KEY,
            "base_url": fake.url,
            "project": "p",
            "user_id": "alice",
            "recall_timeout": 2.0,
        }
    }
    manager = MemoryManager(hermes_home=hermes_home)
    assert manager.add_provider(
        RetainDBProvider(hermes_home=hermes_home, config=config, environ={})
    )
    manager.initialize_all("s1", platform="cli")
    assert wait_for(lambda: fake.calls("/v1/memory/profile/alice"))  # profile read at start
    recall = manager.prefetch_all("how do we deploy with docker? 京都")
    assert "Prefers 中文 answers" in recall and "docker compose on 京都" in recall
    assert "Bob" not in recall
    manager.sync_all("I moved to Porto last spring", "Noted.")
    manager.on_memory_write("add", "user", "Likes tea 🍵")
    assert manager.flush_pending(5)
    manager.on_session_end([])
    [ingest] = fake.calls("/v1/memory/ingest/session")
    assert ingest.body["project"] == "p" and ingest.body["user_id"] == "alice"
    assert ingest.body["session_id"] == "s1"
    assert [m["role"] for m in ingest.body["messages"]] == ["user", "assistant"]
    assert ingest.headers["Authorization"] == f"Bearer {KEY}"
    assert ingest.headers["X-API-Key"] == KEY
    [mirrored] = [c.body for c in fake.calls("/v1/memory") if c.path == "/v1/memory"]
    assert mirrored["content"] == "Likes tea 🍵" and mirrored["memory_type"] == "preference"
    found = json.loads(manager.handle_tool_call("retaindb_search", {"query": "Porto"}))
    assert [r["content"] for r in found["results"]] == ["I moved to Porto last spring"]
    assert journal_files(hermes_home, "retaindb") == []  # everything sent, nothing left
    manager.shutdown_all()


def test_recall_leaves_out_what_the_curated_tier_shows(
    make_provider, fake: FakeRetainDB, hermes_home: Path
) -> None:
    fake.add("alice", "Keeps bees in the garden", "preference", "p")
    fake.add("alice", "ＫＥＥＰＳ  bees in the garden。", "factual", "p")  # full-width spelling
    fake.add("alice", "Garden faces south", "factual", "p")
    provider = make_provider(init=False)
    provider.initialize(
        "s1", hermes_home=str(hermes_home), curated_entries=("- keeps bees in the garden",)
    )
    recall = provider.prefetch("tell me about the garden bees")
    assert "Garden faces south" in recall
    assert "bees" not in recall.casefold()
    status = provider.recall_status()
    assert status is not None and status.count == 1


def test_tools_remember_search_forget_profile_context(make_provider, fake: FakeRetainDB) -> None:
    provider = make_provider()
    stored = json.loads(
        provider.handle_tool_call(
            "retaindb_remember", {"content": "会议改到周五", "memory_type": "event"}
        )
    )
    assert stored["stored"] is True and stored["id"]
    found = json.loads(provider.handle_tool_call("retaindb_search", {"query": "周五", "top_k": 99}))
    assert found["results"][0]["id"] == stored["id"]
    context = json.loads(provider.handle_tool_call("retaindb_context", {"query": "会议"}))
    assert context["memories"][0]["content"] == "会议改到周五"
    pref = json.loads(
        provider.handle_tool_call(
            "retaindb_remember", {"content": "Likes green tea", "memory_type": "preference"}
        )
    )
    profile = json.loads(provider.handle_tool_call("retaindb_profile", {}))
    assert [m["id"] for m in profile["memories"]] == [pref["id"]]
    gone = json.loads(provider.handle_tool_call("retaindb_forget", {"memory_id": stored["id"]}))
    assert gone == {"deleted": stored["id"]}
    again = json.loads(provider.handle_tool_call("retaindb_forget", {"memory_id": stored["id"]}))
    assert "404" in again["error"] and "not found" in again["error"]
    assert provider._guard is not None and not provider._guard.is_open  # a 404 is an answer


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"memory_id": ".."}, "not a valid identifier"),
        ({"memory_id": "."}, "not a valid identifier"),
        ({"memory_id": "mem_1\u200b"}, "invisible"),
        ({"memory_id": "mem\n1"}, "control"),
        ({"memory_id": 7}, "non-empty string"),
    ],
)
def test_forget_refuses_ids_that_would_change_the_path(
    make_provider, fake: FakeRetainDB, args: dict, message: str
) -> None:
    provider = make_provider()
    answer = json.loads(provider.handle_tool_call("retaindb_forget", args))
    assert message in answer["error"]
    assert deletes(fake) == []  # refused before any request


def test_a_slash_in_an_id_stays_inside_one_segment(make_provider, fake: FakeRetainDB) -> None:
    provider = make_provider()
    provider.handle_tool_call("retaindb_forget", {"memory_id": "../../v1/admin"})
    assert [c.path for c in deletes(fake)] == ["/v1/memory/..%2F..%2Fv1%2Fadmin"]


def deletes(fake: FakeRetainDB) -> list[Seen]:
    # Only the DELETEs: the session-start profile read (a GET under the same prefix) runs in
    # the background and may land at any moment.
    return [c for c in fake.calls("/v1/memory/") if c.method == "DELETE"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"content": "x", "memory_type": "secret"}, "must be one of"),
        ({"content": "x", "importance": "high"}, "importance"),
        ({"content": "   "}, "non-empty string"),
    ],
)
def test_remember_bad_arguments(
    make_provider, fake: FakeRetainDB, args: dict, message: str
) -> None:
    answer = json.loads(make_provider().handle_tool_call("retaindb_remember", args))
    assert message in answer["error"]
    assert not [r for r in fake.calls("/v1/memory") if r.method == "POST"]


def test_the_key_never_reaches_logs_or_the_health_record(
    make_provider, fake: FakeRetainDB, hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake.key = "another-key"  # ours is refused; the fake echoes nothing, so make it echo
    provider = make_provider()
    provider.prefetch("hello there")
    provider.handle_tool_call("retaindb_profile", {})
    assert KEY not in caplog.text
    assert KEY not in (hermes_home / "memory_providers" / "retaindb.status.json").read_text()


def test_a_hanging_server_costs_a_turn_at_most_its_timeout(
    make_provider, fake: FakeRetainDB, hermes_home: Path
) -> None:
    provider = make_provider(recall_timeout=0.5, timeout=0.5)
    assert provider._recall is not None
    assert wait_for(lambda: fake.calls("/v1/memory/profile") and not provider._recall.pending)
    fake.drop.set()
    started = time.monotonic()
    assert provider.prefetch("what about docker") == ""
    assert time.monotonic() - started < 4.0  # generous: the bound is 0.5 s per request
    record = read_provider_status(hermes_home, "retaindb")
    assert record is not None and record["last_error_kind"] == "timeout"


def test_writes_wait_while_down_and_go_in_order_when_back(
    make_provider, fake: FakeRetainDB, hermes_home: Path
) -> None:
    provider = make_provider(breaker_cooldown=0)
    fake.status = 503
    for n in range(3):
        provider.sync_turn(f"turn {n} 第{n}轮", "ok")
    assert provider._pending is not None
    assert wait_for(lambda: fake.calls("/v1/memory/ingest"))
    assert len(journal_files(hermes_home, "retaindb")) == 3  # each one on disk
    fake.status = 0
    provider.on_session_end([])
    sent = [
        r.body["messages"][0]["content"]
        for r in fake.calls("/v1/memory/ingest")
        if r.body and fake.status == 0
    ]
    assert sent[-3:] == ["turn 0 第0轮", "turn 1 第1轮", "turn 2 第2轮"]
    assert journal_files(hermes_home, "retaindb") == []


def test_unsent_writes_are_spooled_at_shutdown_and_replayed(
    hermes_home: Path, fake: FakeRetainDB, make_provider
) -> None:
    first = make_provider(shutdown_timeout=0.5)
    fake.status = 503
    first.sync_turn("记住：周五发布", "好的")
    first.on_memory_write("add", "memory", "Release train is Friday")
    first.shutdown()
    files = journal_files(hermes_home, "retaindb")
    assert [f.suffix for f in files] == [".json"]  # one spool file, no journal left behind
    assert "周五发布" in files[0].read_text(encoding="utf-8")
    fake.status = 0
    second = make_provider(session_id="s2")
    second.on_session_end([])
    assert "记住：周五发布" in fake.contents() and "Release train is Friday" in fake.contents()
    assert journal_files(hermes_home, "retaindb") == []


def test_a_subagent_never_writes(make_provider, fake: FakeRetainDB, hermes_home: Path) -> None:
    provider = make_provider(init=False)
    provider.initialize("s1", hermes_home=str(hermes_home), agent_context="subagent")
    provider.sync_turn("secret plan", "ok")
    provider.on_memory_write("add", "user", "x")
    answer = json.loads(provider.handle_tool_call("retaindb_remember", {"content": "y"}))
    assert "read-only" in answer["error"]
    kept = fake.add("alice", "Deploys go out on Fridays")
    answer = json.loads(provider.handle_tool_call("retaindb_forget", {"memory_id": kept}))
    assert "read-only" in answer["error"]  # deleting is writing too
    provider.on_session_end([])
    assert fake.calls("/v1/memory/ingest") == [] and fake.contents() == [
        "Deploys go out on Fridays"
    ]
    assert deletes(fake) == []


def test_remember_while_down_is_queued_not_lost(
    make_provider, fake: FakeRetainDB, hermes_home: Path
) -> None:
    provider = make_provider()
    fake.status = 502
    answer = json.loads(provider.handle_tool_call("retaindb_remember", {"content": "Uses vim"}))
    assert answer["queued"] is True
    fake.status = 0
    provider.on_session_end([])
    assert "Uses vim" in fake.contents()


@pytest.mark.parametrize(
    ("section", "env", "reason"),
    [
        ({}, {}, "RETAINDB_API_KEY"),
        ({"api_key": "k", "base_url": "file:///etc/passwd"}, {}, "http(s) URL"),
        (
            {"api_key": "k", "timeout": "soon"},
            {},
            "configuration error: retaindb.timeout must be a number, got 'soon'",
        ),
        ("not a mapping", {}, "configuration error: retaindb must be a mapping"),
    ],
)
def test_bad_settings_are_explained(
    hermes_home: Path, section: object, env: dict, reason: str
) -> None:
    provider = RetainDBProvider(hermes_home=hermes_home, config={"retaindb": section}, environ=env)
    assert not provider.is_available()
    assert reason in provider.unavailable_reason()
    provider.initialize("s1", hermes_home=str(hermes_home))
    answer = json.loads(provider.handle_tool_call("retaindb_search", {"query": "x"}))
    assert reason in answer["error"]
    provider.shutdown()


def test_environment_settings(hermes_home: Path, fake: FakeRetainDB) -> None:
    env = {"RETAINDB_API_KEY": KEY, "RETAINDB_BASE_URL": fake.url, "RETAINDB_PROJECT": "proj-env"}
    provider = RetainDBProvider(hermes_home=hermes_home, config={}, environ=env)
    assert provider.is_available()
    provider.initialize("s1", hermes_home=str(hermes_home), user_id="u1")
    provider.handle_tool_call("retaindb_search", {"query": "x"})
    body = fake.calls("/v1/memory/search")[-1].body
    assert body["project"] == "proj-env" and body["user_id"] == "u1"
    schema = {f["key"]: f for f in provider.get_config_schema()}
    assert (
        schema["api_key"]["secret"] is True and schema["api_key"]["env_var"] == "RETAINDB_API_KEY"
    )
    provider.shutdown()


class TestRetainDBFailOpen(RemoteFailures):
    """The kit's fail-open suite: refused port, bad credentials, a silent server."""

    read_tool = ("retaindb_search", {"query": "x"})
    auth_hint = "RETAINDB_API_KEY"
