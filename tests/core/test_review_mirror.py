"""Writes a background review applies reach the external provider like live writes; the
steps it only stages do not (until a person applies them, which happens outside the agent).

Real builtin store in a temporary home, the real `MemoryManager`, a scripted review model
and an external provider that records every `on_memory_write` it gets.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory_builtin import BuiltinMemoryProvider, MemoryStore, PendingStore
from hermes_memory_core import MemoryManager, MemoryProvider
from hermes_memory_review import ModelReply, ToolCall

CONVERSATION = [
    {"role": "user", "content": "我叫小林，我更喜欢用制表符缩进。"},
    {"role": "assistant", "content": "好的，记住了。"},
]


class Mirror(MemoryProvider):
    """An external provider that keeps the curated writes it is told about."""

    def __init__(self) -> None:
        self.writes: list[tuple[str, str, str, dict[str, Any]]] = []
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return "mirror"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        with self._lock:
            self.writes.append((action, target, content, dict(metadata or {})))

    def seen(self) -> list[tuple[str, str, str]]:
        with self._lock:
            return [(a, t, c) for a, t, c, _ in self.writes]


class Script:
    """A review model that makes the scripted tool calls, then says it is done."""

    def __init__(self, *rounds: list[ToolCall]) -> None:
        self.rounds = list(rounds)

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        if self.rounds:
            return ModelReply("", self.rounds.pop(0))
        return ModelReply("Nothing to save.")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def mirror() -> Mirror:
    return Mirror()


@pytest.fixture
def manager(home: Path, mirror: Mirror) -> Iterator[MemoryManager]:
    m = MemoryManager(hermes_home=home, nudge_interval=2)
    assert m.add_provider(BuiltinMemoryProvider(hermes_home=home))
    assert m.add_provider(mirror)
    m.initialize_all("s1")
    yield m
    m.shutdown_all()


def seed(home: Path, target: str, *entries: str) -> None:
    store = MemoryStore(home / "memories")
    store.load_from_disk()
    for entry in entries:
        assert store.add(target, entry)["success"] is True


def entries(home: Path, target: str) -> list[str]:
    store = MemoryStore(home / "memories")
    store.load_from_disk()
    return store.entries(target)


def test_review_add_is_mirrored_like_a_live_add(manager: MemoryManager, mirror: Mirror) -> None:
    live = manager.handle_tool_call(
        "memory", {"action": "add", "target": "user", "content": "Lives in Porto"}
    )
    assert json.loads(live)["success"] is True
    call = ToolCall("memory", {"action": "add", "target": "user", "content": "名字是小林"})
    result = manager.run_review(Script([call]), CONVERSATION, background=False).result
    assert result.status == "completed" and len(result.saved) == 1
    manager.flush_pending(5.0)
    assert mirror.seen() == [("add", "user", "Lives in Porto"), ("add", "user", "名字是小林")]


def test_review_batch_mirrors_its_saved_adds_not_its_staged_steps(
    manager: MemoryManager, mirror: Mirror, home: Path
) -> None:
    seed(home, "memory", "Uses npm", "Deploys on Fridays")
    batch = ToolCall(
        "memory",
        {
            "target": "memory",
            "operations": [
                {"action": "add", "content": "CI runs on GitHub Actions"},
                {"action": "remove", "old_text": "Fridays"},
                {"action": "replace", "old_text": "npm", "content": "Uses pnpm"},
                {"action": "add", "content": "  Lint with ruff  "},
            ],
        },
    )
    result = manager.run_review(Script([batch]), CONVERSATION, background=False).result
    outcome = result.actions[0].outcome
    assert outcome["staged"] is True and outcome["additions_saved"] == 2
    assert "CI runs on GitHub Actions" in entries(home, "memory")
    manager.flush_pending(5.0)
    # exactly the two additions that were saved; the remove/replace wait for a person
    assert mirror.seen() == [
        ("add", "memory", "CI runs on GitHub Actions"),
        ("add", "memory", "Lint with ruff"),
    ]
    (record,) = PendingStore(home / "memories").proposals()
    assert [op["action"] for op in record["operations"]] == ["remove", "replace"]


@pytest.mark.parametrize("action", ["remove", "replace"])
def test_staged_single_step_is_not_mirrored(
    manager: MemoryManager, mirror: Mirror, home: Path, action: str
) -> None:
    seed(home, "memory", "Project pins Node 18")
    args: dict[str, Any] = {"action": action, "target": "memory", "old_text": "Node 18"}
    if action == "replace":
        args["content"] = "Project pins Node 20"
    result = manager.run_review(Script([ToolCall("memory", args)]), CONVERSATION,
                                background=False).result  # fmt: skip
    assert result.actions[0].outcome["staged"] is True
    manager.flush_pending(5.0)
    assert mirror.seen() == []
    assert entries(home, "memory") == ["Project pins Node 18"]


def test_batch_refused_whole_is_not_mirrored(
    manager: MemoryManager, mirror: Mirror, home: Path
) -> None:
    """A review batch whose staging is refused (a step matches nothing) saves nothing, so
    nothing is mirrored either."""
    seed(home, "memory", "Uses npm")
    batch = ToolCall(
        "memory",
        {
            "target": "memory",
            "operations": [
                {"action": "add", "content": "CI runs on GitHub Actions"},
                {"action": "remove", "old_text": "no such entry"},
            ],
        },
    )
    result = manager.run_review(Script([batch]), CONVERSATION, background=False).result
    assert result.actions[0].outcome["success"] is False
    manager.flush_pending(5.0)
    assert mirror.seen() == []
    assert entries(home, "memory") == ["Uses npm"]


def test_write_approval_stages_everything_and_mirrors_nothing(home: Path) -> None:
    mirror = Mirror()
    manager = MemoryManager(hermes_home=home)
    builtin = BuiltinMemoryProvider(hermes_home=home)
    builtin.write_approval = True
    assert manager.add_provider(builtin) and manager.add_provider(mirror)
    manager.initialize_all("s1")
    try:
        answer = json.loads(
            manager.handle_tool_call(
                "memory",
                {"target": "user", "operations": [{"action": "add", "content": "Likes tea"}]},
            )
        )
        assert answer["staged"] is True and not answer.get("additions_saved")
        manager.flush_pending(5.0)
        assert mirror.seen() == []
    finally:
        manager.shutdown_all()
