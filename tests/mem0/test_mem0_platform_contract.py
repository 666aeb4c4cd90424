"""Platform mode: the real ``mem0.MemoryClient`` (mem0ai 2.2.1) against a stateful fake.

Every test here runs the real SDK (its request building, ping, error mapping) with only the
network replaced: an ``httpx.MockTransport`` backed by `mem0_fake.FakeMem0` in its
``platform`` dialect, built from the recorded SDK requests
(``recordings/mem0-platform-sdk-2.2.1-requests.jsonl``) and mem0's published API.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
from mem0_fake import FakeMem0, wait_until

from hermes_memory_core.health import read_provider_status

RECORDING = (
    Path(__file__).resolve().parents[1] / "recordings" / "mem0-platform-sdk-2.2.1-requests.jsonl"
)


def _recorded() -> list[dict]:
    return [json.loads(line) for line in RECORDING.read_text().splitlines() if line.strip()]


def test_tools_round_trip_through_real_client(make_provider, home):
    """Real MemoryClient + MockTransport fake: add, search, update, delete via the tools."""
    fake = FakeMem0("platform")
    provider = make_provider(fake)

    added = json.loads(provider.handle_tool_call("mem0_add", {"content": "User prefers green tea"}))
    assert added["result"] == "Fact stored."
    (memory_id,) = added["memory_ids"]

    found = json.loads(provider.handle_tool_call("mem0_search", {"query": "green tea"}))
    assert found["count"] == 1
    assert found["results"][0]["id"] == memory_id
    assert found["results"][0]["memory"] == "User prefers green tea"

    updated = json.loads(
        provider.handle_tool_call(
            "mem0_update", {"memory_id": memory_id, "text": "User prefers jasmine tea"}
        )
    )
    assert updated == {"result": "Memory updated.", "memory_id": memory_id}
    assert fake.memories[memory_id]["memory"] == "User prefers jasmine tea"

    deleted = json.loads(provider.handle_tool_call("mem0_delete", {"memory_id": memory_id}))
    assert deleted["result"] == "Memory deleted."
    assert fake.memories == {}
    empty = json.loads(provider.handle_tool_call("mem0_search", {"query": "jasmine"}))
    assert empty == {"result": "No relevant memories found.", "count": 0}
    assert read_provider_status(home, "mem0")["state"] == "ok"


def test_requests_match_the_recorded_sdk_shapes(make_provider):
    """Real MemoryClient + MockTransport fake: paths and body keys equal the recording's."""
    fake = FakeMem0("platform", api_key="k-1")
    provider = make_provider(fake)
    provider.handle_tool_call("mem0_search", {"query": "tea"})
    provider.sync_turn("I prefer tea", "Noted")
    provider.on_session_end([])

    recorded = {(r["method"], r["path"]): r for r in _recorded()}
    ping = fake.calls("GET", "/v1/ping/")[0]
    assert ping.headers["authorization"] == "Token k-1"
    assert set(recorded[("GET", "/v1/ping/")]["headers"]) <= set(ping.headers)

    search = fake.calls("POST", "/v3/memories/search/")[0]
    rec_search = recorded[("POST", "/v3/memories/search/")]["request_body"]
    assert set(search.body) == set(rec_search)
    assert search.body["filters"] == {"user_id": "u1"}

    add = fake.calls("POST", "/v3/memories/add/")[0]
    rec_add = next(
        r["request_body"]
        for r in _recorded()
        if r["path"] == "/v3/memories/add/" and r["request_body"]["infer"]
    )
    assert set(add.body) == set(rec_add)
    assert add.body["messages"] == rec_add["messages"]
    assert add.body["user_id"] == "u1"
    assert add.body["agent_id"] == "hermes"
    assert add.body["infer"] is True
    assert add.body["metadata"]["channel"] == "cli"


def test_initialize_does_not_wait_for_the_ping(make_provider):
    """Real MemoryClient + MockTransport fake whose ping hangs 3 s: initialize returns at once."""
    fake = FakeMem0("platform")
    fake.hang(3.0, path="/v1/ping/", count=1)
    started = time.monotonic()
    provider = make_provider(fake, prefetch_wait=0.3)
    assert time.monotonic() - started < 1.0
    # prefetch while the client is still pinging: bounded by prefetch_wait, empty result
    started = time.monotonic()
    assert provider.prefetch("tea", session_id="s1") == ""
    assert time.monotonic() - started < 2.0
    fake.clear_faults()


