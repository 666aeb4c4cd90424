"""The kit-based example (`RemoteNotesProvider`) against a real notes service on 127.0.0.1.

The service is the kit's `FakeService` with two routes; it can answer 503, or stop, to
exercise the kit's retries, breaker, health record and spooled writes with real sockets,
real files and real threads.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory_core import MemoryManager
from hermes_memory_core.health import read_provider_status
from hermes_memory_example import RemoteNotesProvider
from hermes_memory_testing import FakeService, ProviderConformance, Seen


class NotesService(FakeService):
    """``GET /notes?q=&limit=`` and ``POST /notes`` on 127.0.0.1 (the kit's `FakeService`:
    ``fail`` injects statuses, ``seen`` counts requests)."""

    def __init__(self) -> None:
        super().__init__(start=False)
        self.notes: list[str] = []

    def route(self, seen: Seen) -> tuple[int, Any]:
        if seen.method == "POST":
            self.notes.append(seen.body["text"])
            return 201, {"ok": True}
        words = seen.query.get("q", "").casefold().split()
        hits = [n for n in self.notes if any(w in n.casefold() for w in words)]
        return 200, {"notes": hits[: int(seen.query.get("limit", "5"))]}


@pytest.fixture
def service() -> Iterator[NotesService]:
    with NotesService() as running:
        yield running


def make(home: Path, url: str, **settings: Any) -> RemoteNotesProvider:
    config = {"notes": {"url": url, "timeout": 2, **settings}}
    return RemoteNotesProvider(hermes_home=home, config=config, environ={})


class TestRemoteNotesConformance(ProviderConformance):
    @pytest.fixture
    def provider(self, hermes_home: Path, service: NotesService) -> RemoteNotesProvider:
        return make(hermes_home, service.url)


def test_a_whole_session_through_the_manager(hermes_home: Path, service: NotesService) -> None:
    service.notes.append("User keeps bees in 京都")
    manager = MemoryManager(hermes_home=hermes_home)
    provider = make(hermes_home, service.url)
    assert manager.add_provider(provider)
    manager.initialize_all("s1", curated_entries=("already curated: bees",))
    assert "User keeps bees in 京都" in manager.prefetch_all("tell me about the bees")
    manager.sync_all("I moved to Porto last spring", "Noted.")
    manager.on_memory_write("add", "user", "Prefers 中文 answers")
    assert manager.flush_pending(5)
    manager.on_session_end([])
    assert service.notes[1:] == ["I moved to Porto last spring", "Prefers 中文 answers"]
    found = json.loads(manager.handle_tool_call("notes_search", {"query": "porto"}))
    assert found == {"notes": ["I moved to Porto last spring"]}
    assert "error" in json.loads(manager.handle_tool_call("notes_search", {"query": " "}))
    manager.shutdown_all()


def test_a_transient_503_is_retried_and_the_health_stays_ok(
    hermes_home: Path, service: NotesService
) -> None:
    provider = make(hermes_home, service.url, retries=1)
    provider.initialize("s1")
    service.fail = [503]
    assert json.loads(provider.handle_tool_call("notes_search", {"query": "x"})) == {"notes": []}
    assert len(service.seen) == 2
    record = read_provider_status(hermes_home, "example-remote")
    assert record is None or record["state"] == "ok"
    provider.shutdown()


def test_repeated_failures_open_the_breaker_and_are_on_record(
    hermes_home: Path, service: NotesService
) -> None:
    provider = make(hermes_home, service.url, retries=0, breaker_threshold=2)
    provider.initialize("s1")
    service.fail = [503] * 10
    for _ in range(2):
        assert (
            "503" in json.loads(provider.handle_tool_call("notes_search", {"query": "x"}))["error"]
        )
    before = len(service.seen)
    answer = json.loads(provider.handle_tool_call("notes_search", {"query": "x"}))
    assert "temporarily unavailable" in answer["error"] and len(service.seen) == before
    record = read_provider_status(hermes_home, "example-remote")
    assert record is not None and record["state"] == "circuit_open"
    provider.shutdown()


def test_writes_unsent_at_shutdown_are_spooled_and_replayed(hermes_home: Path) -> None:
    with NotesService() as down:
        url = down.url
        provider = make(hermes_home, url, retries=0)
        provider.initialize("s1")
        down.fail = [503] * 1000
        provider.sync_turn("记住：周五发布", "好的")
        provider.shutdown()
    [spooled] = list(hermes_home.glob("example-remote_pending.*.json"))
    assert "周五发布" in spooled.read_text(encoding="utf-8")

    with NotesService() as up:
        replay = make(hermes_home, up.url)
        replay.initialize("s2")
        replay.on_session_end([])
        assert up.notes == ["记住：周五发布"]
        assert list(hermes_home.glob("example-remote_pending.*")) == []
        replay.shutdown()


@pytest.mark.parametrize(
    ("settings", "reason"),
    [
        ({"url": ""}, "NOTES_URL"),
        ({"url": "file:///etc/passwd"}, "http(s) URL"),
        ({"url": "http://127.0.0.1:9", "timeout": "soon"}, "notes.timeout must be a number"),
        ({"url": "http://127.0.0.1:9", "retries": -1}, "notes.retries must be at least 0"),
    ],
)
def test_bad_settings_are_explained(
    hermes_home: Path, settings: dict[str, Any], reason: str
) -> None:
    provider = RemoteNotesProvider(hermes_home=hermes_home, config={"notes": settings}, environ={})
    assert not provider.is_available()
    assert reason in provider.unavailable_reason()
    provider.initialize("s1")
    answer = json.loads(provider.handle_tool_call("notes_search", {"query": "x"}))
    assert reason in answer["error"]  # refused before any request (no file: URL is opened)
    provider.shutdown()
