"""Fail-open against real sockets: HTTP errors, bad credentials, a refused port, a silent
server; the health record; writes spooled at shutdown and replayed at the next start."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from supermemory_fake import Doc, FakeSupermemory

from hermes_memory_supermemory import SupermemoryProvider
from hermes_memory_testing import RemoteFailures

Make = Callable[..., SupermemoryProvider]


def record(home: Path) -> dict[str, Any]:
    path = home / "memory_providers" / "supermemory.status.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize(("status", "kind"), [(429, "rate_limited"), (500, "server"),
                                              (503, "server")])  # fmt: skip
def test_an_http_error_costs_the_call_and_is_recorded(
    fake: FakeSupermemory, make: Make, hermes_home: Path, status: int, kind: str
) -> None:
    provider = make(fake.url, breaker_threshold=5)
    provider.initialize("s")
    fake.fail = [status]
    answer = json.loads(provider.handle_tool_call("supermemory_search", {"query": "x"}))
    assert f"HTTP {status}" in answer["error"] and f"injected {status}" in answer["error"]
    rec = record(hermes_home)
    assert rec["state"] == "degraded" and rec["last_error_kind"] == kind
    fake.docs.append(Doc("hermes", "d1", "bees live here"))
    fake.fail = [status]  # the profile fails, the search still answers
    assert provider.prefetch("bees") == "## Supermemory memory\n- bees live here"
    fake.fail = [status]
    assert provider.prefetch("hives") == ""  # fail-open: no recall, no exception
    assert json.loads(provider.handle_tool_call("supermemory_search", {"query": "x"}))["count"] == 0
    assert record(hermes_home)["state"] == "ok"


def test_a_retried_503_is_invisible(fake: FakeSupermemory, make: Make) -> None:
    provider = make(fake.url, retries=1)
    provider.initialize("s")
    fake.fail = [503]
    answer = json.loads(provider.handle_tool_call("supermemory_profile", {}))
    assert answer["static"] == ["Lives in 京都"]
    assert fake.paths().count("POST /ns/hermes/profile") == 2  # the SDK itself did not retry


@pytest.mark.parametrize("status", [404, 422])
def test_a_refused_request_does_not_count_against_the_service(
    fake: FakeSupermemory, make: Make, status: int
) -> None:
    provider = make(fake.url, breaker_threshold=1)
    provider.initialize("s")
    fake.fail = [status]
    answer = json.loads(provider.handle_tool_call("supermemory_profile", {}))
    assert f"HTTP {status}" in answer["error"]
    assert provider.guard is not None and not provider.guard.is_open
    assert json.loads(provider.handle_tool_call("supermemory_profile", {}))["static"]


def test_a_rejected_write_is_dropped_not_retried_forever(fake: FakeSupermemory, make: Make) -> None:
    provider = make(fake.url)
    provider.initialize("s")
    provider.on_memory_write("add", "user", "a fact the server refuses")
    assert provider._pending is not None
    fake.fail = [422]
    provider.on_memory_write("add", "user", "a fact it takes")
    provider.on_session_end([])
    assert len(provider._pending) == 0
    assert [d.content for d in fake.docs] in (["a fact it takes"], ["a fact the server refuses"])


def test_a_slow_answer_is_used_by_the_next_turn(fake: FakeSupermemory, make: Make) -> None:
    fake.docs.append(Doc("hermes", "d1", "Momo is the dog"))
    fake.hold = threading.Event()
    provider = make(fake.url, prefetch_wait=0.1, profile_every=0)
    provider.initialize("s")
    assert provider.prefetch("Momo") == ""  # not ready within prefetch_wait
    fake.hold.set()
    fake.hold = None
    assert provider._recall is not None
    handle = provider._recall.running
    assert handle is not None and handle.wait(5)
    assert provider.prefetch("Momo") == "## Supermemory memory\n- Momo is the dog"


def test_a_corrupt_spool_row_is_skipped(
    fake: FakeSupermemory, make: Make, hermes_home: Path
) -> None:
    rows = [{"content": 7, "namespace": "hermes"}, "junk",
            {"namespace": "hermes", "document_id": "s0", "content": "good row"},
            {"document_id": "s0", "content": "no namespace"}]  # fmt: skip
    (hermes_home / "supermemory_pending.1.1.json").write_text(json.dumps(rows), encoding="utf-8")
    provider = make(fake.url)
    provider.initialize("s")
    provider.on_session_end([])
    assert [d.content for d in fake.docs] == ["good row"]


@pytest.mark.parametrize(
    "garbage",
    [b"<html>502 Bad Gateway</html>", b'{"results": "oops"}', b'{"profile": 7, "results": 7}'],
)
def test_an_answer_of_the_wrong_shape_fails_open(
    fake: FakeSupermemory, make: Make, garbage: bytes
) -> None:
    provider = make(fake.url, breaker_threshold=10)
    provider.initialize("s")
    fake.garbage = garbage
    for tool, args in [("supermemory_search", {"query": "x"}), ("supermemory_profile", {})]:
        answer = json.loads(provider.handle_tool_call(tool, args))
        assert "failed" in answer["error"], answer
    assert provider.prefetch("bees") == ""


class TestSupermemoryFailOpen(RemoteFailures):
    """The kit's fail-open suite: refused port, bad credentials, a silent server."""

    read_tool = ("supermemory_search", {"query": "x"})
    auth_hint = "SUPERMEMORY_API_KEY"