def test_prefetch_recall_is_compact_and_deduplicated(make_provider, home):
    """Real MemoryClient + MockTransport fake: '- fact' bullets, repeats and builtin facts dropped."""
    (home / "memories").mkdir()
    (home / "memories" / "USER.md").write_text("Name is Ada\n§\nLives in Kyoto", encoding="utf-8")
    fake = FakeMem0("platform")
    fake.seed("User likes oolong tea")
    fake.seed("user likes oolong tea.")  # same fact, other spelling
    fake.seed("Lives in Kyoto")  # already in the builtin tier
    fake.seed("ユーザーは緑茶が好き")
    fake.seed("Unrelated fact about bicycles")
    provider = make_provider(fake)

    recall = provider.prefetch("which tea do I like? 緑茶", session_id="s1")
    lines = recall.splitlines()
    assert lines[0].startswith("## ")
    bullets = lines[1:]
    assert all(b.startswith("- ") for b in bullets)
    assert sum("oolong" in b.lower() for b in bullets) == 1
    assert "- ユーザーは緑茶が好き" in bullets
    assert not any("Kyoto" in b for b in bullets)
    assert not any("bicycles" in b for b in bullets)
    status = provider.recall_status()
    assert status is not None and status.count == len(bullets)


def test_queue_prefetch_warms_the_cache_for_a_slow_server(make_provider):
    """Real MemoryClient + MockTransport fake: when search is slow, prefetch returns the warm cache."""
    fake = FakeMem0("platform")
    fake.seed("User likes oolong tea")
    provider = make_provider(fake, prefetch_wait=0.2)
    provider.queue_prefetch("oolong tea", session_id="s1")
    assert wait_until(lambda: "oolong" in provider.prefetch("oolong tea", session_id="s1"))
    fake.hang(2.0, path="/search/")
    started = time.monotonic()
    recall = provider.prefetch("something new about tea", session_id="s1")
    assert time.monotonic() - started < 1.5
    assert "oolong" in recall  # the warm recall, not a stall
    fake.clear_faults()


def test_sync_turns_arrive_in_order_and_truncated(make_provider):
    """Real MemoryClient + MockTransport fake: background syncs keep order; long text is cut."""
    fake = FakeMem0("platform")
    provider = make_provider(fake, sync_max_chars=60)
    long_reply = "First sentence is short. " + "x" * 200
    started = time.monotonic()
    for i in range(5):
        provider.sync_turn(f"turn {i}", long_reply, session_id="s1")
    assert time.monotonic() - started < 0.5
    provider.on_session_end([])
    adds = fake.calls("POST", "/v3/memories/add/")
    assert [a.body["messages"][0]["content"] for a in adds] == [f"turn {i}" for i in range(5)]
    assert adds[0].body["messages"][1]["content"] == "First sentence is short."


def test_no_writes_for_non_primary_contexts(make_provider):
    """Real MemoryClient + MockTransport fake: a subagent/cron provider reads but never writes."""
    fake = FakeMem0("platform")
    fake.seed("User likes oolong tea")
    for context in ("subagent", "cron", "flush"):
        provider = make_provider(fake, init_kwargs={"agent_context": context})
        provider.sync_turn("hello", "hi")
        provider.on_memory_write("add", "user", "Prefers dark mode")
        provider.on_session_end([])
        assert (
            "disabled"
            in json.loads(provider.handle_tool_call("mem0_add", {"content": "x"}))["error"]
        )
        assert "oolong" in provider.prefetch("oolong", session_id="s1")
    assert fake.calls("POST", "/v3/memories/add/") == []


def test_builtin_writes_are_mirrored(make_provider):
    """Real MemoryClient + MockTransport fake: add (infer off), replace updates, remove deletes."""
    fake = FakeMem0("platform")
    provider = make_provider(fake)
    provider.on_memory_write("add", "user", "Prefers dark mode")
    provider.on_session_end([])
    add = fake.calls("POST", "/v3/memories/add/")[0]
    assert add.body["infer"] is False
    assert add.body["metadata"]["source"] == "hermes-builtin"
    (memory_id,) = fake.memories

    provider.on_memory_write(
        "replace", "user", "Prefers light mode", {"previous_content": "Prefers dark mode"}
    )
    provider.on_session_end([])
    assert fake.memories[memory_id]["memory"] == "Prefers light mode"

    provider.on_memory_write("remove", "user", "Prefers light mode")
    provider.on_session_end([])
    assert fake.memories == {}
    # mirrored facts are already in the builtin tier: never injected again by recall
    fake.seed("Prefers light mode")
    provider.on_memory_write("add", "user", "Prefers light mode")
    provider.on_session_end([])
    assert "light mode" not in provider.prefetch("light mode", session_id="s1")


def test_invalid_api_key_is_reported_not_raised(make_provider, home):
    """Real MemoryClient + MockTransport fake answering 401 to the ping: status + tool error."""
    fake = FakeMem0("platform", api_key="the-right-key")
    provider = make_provider(fake, api_key="a-wrong-key")
    result = json.loads(provider.handle_tool_call("mem0_search", {"query": "tea"}))
    assert "Invalid API key" in result["error"]
    status = read_provider_status(home, "mem0")
    assert status["state"] == "degraded"
    assert "Invalid API key" in status["detail"]
    assert provider.prefetch("tea", session_id="s1") == ""
    provider.sync_turn("a", "b")  # no exception


