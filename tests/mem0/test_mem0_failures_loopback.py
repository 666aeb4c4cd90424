"""Socket-level failures: a hanging server, refused connections, slow answers.

The fake (`mem0_fake.FakeMem0`) is served on a real 127.0.0.1 socket so that httpx's real
transport, timeouts and connect retries run; Platform tests use the real ``mem0.MemoryClient``.
"An agent turn" here is what the agent does inline: ``on_turn_start`` + ``prefetch`` before
the model call, ``sync_turn`` + ``queue_prefetch`` after it, plus a builtin-tier write. Time
bounds are generous (several times the configured waits) to stay robust on a busy machine.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from mem0_fake import FakeMem0, refused_url, wait_until

from hermes_memory_builtin import MemoryStore
from hermes_memory_core.health import read_provider_status

PREFETCH_WAIT = 0.5
TURN_BOUND = 3.0  # generous: the configured wait is 0.5 s


def _agent_turn(provider, store: MemoryStore, n: int) -> float:
    """One turn's inline calls into the memory stack; returns the seconds it took."""
    started = time.monotonic()
    provider.on_turn_start(n, f"message {n} about tea")
    provider.prefetch(f"message {n} about tea", session_id="s1")
    result = store.add("memory", f"builtin note {n}")
    assert result["success"], result
    provider.sync_turn(f"message {n} about tea", f"reply {n}", session_id="s1")
    provider.queue_prefetch(f"message {n} about tea", session_id="s1")
    return time.monotonic() - started


@pytest.fixture
def store(home: Path) -> MemoryStore:
    return MemoryStore(home / "memories")


@pytest.mark.parametrize("dialect", ["platform", "selfhosted"])
def test_hanging_server_never_stalls_a_turn(make_provider, store, home, dialect):
    """Loopback fake that accepts requests and never answers (within the 2 s read timeout)."""
    fake = FakeMem0(dialect, api_key="k" if dialect == "platform" else None)
    fake.hang(60.0)
    with fake.serve() as url:
        started = time.monotonic()
        provider = make_provider(
            None,
            mode=dialect,
            host=url,
            api_key=fake.api_key,
            prefetch_wait=PREFETCH_WAIT,
            timeout=2.0,
            connect_timeout=1.0,
            breaker_threshold=3,
            shutdown_timeout=1.0,
            flush_timeout=1.0,
        )
        assert time.monotonic() - started < 1.0  # initialize never waits
        durations = [_agent_turn(provider, store, n) for n in range(4)]
        assert max(durations) < TURN_BOUND, durations
        # the builtin tier kept every write
        assert [e for e in store.entries("memory")] == [f"builtin note {n}" for n in range(4)]
        # failures surface: status record (and, after enough of them, an open breaker)
        assert wait_until(
            lambda: (
                (read_provider_status(home, "mem0") or {}).get("state")
                in ("degraded", "circuit_open")
            ),
            timeout=15,
        )
        status = read_provider_status(home, "mem0")
        assert "timed out" in status["detail"].lower() or "timeout" in status["detail"].lower()
        started = time.monotonic()
        provider.on_session_end([])
        provider.shutdown()
        assert time.monotonic() - started < 1.0 + 1.0 + TURN_BOUND


def test_tool_call_on_a_hanging_server_is_bounded_by_the_timeout(make_provider):
    """Loopback self-hosted fake that hangs: the tool answers an error after ~timeout, not 300 s."""
    fake = FakeMem0("selfhosted", api_key=None)
    with fake.serve() as url:
        provider = make_provider(
            None, mode="selfhosted", host=url, timeout=1.0, connect_timeout=1.0
        )
        fake.hang(60.0)
        started = time.monotonic()
        result = json.loads(provider.handle_tool_call("mem0_search", {"query": "tea"}))
        elapsed = time.monotonic() - started
        assert result["kind"] == "timeout"
        assert 0.9 <= elapsed < 5.0
        fake.clear_faults()


def test_connection_refused_opens_the_breaker(make_provider, store, home):
    """Nothing listens on the port: connect errors (retried once) count; the breaker opens."""
    provider = make_provider(
        None,
        mode="selfhosted",
        host=refused_url(),
        prefetch_wait=PREFETCH_WAIT,
        breaker_threshold=2,
        breaker_cooldown=30,
    )
    durations = [_agent_turn(provider, store, n) for n in range(3)]
    assert max(durations) < TURN_BOUND
    provider.on_session_end([])
    status = read_provider_status(home, "mem0")
    assert status["state"] == "circuit_open"
    assert status["last_error_kind"] == "connection"
    result = json.loads(provider.handle_tool_call("mem0_add", {"content": "x"}))
    assert "temporarily unavailable" in result["error"]


def test_platform_ping_refused_then_server_appears(make_provider, home):
    """Real MemoryClient: ping to a refused port fails the start; after the pause it reconnects."""
    fake = FakeMem0("platform", api_key="k")
    provider = make_provider(
        None, mode="platform", api_key="k", host=refused_url(), breaker_cooldown=0.2
    )
    result = json.loads(provider.handle_tool_call("mem0_search", {"query": "tea"}))
    assert "could not start" in result["error"]
    assert read_provider_status(home, "mem0")["state"] == "degraded"
    with fake.serve() as url:
        # the same provider, pointed at a live server (as after a server restart)
        provider._conn.settings = provider._conn.settings.__class__(
            **{**provider._conn.settings.__dict__, "host": url}
        )
        time.sleep(0.3)
        assert json.loads(provider.handle_tool_call("mem0_search", {"query": "tea"}))["count"] == 0
        assert read_provider_status(home, "mem0")["state"] == "ok"
        provider.shutdown()


def test_slow_but_working_server_delivers_late_recall_next_turn(make_provider):
    """Loopback self-hosted fake answering searches after 1 s: recall arrives one turn late."""
    fake = FakeMem0("selfhosted", api_key=None)
    fake.seed("User likes oolong tea")
    with fake.serve() as url:
        provider = make_provider(None, mode="selfhosted", host=url, prefetch_wait=0.2, timeout=5)
        fake.hang(1.0, path="/search")
        started = time.monotonic()
        assert provider.prefetch("oolong tea", session_id="s1") == ""
        assert time.monotonic() - started < 1.0
        assert wait_until(lambda: "oolong" in provider.prefetch("oolong tea", session_id="s1"), 5)
        provider.shutdown()


def test_shutdown_is_bounded_with_a_stuck_write(make_provider):
    """Loopback fake hanging on writes: shutdown gives up after shutdown_timeout."""
    fake = FakeMem0("selfhosted", api_key=None)
    with fake.serve() as url:
        provider = make_provider(
            None, mode="selfhosted", host=url, timeout=30, shutdown_timeout=0.5, flush_timeout=0.5
        )
        fake.hang(60.0, path="/memories")
        for n in range(3):
            provider.sync_turn(f"u{n}", f"a{n}")
        started = time.monotonic()
        provider.on_session_end([])
        provider.shutdown()
        assert time.monotonic() - started < 3.0
        fake.clear_faults()
