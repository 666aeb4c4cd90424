"""Self-hosted mode: our REST client against mem0's server API.

The fake (`mem0_fake.FakeMem0`, ``selfhosted`` dialect) is first checked against the real
server's recorded exchanges (``recordings/mem0-server-selfhosted.jsonl``); the adapter then
talks to it through ``httpx.MockTransport`` (in-process, no socket).
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from mem0_fake import FakeMem0, Request

from hermes_memory_core.health import read_provider_status

RECORDING = Path(__file__).resolve().parents[1] / "recordings" / "mem0-server-selfhosted.jsonl"


def _shape(value: object) -> object:
    """Keys (recursively, first list item) of a JSON value: what a client depends on."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__


def test_fake_replays_the_recorded_server_exchanges():
    """Replay of the real server's recording into the fake: same statuses and response shapes."""
    fake = FakeMem0("selfhosted", api_key=None)
    ids: dict[str, str] = {}
    for line in RECORDING.read_text().splitlines():
        rec = json.loads(line)
        path = rec["path"]
        for real, ours in ids.items():
            path = path.replace(real, ours)
        headers = {"x-api-key": "any"} if rec["status"] == 401 else {}
        status, body, _ = fake.handle(
            Request(rec["method"], path, rec["query"], headers, rec["request_body"])
        )
        assert status == rec["status"], (rec["method"], rec["path"])
        expected = rec["response_body"]
        if status >= 400:
            assert set(body) == set(expected) == {"detail"}
            if status == 404:
                assert body["detail"].startswith("Memory with id")
            continue
        if rec["method"] == "POST" and path == "/memories":
            for real, ours in zip(
                (r["id"] for r in expected["results"]),
                (r["id"] for r in body["results"]),
                strict=True,
            ):
                ids[real] = ours
        assert set(_shape(body)) == set(_shape(expected)), rec["path"]
        if isinstance(expected, dict) and expected.get("results"):
            got = set(_shape(body)["results"][0]) if body["results"] else set()
            assert set(_shape(expected)["results"][0]) - {"score"} <= got | {"actor_id", "role"}


def test_no_api_key_header_without_a_key(make_provider):
    """MockTransport fake with auth disabled: no X-API-Key is sent, everything works."""
    fake = FakeMem0("selfhosted", api_key=None)
    provider = make_provider(fake)
    stored = json.loads(provider.handle_tool_call("mem0_add", {"content": "I prefer green tea"}))
    assert stored["result"] == "Fact stored."
    assert all("x-api-key" not in r.headers for r in fake.requests)
    add = fake.calls("POST", "/memories")[0]
    assert add.body == {
        "messages": [{"role": "user", "content": "I prefer green tea"}],
        "user_id": "u1",
        "agent_id": "hermes",
        "infer": False,
        "metadata": {"source": "hermes-tool", "channel": "cli"},
    }
    found = json.loads(provider.handle_tool_call("mem0_search", {"query": "green tea", "top_k": 5}))
    assert found["results"][0]["memory"] == "I prefer green tea"
    search = fake.calls("POST", "/search")[0]
    assert search.body == {"query": "green tea", "filters": {"user_id": "u1"}, "top_k": 5}


def test_api_key_header_when_a_key_is_set(make_provider):
    """MockTransport fake requiring a key: X-API-Key carries it; 'rerank' is not offered."""
    fake = FakeMem0("selfhosted", api_key="sk-self")
    provider = make_provider(fake)
    assert json.loads(provider.handle_tool_call("mem0_search", {"query": "x"}))["count"] == 0
    assert {r.headers.get("x-api-key") for r in fake.requests} == {"sk-self"}
    search_schema = next(s for s in provider.get_tool_schemas() if s["name"] == "mem0_search")
    assert "rerank" not in search_schema["parameters"]["properties"]


def test_key_sent_to_an_auth_disabled_server_is_surfaced(make_provider, home):
    """MockTransport fake with auth disabled answering 401 to any key: clear error + status."""
    fake = FakeMem0("selfhosted", api_key=None)
    provider = make_provider(fake, api_key="stale-key")
    result = json.loads(provider.handle_tool_call("mem0_search", {"query": "x"}))
    assert "401" in result["error"] and "Invalid API key" in result["error"]
    assert result["kind"] == "auth"
    status = read_provider_status(home, "mem0")
    # the kit's one taxonomy: rejected credentials stop calls at once
    assert status["state"] == "circuit_open" and "Invalid API key" in status["detail"]


