"""Fail-open: every failure of the server costs at most its bound, is classified, counted
by the breaker and written to the health record; unsent retains survive a shutdown."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from hindsight_fake import FakeHindsight

from hermes_memory_core.health import read_provider_status
from hermes_memory_hindsight import HindsightProvider
from hermes_memory_testing import RemoteFailures

Make = Callable[..., HindsightProvider]


def record(home: Path) -> dict[str, object]:
    found = read_provider_status(home, "hindsight")
    assert found is not None
    return dict(found)


def test_a_retried_503_is_invisible(fake: FakeHindsight, make: Make, hermes_home: Path) -> None:
    provider = make(fake.url, retries=1)
    provider.initialize("s")
    fake.fail = [503]
    answer = json.loads(provider.handle_tool_call("hindsight_reflect", {"query": "x"}))
    assert answer == {"answer": "The user keeps bees."}
    assert [s.path for s in fake.seen].count("/v1/default/banks/hermes/reflect") == 2


@pytest.mark.parametrize("status", [404, 422])
def test_a_refused_request_does_not_count_against_the_service(
    fake: FakeHindsight, make: Make, hermes_home: Path, status: int
) -> None:
    provider = make(fake.url, breaker_threshold=1)
    provider.initialize("s")
    fake.fail = [status]
    answer = json.loads(provider.handle_tool_call("hindsight_reflect", {"query": "x"}))
    assert f"HTTP {status}" in answer["error"]
    assert provider.guard is not None and not provider.guard.is_open
    assert json.loads(provider.handle_tool_call("hindsight_reflect", {"query": "x"}))["answer"]


def test_a_rejected_retain_is_dropped_not_retried_forever(fake: FakeHindsight, make: Make) -> None:
    provider = make(fake.url)
    provider.initialize("s")
    fake.fail = [0, 422]  # /version answers, the retain is refused
    provider.sync_turn("a turn the server refuses", "ok")
    provider.sync_turn("a turn it takes", "ok")
    provider.on_session_end([])
    assert provider._pending is not None and len(provider._pending) == 0
    assert [d.content.split("\n")[0] for d in fake.docs] == ["User: a turn it takes"]


def test_a_server_that_answers_slowly_is_used_by_the_next_turn(
    fake: FakeHindsight, make: Make
) -> None:
    from hindsight_fake import Doc

    fake.docs.append(Doc("hermes", None, "Momo is the dog", None, None))
    fake.hold = threading.Event()
    provider = make(fake.url, prefetch_wait=0.1)
    provider.initialize("s")
    assert provider.prefetch("Momo") == ""  # not ready within prefetch_wait
    fake.hold.set()
    fake.hold = None
    assert provider._recall is not None
    handle = provider._recall.running
    assert handle is not None and handle.wait(5)
    assert provider.prefetch("Momo") == "## Hindsight memory\n- Momo is the dog"


def test_a_corrupt_spool_row_is_skipped(fake: FakeHindsight, make: Make, hermes_home: Path) -> None:
    rows = [{"content": 7}, {"document_id": "s0", "seq": 0, "content": "good row"}, "junk"]
    (hermes_home / "hindsight_pending.1.1.json").write_text(json.dumps(rows), encoding="utf-8")
    provider = make(fake.url)
    provider.initialize("s")
    provider.on_session_end([])
    assert [d.content for d in fake.docs] == ["good row"]


class TestHindsightFailOpen(RemoteFailures):
    """The kit's fail-open suite: refused port, bad credentials, a silent server."""

    read_tool = ("hindsight_recall", {"query": "x"})
    auth_hint = "HINDSIGHT_API_KEY"
