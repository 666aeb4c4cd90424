"""Failure handling: the real honcho-ai SDK against a failing Honcho.

HTTP-level failures (401, 404, 422, 429, 5xx, read timeouts) run the real SDK through
``httpx.MockTransport`` backed by `FakeHoncho` (built from the recorded real-server
exchanges) with injected errors. Socket-level failures (connection refused, a server that
accepts and never answers) use a real socket: a closed port, or `FakeHoncho` served on
127.0.0.1 by `LoopbackServer`. Bounds asserted are generous (several times the configured
timeouts) so a loaded machine does not make them flaky.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import httpx
from honcho_fake import FakeHoncho, LoopbackServer, free_port
from honcho_helpers import wait_for

from hermes_memory_core.health import read_provider_status


def _status(home: Path) -> dict:
    return read_provider_status(home, "honcho") or {}


def test_401_opens_the_breaker_and_reports_the_key(home, make_provider, caplog):
    """Real SDK + MockTransport fake requiring a different API key: the first 401 opens the
    breaker, the status record and a warning name HONCHO_API_KEY, tools answer JSON errors."""
    caplog.set_level(logging.WARNING, "hermes_memory_honcho")
    fake = FakeHoncho(api_key="right-key")
    provider = make_provider(settings={"api_key": "wrong-key"}, transport=fake.transport())
    wait_for(lambda: _status(home).get("state") == "circuit_open")
    assert "HONCHO_API_KEY" in _status(home)["detail"]
    assert any("HONCHO_API_KEY" in r.getMessage() for r in caplog.records)
    seen = len(fake.requests)
    provider.sync_turn("hi", "hello")  # no exception, nothing sent while open
    out = json.loads(provider.handle_tool_call("honcho_profile", {}))
    assert "temporarily unavailable" in out["error"] and "401" in out["error"]
    assert provider.prefetch("hello") == ""
    provider._pending.worker.drain(5)
    assert len(fake.requests) == seen


def test_404_is_a_tool_error_not_an_outage(fake, make_provider):
    """Real SDK + MockTransport fake answering one 404: a clear tool error; the breaker stays
    closed because the request, not the server, was wrong."""
    provider = make_provider(settings={"recall_mode": "tools"})
    fake.fail(404, path=r"/card$", body={"detail": "Peer bob not found"})
    out = json.loads(provider.handle_tool_call("honcho_profile", {"peer": "bob"}))
    assert out["error"].startswith("Honcho honcho_profile failed: Honcho refused the request")
    assert "404" in out["error"] and "Peer bob not found" in out["error"]
    assert provider.breaker is not None and provider.breaker.state == "ok"
    assert json.loads(provider.handle_tool_call("honcho_profile", {}))["card"] == []


def test_422_on_conclusions_is_logged_and_not_retried_forever(home, make_provider, caplog):
    """Real SDK + MockTransport fake of a server without LLM keys (422 "OpenAI API key is
    required" on conclusions, as recorded on the real server): the mirrored write is dropped
    with a warning naming the reason, and later turns still sync."""
    caplog.set_level(logging.WARNING, "hermes_memory_honcho")
    fake = FakeHoncho(llm_configured=False)
    provider = make_provider(transport=fake.transport())
    provider.on_memory_write("add", "user", "Likes jazz")
    provider.sync_turn("play something", "ok")
    provider.on_session_end([])
    assert len(fake.calls("POST", r"/conclusions$")) == 1
    assert [m["content"] for m in fake.stored_messages()] == ["play something", "ok"]
    assert any("OpenAI API key is required" in r.getMessage() for r in caplog.records)
    assert "OpenAI API key is required" in _status(home)["detail"]
    assert provider.breaker is not None and provider.breaker.state == "ok"


def test_429_retry_after_is_capped(fake, make_provider):
    """Real SDK + MockTransport fake answering 429 with ``Retry-After: 3600``: the SDK's
    retry waits our cap (0.2 s), not an hour, then succeeds."""
    provider = make_provider(
        settings={"max_retries": 1, "max_retry_after": 0.2, "recall_mode": "tools"}
    )
    fake.fail(429, path=r"/search$", headers={"Retry-After": "3600"})
    started = time.monotonic()
    out = json.loads(provider.handle_tool_call("honcho_search", {"query": "x"}))
    assert time.monotonic() - started < 3.0
    assert out == {"result": "No matching messages found.", "count": 0}
    assert len(fake.calls("POST", r"/search$")) == 2


def test_5xx_opens_the_circuit_then_recovers_and_resends_in_order(home, fake, make_provider):
    """Real SDK + MockTransport fake answering 503: after `failure_threshold` failures the
    breaker opens (status record), calls stop; after the cool-down the next call goes
    through and every queued turn is sent, oldest first."""
    provider = make_provider(settings={"failure_threshold": 3, "cooldown": 0.5})
    provider.on_session_end([])  # setup done while healthy
    fake.fail(503, times=1000, body={"detail": "overloaded"})
    for i in range(4):
        provider.sync_turn(f"u{i}", f"a{i}")
        provider._pending.worker.drain(5)
    assert _status(home)["state"] == "circuit_open"
    assert "503" in _status(home)["detail"]
    attempts = len(fake.calls("POST", r"/messages$"))
    assert attempts == 3  # the fourth turn was not attempted while open
    fake.injected.clear()
    time.sleep(0.6)
    provider.sync_turn("u4", "a4")
    provider.on_session_end([])
    assert [m["content"] for m in fake.stored_messages()] == [
        f"{who}{i}" for i in range(5) for who in ("u", "a")
    ]
    assert _status(home)["state"] == "ok"


def test_read_timeouts_surface_as_timeouts(home, fake, make_provider):
    """Real SDK + MockTransport fake raising ``httpx.ReadTimeout``: the SDK maps it to its
    TimeoutError; the tool says so, the status says degraded."""
    provider = make_provider(settings={"recall_mode": "tools"})
    fake.fail(0, path=r"/chat$", exception=httpx.ReadTimeout)
    out = json.loads(provider.handle_tool_call("honcho_reasoning", {"query": "x"}))
    assert "did not answer in time" in out["error"]
    assert _status(home)["state"] == "degraded"


def test_connection_refused(home, make_provider):
    """Real SDK over a real socket to a closed 127.0.0.1 port: initialize returns at once,
    prefetch returns "" quickly, tools report the connection problem, nothing raises."""
    url = f"http://127.0.0.1:{free_port()}"
    transport = httpx.HTTPTransport(retries=0)
    started = time.monotonic()
    provider = make_provider(settings={"base_url": url, "prefetch_wait": 1.0}, transport=transport)
    assert time.monotonic() - started < 1.0
    assert provider.prefetch("hello") == ""
    provider.sync_turn("hi", "hello")
    out = json.loads(provider.handle_tool_call("honcho_search", {"query": "x"}))
    assert "Cannot reach Honcho" in out["error"] or "temporarily unavailable" in out["error"]
    wait_for(lambda: _status(home).get("state") in ("degraded", "circuit_open"))
    assert url in _status(home)["detail"]


def test_hanging_server_never_stalls_the_turn(home, make_provider):
    """Real SDK over a real socket to `FakeHoncho` on 127.0.0.1 that accepts and never
    answers: initialize, prefetch, sync_turn, tools and shutdown all stay within their
    bounds (timeout 0.5 s, prefetch wait 0.3 s, tool timeout 1 s, shutdown 1 s)."""
    fake = FakeHoncho()
    fake.hang()
    transport = httpx.HTTPTransport(retries=0)
    with LoopbackServer(fake) as server:
        started = time.monotonic()
        provider = make_provider(
            settings={
                "base_url": server.url,
                "timeout": 0.5,
                "prefetch_wait": 0.3,
                "tool_timeout": 1.0,
                "shutdown_timeout": 1.0,
            },
            transport=transport,
        )
        turn = time.monotonic()
        assert provider.prefetch("hello") == ""
        provider.sync_turn("hi", "hello")
        out = json.loads(provider.handle_tool_call("honcho_context", {}))
        assert "error" in out
        assert time.monotonic() - turn < 3.0
        provider.shutdown()
        assert time.monotonic() - started < 6.0
    assert _status(home).get("state") in ("degraded", "circuit_open"), _status(home)
    assert (
        "did not answer in time" in _status(home)["detail"] or "1 write" in _status(home)["detail"]
    )
    (saved_file,) = home.glob("honcho_pending.*.json")
    saved = json.loads(saved_file.read_text())
    assert saved[0]["items"] == [["alice", "hi"], ["hermes", "hello"]]


def test_tool_deadline_is_shorter_than_a_slow_answer(fake, make_provider):
    """Real SDK + MockTransport fake delaying answers 3 s: the tool gives up at its 0.5 s
    deadline with a clear message."""
    provider = make_provider(settings={"tool_timeout": 0.5, "recall_mode": "tools"})
    fake.delay = 3.0
    started = time.monotonic()
    out = json.loads(provider.handle_tool_call("honcho_search", {"query": "x"}))
    assert time.monotonic() - started < 2.0
    assert out == {"error": "Honcho did not answer within 0.5s; try again later."}
    fake.delay = 0