def test_update_delete_and_not_found(make_provider):
    """MockTransport fake: PUT/DELETE /memories/{id}; a 404 becomes 'Memory not found: <id>'."""
    fake = FakeMem0("selfhosted", api_key=None)
    memory_id = fake.seed("I prefer green tea")
    provider = make_provider(fake)
    assert (
        json.loads(
            provider.handle_tool_call(
                "mem0_update", {"memory_id": memory_id, "text": "I prefer jasmine tea"}
            )
        )["result"]
        == "Memory updated."
    )
    assert fake.calls("PUT", f"/memories/{memory_id}")[0].body == {"text": "I prefer jasmine tea"}
    assert fake.memories[memory_id]["memory"] == "I prefer jasmine tea"
    assert (
        json.loads(provider.handle_tool_call("mem0_delete", {"memory_id": memory_id}))["result"]
        == "Memory deleted."
    )
    missing = "00000000-0000-0000-0000-000000000000"
    assert json.loads(provider.handle_tool_call("mem0_delete", {"memory_id": missing})) == {
        "error": f"Memory not found: {missing}"
    }
    # an id with URL-unsafe characters stays one path segment
    result = json.loads(provider.handle_tool_call("mem0_delete", {"memory_id": "a/../b"}))
    assert result == {"error": "Memory not found: a/../b"}
    assert fake.requests[-1].path.startswith("/memories/a")


def test_sync_with_infer_uses_server_extraction(make_provider):
    """MockTransport fake with a scripted extractor: infer=True syncs store extracted facts."""
    fake = FakeMem0(
        "selfhosted",
        api_key=None,
        extract=lambda msgs: (
            ["User prefers dark mode"] if "dark mode" in msgs[0]["content"] else []
        ),
    )
    provider = make_provider(fake)
    provider.sync_turn("please always use dark mode", "ok")
    provider.sync_turn("what's the weather", "sunny")
    provider.on_session_end([])
    assert [m["memory"] for m in fake.memories.values()] == ["User prefers dark mode"]
    assert [c.body["infer"] for c in fake.calls("POST", "/memories")] == [True, True]
    assert "- User prefers dark mode" in provider.prefetch("dark mode please", session_id="s1")


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (401, "auth"),
        (404, "not_found"),
        (422, "invalid"),
        (429, "rate_limited"),
        (500, "server"),
        (502, "server"),
    ],
)
def test_http_errors_are_classified(make_provider, status, kind):
    """MockTransport fake injecting one status: tool answers JSON error with the right kind."""
    fake = FakeMem0("selfhosted", api_key=None)
    provider = make_provider(fake)
    fake.fail(status, path="/search")
    result = json.loads(provider.handle_tool_call("mem0_search", {"query": "x"}))
    assert "error" in result
    if status != 404:
        assert result["kind"] == kind
    assert provider._conn.guard.breaker.failures == (0 if kind in ("not_found", "invalid") else 1)


def test_non_json_answer_is_an_error_not_a_crash(make_provider):
    """MockTransport answering HTML (a proxy page): a clear tool error."""
    provider = make_provider(
        None,
        mode="selfhosted",
        host="http://mem0.test",
        transport=httpx.MockTransport(lambda r: httpx.Response(200, text="<html>proxy</html>")),
    )
    result = json.loads(provider.handle_tool_call("mem0_search", {"query": "x"}))
    assert "not JSON" in result["error"]


def test_recall_cache_keeps_only_the_most_recent_sessions(make_provider):
    """MockTransport fake: a long-running gateway recalls for many sessions; only the last 8
    sessions' recalls stay cached (served while the server is down), older ones are gone."""
    fake = FakeMem0("selfhosted", api_key=None)
    fake.seed("User likes tea")
    provider = make_provider(fake)
    for n in range(20):
        assert "User likes tea" in provider.prefetch(f"tea {n}", session_id=f"chat-{n}")
    fake.fail(500, count=1_000)
    assert "User likes tea" in provider.prefetch("tea 19", session_id="chat-19")
    assert "User likes tea" in provider.prefetch("tea 12", session_id="chat-12")
    assert provider.prefetch("tea 11", session_id="chat-11") == ""
    assert provider.prefetch("tea 0", session_id="chat-0") == ""


def test_availability_is_checked_once_at_initialize(make_provider, monkeypatch):
    """After initialize, tool calls, writes and the prompt block do not re-probe the
    environment or the installed packages (the answer initialize found is reused)."""
    from hermes_memory_mem0 import Mem0Settings

    fake = FakeMem0("selfhosted", api_key=None)
    provider = make_provider(fake)
    probes: list[str] = []
    real_load = Mem0Settings.load.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(
        Mem0Settings,
        "load",
        classmethod(lambda cls, *a, **k: probes.append("load") or real_load(cls, *a, **k)),
    )
    assert provider.system_prompt_block()
    provider.sync_turn("hello", "hi")
    assert "error" not in json.loads(provider.handle_tool_call("mem0_search", {"query": "x"}))
    provider.on_session_end([])
    assert probes == []
    assert provider.unavailable_reason() == ""