def test_client_errors_map_to_clear_tool_errors(make_provider):
    """Real MemoryClient + MockTransport fake: 404 and 400 (bad uuid) and 422 become tool errors."""
    fake = FakeMem0("platform")
    provider = make_provider(fake)
    missing = "00000000-0000-0000-0000-000000000000"
    result = json.loads(provider.handle_tool_call("mem0_delete", {"memory_id": missing}))
    assert result == {"error": f"Memory not found: {missing}"}
    result = json.loads(
        provider.handle_tool_call("mem0_update", {"memory_id": "nope", "text": "x"})
    )
    assert "valid UUID" in result["error"]
    fake.fail(422, body={"detail": "Unprocessable: bad field"}, path="/search/")
    result = json.loads(provider.handle_tool_call("mem0_search", {"query": "tea"}))
    assert "bad field" in result["error"]
    assert not provider._conn.guard.breaker.is_open  # client errors never open the breaker
    for bad in ({}, {"query": "  "}, {"query": "x", "top_k": "many"}):
        assert "error" in json.loads(provider.handle_tool_call("mem0_search", bad))
    assert "Unknown tool" in json.loads(provider.handle_tool_call("mem0_profile", {}))["error"]


def test_rate_limit_and_server_errors_open_the_breaker_then_recover(make_provider, home):
    """Real MemoryClient + MockTransport fake: 429/5xx open the breaker; a trial call closes it."""
    fake = FakeMem0("platform")
    fake.seed("User likes oolong tea")
    provider = make_provider(fake, breaker_threshold=3, breaker_cooldown=0.5)
    provider.handle_tool_call("mem0_search", {"query": "warm up"})  # connected
    fake.fail(429, headers={"Retry-After": "30"}, path="/search/")
    fake.fail(503, count=2, path="/search/")
    for _ in range(3):
        assert "error" in json.loads(provider.handle_tool_call("mem0_search", {"query": "tea"}))
    status = read_provider_status(home, "mem0")
    assert status["state"] == "circuit_open"
    assert status["failures"] == 3
    before = len(fake.requests)
    result = json.loads(provider.handle_tool_call("mem0_search", {"query": "tea"}))
    assert "temporarily unavailable" in result["error"]
    provider.sync_turn("while open", "kept")
    provider.on_session_end([])
    assert len(fake.requests) == before  # fail fast: no request while open
    assert provider._pending is not None and len(provider._pending) == 1  # kept, not dropped

    time.sleep(0.6)
    result = json.loads(provider.handle_tool_call("mem0_search", {"query": "oolong"}))
    assert result["count"] == 1
    assert read_provider_status(home, "mem0")["state"] == "ok"
    provider.on_session_end([])  # the kept write goes out once the service is back
    added = [c.body for c in fake.calls("POST", "/v3/memories/add/")]
    assert any("while open" in json.dumps(body, ensure_ascii=False) for body in added)


def test_retry_after_failed_start(make_provider, home):
    """Real MemoryClient + MockTransport fake whose ping fails once with 500: a later call reconnects."""
    fake = FakeMem0("platform")
    fake.fail(500, path="/v1/ping/")
    provider = make_provider(fake, breaker_cooldown=0.2)
    assert "error" in json.loads(provider.handle_tool_call("mem0_search", {"query": "tea"}))
    assert read_provider_status(home, "mem0")["state"] == "degraded"
    time.sleep(0.3)
    result = json.loads(provider.handle_tool_call("mem0_search", {"query": "tea"}))
    assert result["count"] == 0
    assert len(fake.calls("GET", "/v1/ping/")) == 2
    assert read_provider_status(home, "mem0")["state"] == "ok"


def test_add_with_infer_is_queued_on_platform(make_provider):
    """Real MemoryClient + MockTransport fake: infer=True answers PENDING with an event id."""
    fake = FakeMem0("platform")
    provider = make_provider(fake)
    result = provider._conn.call(
        "probe",
        lambda b: b.add(
            [{"role": "user", "content": "I like tea"}],
            user_id="u1",
            agent_id="hermes",
            infer=True,
            metadata={},
        ),
        wait=5,
    )
    assert result["status"] == "PENDING"
    assert fake.calls("POST", "/v3/memories/add/")[0].body["infer"] is True


def test_org_mismatch_is_logged(make_provider, caplog):
    """Real MemoryClient + MockTransport fake: a key from another org is reported as a warning."""
    fake = FakeMem0("platform")
    provider = make_provider(fake, org_id="org_expected")
    provider.handle_tool_call("mem0_search", {"query": "tea"})
    assert any("org_fake" in r.getMessage() for r in caplog.records)


def test_platform_host_override_uses_that_host(make_provider):
    """Real MemoryClient + MockTransport fake: mem0.host in platform mode changes the base URL."""
    fake = FakeMem0("platform")
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url.host))
        return fake.transport().handle_request(request)

    provider = make_provider(
        fake, transport=httpx.MockTransport(handler), host="https://mem0.example.org"
    )
    provider.handle_tool_call("mem0_search", {"query": "tea"})
    assert seen and set(seen) == {"mem0.example.org"}
