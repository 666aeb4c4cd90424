"""OpenVikingProvider against a loopback OpenViking: sessions, recall, tools, failures."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest
from openviking_fake import KEY, FakeOpenViking

from hermes_memory_core import MemoryManager
from hermes_memory_core.health import read_provider_status
from hermes_memory_openviking import OpenVikingProvider
from hermes_memory_openviking._provider import ov_session_id
from hermes_memory_testing import RemoteFailures

PROFILE = "viking://user/memories/profile.md"


def wait_for(condition, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def test_a_whole_session_through_the_manager(hermes_home: Path, fake: FakeOpenViking) -> None:
    fake.put(PROFILE, "# Profile\n- Prefers 中文 answers\n- Lives in Kyoto")
    fake.put("viking://user/memories/events/a.md", "Deploys with docker compose on 京都 servers")
    config = {
        "openviking": {
            "url": fake.url,
            "api_key": KEY,
            "account": "acme",
            "user": "alice",
            "recall_timeout": 2.0,
        }
    }
    manager = MemoryManager(hermes_home=hermes_home)
    assert manager.add_provider(
        OpenVikingProvider(hermes_home=hermes_home, config=config, environ={})
    )
    manager.initialize_all("s1", platform="cli")
    assert wait_for(lambda: fake.calls("/api/v1/content/read"))  # profile read at start
    [read] = fake.calls("/api/v1/content/read")
    assert read.query["uri"] == PROFILE
    assert read.headers["X-API-Key"] == KEY
    assert read.headers["X-OpenViking-Account"] == "acme"
    assert read.headers["X-OpenViking-User"] == "alice"
    recall = manager.prefetch_all("how do we deploy with docker? 京都")
    assert "Prefers 中文 answers" in recall and "docker compose on 京都" in recall
    manager.sync_all("I moved to Porto last spring", "Noted.")
    manager.sync_all("我喜欢绿茶", "好的")
    manager.on_memory_write("add", "user", "Likes tea 🍵")
    assert manager.flush_pending(5)
    assert fake.commits == []  # nothing is committed before the session ends
    manager.on_session_end([])
    assert [m["content"] for m in fake.sessions["s1"]] == [
        "I moved to Porto last spring",
        "Noted.",
        "我喜欢绿茶",
        "好的",
    ]
    assert fake.commits == ["s1"]
    [mirror] = fake.calls("/api/v1/content/write")
    assert mirror.body["mode"] == "create" and mirror.body["content"] == "Likes tea 🍵"
    assert mirror.body["uri"].startswith("viking://user/memories/hermes/")
    found = json.loads(manager.handle_tool_call("viking_search", {"query": "Porto"}))
    assert [r["abstract"] for r in found["results"]] == ["I moved to Porto last spring"]
    manager.shutdown_all()
    assert fake.commits == ["s1"]  # no second commit of the same session


def test_an_empty_session_is_never_committed(make_provider, fake: FakeOpenViking) -> None:
    provider = make_provider()
    provider.on_memory_write("add", "memory", "Release train is Friday")
    provider.on_session_end([])
    provider.shutdown()
    assert fake.calls("/api/v1/sessions") == [] and fake.commits == []


def test_session_switch_commits_the_old_session(make_provider, fake: FakeOpenViking) -> None:
    provider = make_provider()
    provider.sync_turn("first session turn", "ok")
    provider.on_session_switch("s2")
    provider.sync_turn("second session turn", "ok")
    provider.shutdown()  # commits s2 too (the atexit commit of the reference)
    assert fake.commits == ["s1", "s2"]
    assert fake.sessions["s2"][0]["content"] == "second session turn"


def test_odd_session_ids_map_to_one_safe_path_segment(make_provider, fake: FakeOpenViking) -> None:
    provider = make_provider(session_id="../../admin 会话\u200b")
    provider.sync_turn("hello", "hi")
    provider.on_session_end([])
    ov = ov_session_id("../../admin 会话\u200b")
    assert ov.startswith("hermes-") and fake.commits == [ov]
    assert all(
        r.path.count("/") == 5 or r.path.endswith("/messages/batch")
        for r in fake.calls("/api/v1/sessions")
    )


def test_mirroring_the_same_fact_twice_is_settled_not_retried(
    make_provider, fake: FakeOpenViking, hermes_home: Path
) -> None:
    provider = make_provider()
    provider.on_memory_write("add", "user", "Uses vim")
    provider.on_memory_write("add", "user", "  uses VIM ")  # same fact key: same URI
    provider.on_session_end([])
    writes = fake.calls("/api/v1/content/write")
    assert len(writes) == 2 and writes[0].body["uri"] == writes[1].body["uri"]
    assert list(fake.files.values()) == ["Uses vim"]
    assert provider._pending is not None and len(provider._pending) == 0
    record = read_provider_status(hermes_home, "openviking")
    assert record is None or record["state"] == "ok"


def test_recall_leaves_out_what_the_curated_tier_shows(
    make_provider, fake: FakeOpenViking, hermes_home: Path
) -> None:
    fake.put("viking://user/memories/a.md", "Keeps bees in the garden")
    fake.put("viking://user/memories/b.md", "Garden faces south")
    provider = make_provider(init=False)
    provider.initialize(
        "s1", hermes_home=str(hermes_home), curated_entries=("- keeps bees in the garden",)
    )
    recall = provider.prefetch("tell me about the garden bees")
    assert "Garden faces south" in recall and "bees" not in recall.casefold()
    status = provider.recall_status()
    assert status is not None and status.count == 1


def test_tools_remember_read_browse_search_forget(make_provider, fake: FakeOpenViking) -> None:
    provider = make_provider()
    stored = json.loads(provider.handle_tool_call("viking_remember", {"content": "会议改到周五"}))
    assert stored["stored"] is True
    uri = stored["uri"]
    again = json.loads(provider.handle_tool_call("viking_remember", {"content": "会议改到周五"}))
    assert again["stored"] is True and again["note"] == "already stored"
    read = json.loads(provider.handle_tool_call("viking_read", {"uri": uri}))
    assert read["content"] == "会议改到周五"
    brief = json.loads(provider.handle_tool_call("viking_read", {"uri": uri, "level": "abstract"}))
    assert brief["level"] == "abstract" and fake.calls("/api/v1/content/abstract")
    listing = json.loads(provider.handle_tool_call("viking_browse", {}))
    assert listing["entries"] == [{"uri": "viking://user/memories/hermes", "isDir": True}]
    inner = json.loads(
        provider.handle_tool_call("viking_browse", {"uri": "viking://user/memories/hermes"})
    )
    assert [e["uri"] for e in inner["entries"]] == [uri]
    found = json.loads(provider.handle_tool_call("viking_search", {"query": "周五", "limit": 99}))
    assert found["results"][0]["uri"] == uri
    gone = json.loads(provider.handle_tool_call("viking_forget", {"uri": uri}))
    assert gone == {"deleted": uri} and fake.files == {}
    missing = json.loads(provider.handle_tool_call("viking_forget", {"uri": uri}))
    assert "404" in missing["error"] and "not found" in missing["error"]
    assert provider._guard is not None and not provider._guard.is_open  # a 404 is an answer
    added = json.loads(
        provider.handle_tool_call(
            "viking_add_resource",
            {"url": "https://example.org/doc", "to": "viking://resources/doc"},
        )
    )
    assert added["accepted"] is True
    assert fake.resources == [
        {"path": "https://example.org/doc", "wait": False, "to": "viking://resources/doc"}
    ]


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("viking_forget", {"uri": "viking://user"}, "too broad"),
        ("viking_forget", {"uri": "viking://resources/x"}, "too broad"),
        ("viking_forget", {"uri": "viking://user/memories/../../agent/x"}, "'..'"),
        ("viking_forget", {"uri": "viking://user/memories/a\u200b.md"}, "invisible"),
        ("viking_forget", {"uri": "file:///etc/passwd"}, "not a viking:// URI"),
        ("viking_forget", {"uri": "ｖiking://user/memories/a.md"}, "not a viking:// URI"),
        ("viking_read", {"uri": "viking://etc/passwd"}, "first segment"),
        ("viking_read", {"uri": "viking://user//x"}, "empty"),
        ("viking_read", {"uri": "viking://user/x", "level": "raw"}, "must be one of"),
        ("viking_search", {"query": "x", "scope": "http://evil/"}, "not a viking:// URI"),
        ("viking_add_resource", {"url": "file:///etc/passwd"}, "http(s) URL"),
        (
            "viking_add_resource",
            {"url": "https://x.org", "to": "viking://user/memories/a"},
            "viking://resources/",
        ),
        ("viking_remember", {"content": "   "}, "non-empty string"),
    ],
)
def test_bad_arguments_are_refused_before_any_request(
    make_provider, fake: FakeOpenViking, tool: str, args: dict, message: str
) -> None:
    provider = make_provider()
    assert wait_for(lambda: provider._recall is not None and not provider._recall.pending)
    before = len(fake.seen)
    answer = json.loads(provider.handle_tool_call(tool, args))
    assert message in answer["error"]
    assert len(fake.seen) == before


def test_the_key_never_reaches_logs_or_the_health_record(
    make_provider, fake: FakeOpenViking, hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake.key = "another-key"
    provider = make_provider()
    provider.prefetch("hello there")
    provider.handle_tool_call("viking_search", {"query": "x"})
    assert KEY not in caplog.text
    assert KEY not in (hermes_home / "memory_providers" / "openviking.status.json").read_text()


def test_a_hanging_server_costs_a_turn_at_most_its_bound(
    make_provider, fake: FakeOpenViking, hermes_home: Path
) -> None:
    provider = make_provider(recall_timeout=0.5, recall_total=0.8, timeout=0.5)
    assert provider._recall is not None
    assert wait_for(lambda: fake.calls("/api/v1/content/read") and not provider._recall.pending)
    fake.drop.set()
    started = time.monotonic()
    assert provider.prefetch("what about docker") == ""
    assert time.monotonic() - started < 4.0  # generous: the bound is 0.8 s
    assert wait_for(lambda: not provider._recall.pending)
    record = read_provider_status(hermes_home, "openviking")
    assert record is not None and record["last_error_kind"] == "timeout"


def test_unsent_turns_are_spooled_at_shutdown_and_replayed_with_their_commit(
    hermes_home: Path, fake: FakeOpenViking, make_provider
) -> None:
    first = make_provider(shutdown_timeout=0.5, breaker_cooldown=0)
    fake.status = 503
    first.sync_turn("记住：周五发布", "好的")
    first.on_memory_write("add", "memory", "Release train is Friday")
    first.shutdown()
    spooled = list(hermes_home.glob("openviking_pending*"))
    assert spooled and "周五发布" in spooled[0].read_text(encoding="utf-8")
    fake.status = 0
    second = make_provider(session_id="s2")
    second.on_session_end([])
    assert fake.sessions["s1"][0]["content"] == "记住：周五发布" and fake.commits == ["s1"]
    assert "Release train is Friday" in fake.files.values()
    assert list(hermes_home.glob("openviking_pending*")) == []


def test_a_subagent_never_writes(make_provider, fake: FakeOpenViking, hermes_home: Path) -> None:
    provider = make_provider(init=False)
    provider.initialize("s1", hermes_home=str(hermes_home), agent_context="subagent")
    provider.sync_turn("secret plan", "ok")
    provider.on_memory_write("add", "user", "x")
    for tool, args in (
        ("viking_remember", {"content": "y"}),
        ("viking_forget", {"uri": "viking://user/memories/a.md"}),
        ("viking_add_resource", {"url": "https://x.org"}),
    ):
        assert "read-only" in json.loads(provider.handle_tool_call(tool, args))["error"]
    provider.on_session_end([])
    provider.shutdown()
    assert fake.calls("/api/v1/sessions") == [] and fake.files == {}


def test_remember_while_down_is_queued_not_lost(make_provider, fake: FakeOpenViking) -> None:
    provider = make_provider()
    fake.status = 502
    answer = json.loads(provider.handle_tool_call("viking_remember", {"content": "Uses vim"}))
    assert answer["queued"] is True
    fake.status = 0
    provider.on_session_end([])
    assert "Uses vim" in fake.files.values()


@pytest.mark.parametrize(
    ("section", "env", "reason"),
    [
        ({}, {}, "OPENVIKING_URL"),
        ({"url": "file:///etc/passwd"}, {}, "http(s) URL"),
        ({"url": "http://x", "timeout": "soon"}, {}, "openviking.timeout must be a number"),
        ({"url": "http://x", "memory_root": "/tmp"}, {}, "configuration error: openviking.memory_"),
        ("not a mapping", {}, "configuration error: openviking must be a mapping"),
    ],
)
def test_bad_settings_are_explained(
    hermes_home: Path, section: object, env: dict, reason: str
) -> None:
    provider = OpenVikingProvider(
        hermes_home=hermes_home, config={"openviking": section}, environ=env
    )
    assert not provider.is_available()
    assert reason in provider.unavailable_reason()
    provider.initialize("s1", hermes_home=str(hermes_home))
    answer = json.loads(provider.handle_tool_call("viking_search", {"query": "x"}))
    assert reason in answer["error"]
    provider.shutdown()


def test_environment_settings(hermes_home: Path, fake: FakeOpenViking) -> None:
    env = {
        "OPENVIKING_URL": fake.url,
        "OPENVIKING_API_KEY": KEY,
        "OPENVIKING_ACCOUNT": "env-acct",
        "OPENVIKING_USER": "env-user",
    }
    provider = OpenVikingProvider(hermes_home=hermes_home, config={}, environ=env)
    assert provider.is_available()
    provider.initialize("s1", hermes_home=str(hermes_home))
    provider.handle_tool_call("viking_search", {"query": "x"})
    headers = fake.calls("/api/v1/search/find")[-1].headers
    assert headers["X-OpenViking-Account"] == "env-acct" and headers["X-API-Key"] == KEY
    assert headers["X-OpenViking-User"] == "env-user"
    schema = {f["key"]: f for f in provider.get_config_schema()}
    assert schema["api_key"]["secret"] is True
    assert schema["url"]["env_var"] == "OPENVIKING_URL"
    provider.shutdown()
    # The URL alone (a local server without keys) is enough: no X-API-Key is sent.
    local = OpenVikingProvider(
        hermes_home=hermes_home, config={}, environ={"OPENVIKING_URL": fake.url}
    )
    assert local.is_available()
    fake.key = ""
    local.initialize("s2", hermes_home=str(hermes_home))
    local.handle_tool_call("viking_search", {"query": "x"})
    assert "X-API-Key" not in fake.calls("/api/v1/search/find")[-1].headers
    local.shutdown()


class TestOpenVikingFailOpen(RemoteFailures):
    """The kit's fail-open suite: refused port, bad credentials, a silent server."""

    read_tool = ("viking_search", {"query": "x"})
    auth_hint = "OPENVIKING_API_KEY"
