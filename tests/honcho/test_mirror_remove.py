"""Curated ``user`` removals (and replacements) reach Honcho: the mirrored conclusion is
deleted, also after a restart and when the remove had to wait for the server.

Real components: the real honcho-ai SDK over ``httpx.MockTransport`` into `FakeHoncho`
(conclusions create/list/delete as recorded from the real server), the real `MemoryManager`
with the real builtin store writing files in a temporary home, the kit's real spool.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from honcho_fake import FakeHoncho

from hermes_memory_builtin import BuiltinMemoryProvider
from hermes_memory_core import MemoryManager
from hermes_memory_honcho import HonchoProvider
from hermes_memory_honcho._conclusions import INDEX_DIR, INDEX_FILE, MAX_LIST_PAGES

SETTINGS: dict[str, Any] = {
    "base_url": "http://honcho.test",
    "peer_name": "alice",
    "max_retries": 0,
    "timeout": 2.0,
    "dialectic_cadence": 0,
    "recall_mode": "tools",
    "flush_timeout": 5,
    "shutdown_timeout": 2,
}

Start = Callable[[FakeHoncho], MemoryManager]
MakeProvider = Callable[..., HonchoProvider]


@pytest.fixture
def start(home: Path) -> Iterator[Start]:
    """A manager (builtin + Honcho against ``fake``) as one agent process would build it."""
    managers: list[MemoryManager] = []

    def make(fake: FakeHoncho) -> MemoryManager:
        manager = MemoryManager(hermes_home=home)
        assert manager.add_provider(BuiltinMemoryProvider(hermes_home=home))
        honcho = HonchoProvider(
            hermes_home=home,
            config={"honcho": SETTINGS},
            transport=fake.transport(),
            environ={},
        )
        assert manager.add_provider(honcho)
        manager.initialize_all("cli-proj", platform="cli")
        managers.append(manager)
        return manager

    yield make
    for manager in managers:
        if not manager.closed:
            manager.shutdown_all()


def memory(manager: MemoryManager, **args: Any) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(
        manager.handle_tool_call("memory", {"target": "user", **args})
    )
    assert answer.get("success") is True, answer
    return answer


def settle(manager: MemoryManager) -> None:
    """Let the manager hand its writes over, then the provider send them."""
    assert manager.flush_pending(10.0)
    manager.on_session_end([])


def contents(fake: FakeHoncho) -> list[str]:
    return [c["content"] for c in fake.conclusions]


def index_path(home: Path) -> Path:
    return home / INDEX_DIR / INDEX_FILE


def test_add_then_remove_deletes_the_conclusion(fake: FakeHoncho, start: Start, home: Path) -> None:
    manager = start(fake)
    memory(manager, action="add", content="Prefers tea over coffee")
    memory(manager, action="add", content="住在里斯本")
    settle(manager)
    assert contents(fake) == ["Prefers tea over coffee", "住在里斯本"]
    tea_id = fake.conclusions[0]["id"]

    memory(manager, action="remove", old_text="tea over")
    settle(manager)
    assert contents(fake) == ["住在里斯本"]
    (delete,) = fake.calls("DELETE", r"/conclusions/")
    assert delete.path == f"/v3/workspaces/hermes/conclusions/{tea_id}"
    # the id came from the index: nothing had to be listed
    assert not fake.calls("POST", r"/conclusions/list$")
    # the index keeps ids and digests, never the entry's text; private to the user
    text = index_path(home).read_text(encoding="utf-8")
    assert "里斯本" not in text and "tea" not in text
    assert os.name == "nt" or index_path(home).stat().st_mode & 0o777 == 0o600


def test_remove_after_a_restart_finds_the_id(fake: FakeHoncho, start: Start) -> None:
    first = start(fake)
    memory(first, action="add", content="Is left-handed")
    settle(first)
    first.shutdown_all()
    (cid,) = [c["id"] for c in fake.conclusions]

    second = start(fake)
    memory(second, action="remove", old_text="left-handed")
    settle(second)
    assert fake.conclusions == []
    assert [c.path.rsplit("/", 1)[-1] for c in fake.calls("DELETE")] == [cid]
    assert not fake.calls("POST", r"/conclusions/list$")


def test_remove_spooled_while_honcho_is_down_is_replayed_after_the_add(
    fake: FakeHoncho, start: Start, home: Path
) -> None:
    """Add and remove both wait for a server that is down; at the next start the add is
    sent first, then the remove deletes what the add created."""
    fake.fail(503, times=100_000)
    first = start(fake)
    memory(first, action="add", content="Works night shifts")
    memory(first, action="add", content="Has a cat named Miso")
    memory(first, action="remove", old_text="night shifts")
    settle(first)
    first.shutdown_all()
    (spooled,) = home.glob("honcho_pending.*.json")
    rows = json.loads(spooled.read_text(encoding="utf-8"))
    assert [(r["kind"], r["items"][0][1]) for r in rows] == [
        ("conclusion", "Works night shifts"),
        ("conclusion", "Has a cat named Miso"),
        ("forget", "Works night shifts"),
    ]

    up = FakeHoncho()
    second = start(up)
    settle(second)
    assert contents(up) == ["Has a cat named Miso"]
    order = [(c.method, c.path.rsplit("/", 1)[-1]) for c in up.calls(path=r"/conclusions")]
    assert order[:2] == [("POST", "conclusions"), ("POST", "conclusions")]
    assert order[-1][0] == "DELETE"
    assert not list(home.glob("honcho_pending*"))


def test_remove_spooled_after_the_add_was_sent(fake: FakeHoncho, start: Start, home: Path) -> None:
    first = start(fake)
    memory(first, action="add", content="Speaks Portuguese")
    settle(first)
    fake.fail(503, times=100_000)  # Honcho goes down before the remove
    memory(first, action="remove", old_text="Portuguese")
    settle(first)
    first.shutdown_all()
    assert contents(fake) == ["Speaks Portuguese"]
    assert len(list(home.glob("honcho_pending.*.json"))) == 1

    fake.injected.clear()  # back up
    second = start(fake)
    settle(second)
    assert fake.conclusions == []


def test_replace_deletes_the_old_conclusion_and_adds_the_new(
    fake: FakeHoncho, start: Start
) -> None:
    manager = start(fake)
    memory(manager, action="add", content="Uses Node 18")
    settle(manager)
    memory(manager, action="replace", old_text="Node 18", content="Uses Node 20")
    settle(manager)
    assert contents(fake) == ["Uses Node 20"]


def test_remove_without_an_index_lists_and_matches_exactly(
    fake: FakeHoncho, start: Start, home: Path
) -> None:
    """An entry mirrored before the index existed (or by another process) is found by
    listing; only the exact text goes: look-alike letters, other case, other punctuation
    and longer texts stay."""
    manager = start(fake)
    memory(manager, action="add", content="Likes green tea")
    settle(manager)
    manager.shutdown_all()
    index_path(home).unlink()
    manager = start(fake)
    for text in (
        "Likes green t\u0435a",
        "likes green tea",
        "Likes green tea.",
        "Likes green tea!!",
    ):
        fake.conclusions.append(dict(fake.conclusions[0], id=f"other{len(fake.conclusions)}",
                                     content=text))  # fmt: skip
    memory(manager, action="remove", old_text="Likes green tea")
    settle(manager)
    assert contents(fake) == [
        "Likes green t\u0435a",
        "likes green tea",
        "Likes green tea.",
        "Likes green tea!!",
    ]
    (listed,) = fake.calls("POST", r"/conclusions/list$")
    assert listed.body == {"filters": {"observer_id": "hermes", "observed_id": "alice"}}


def test_listing_walks_pages_and_is_bounded(fake: FakeHoncho, make_provider: MakeProvider) -> None:
    provider = make_provider(settings={"dialectic_cadence": 0, "recall_mode": "tools"})
    base = {"observer_id": "hermes", "observed_id": "alice", "session_id": "s", "level": "explicit",
            "created_at": "2026-01-01T00:00:00Z", "workspace_id": "hermes"}  # fmt: skip
    fake.conclusions += [dict(base, id=f"c{i}", content=f"fact {i}") for i in range(250)]
    provider.on_memory_write("remove", "user", "fact 240")
    provider.on_session_end([])
    assert "fact 240" not in contents(fake) and len(fake.conclusions) == 249
    assert [c.query["page"] for c in fake.calls("POST", r"/conclusions/list$")] == ["1", "2", "3"]
    # far more conclusions than the bound: the search stops, nothing else is touched
    fake.conclusions += [dict(base, id=f"d{i}", content=f"more {i}") for i in range(2200)]
    fake.requests.clear()
    provider.on_memory_write("remove", "user", "more 2199")
    provider.on_session_end([])
    assert len(fake.calls("POST", r"/conclusions/list$")) == MAX_LIST_PAGES
    assert not fake.calls("DELETE")


def test_already_deleted_conclusion_counts_as_done(
    fake: FakeHoncho, make_provider: MakeProvider
) -> None:
    """The conclusion was deleted with honcho_conclude meanwhile: the 404 ends the remove
    (no retry, the breaker stays closed, the stale id is dropped from the index)."""
    provider = make_provider(settings={"dialectic_cadence": 0, "recall_mode": "tools"})
    provider.on_memory_write("add", "user", "Owns a bicycle")
    provider.on_session_end([])
    (cid,) = [c["id"] for c in fake.conclusions]
    out = json.loads(provider.handle_tool_call("honcho_conclude", {"delete_id": cid}))
    assert out == {"deleted": cid}
    provider.on_memory_write("remove", "user", "Owns a bicycle")
    provider.on_session_end([])
    assert len(fake.calls("DELETE")) == 2
    assert provider._pending is not None and len(provider._pending) == 0
    assert provider.breaker is not None and provider.breaker.state == "ok"
    provider.on_memory_write("remove", "user", "Owns a bicycle")  # again: listed, no DELETE
    provider.on_session_end([])
    assert len(fake.calls("DELETE")) == 2


def test_memory_target_and_empty_removals_are_not_mirrored(
    fake: FakeHoncho, make_provider: MakeProvider
) -> None:
    provider = make_provider(settings={"dialectic_cadence": 0, "recall_mode": "tools"})
    provider.on_memory_write("remove", "memory", "Project uses uv")
    provider.on_memory_write("remove", "user", "   ")
    provider.on_memory_write("replace", "user", "same", {"previous_content": "same"})
    provider.on_session_end([])
    assert not fake.calls(path=r"/conclusions")


@pytest.mark.parametrize("damage", ["garbage", "wrong shape", "symlink", "directory"])
def test_a_damaged_index_falls_back_to_listing(
    fake: FakeHoncho, make_provider: MakeProvider, home: Path, tmp_path: Path, damage: str
) -> None:
    path = index_path(home)
    path.parent.mkdir(parents=True)
    outside = tmp_path / "outside.json"
    outside.write_text('{"version": 1, "rows": {}}', encoding="utf-8")
    if damage == "garbage":
        path.write_bytes(b"\xff{not json")
    elif damage == "wrong shape":
        path.write_text('["rows"]', encoding="utf-8")
    elif damage == "symlink":
        path.symlink_to(outside)
    else:
        path.mkdir()
    settings = {"dialectic_cadence": 0, "recall_mode": "tools"}
    first = make_provider(settings=settings)
    first.on_memory_write("add", "user", "Allergic to peanuts")
    first.on_memory_write("add", "user", "Plays the oboe")
    first.on_session_end([])
    first.on_memory_write("remove", "user", "Plays the oboe")  # this process knows the id
    first.on_session_end([])
    assert contents(fake) == ["Allergic to peanuts"]
    assert not fake.calls("POST", r"/conclusions/list$")
    first.shutdown()
    second = make_provider(settings=settings)  # a restart: the id was never on disk
    second.on_memory_write("remove", "user", "Allergic to peanuts")
    second.on_session_end([])
    assert fake.conclusions == []
    assert fake.calls("POST", r"/conclusions/list$")
    assert outside.read_text(encoding="utf-8") == '{"version": 1, "rows": {}}'
    assert path.is_symlink() or damage != "symlink"


def test_a_background_review_add_reaches_honcho_its_staged_remove_does_not(
    fake: FakeHoncho, start: Start
) -> None:
    """The review's add becomes a conclusion like a live add; its remove is only a
    proposal, so the conclusion it would delete stays."""
    from hermes_memory_review import ModelReply, ToolCall

    manager = start(fake)
    memory(manager, action="add", content="Drinks oolong")
    settle(manager)
    rounds = [
        [ToolCall("memory", {"action": "add", "target": "user", "content": "偏好制表符缩进"})],
        [ToolCall("memory", {"action": "remove", "target": "user", "old_text": "oolong"})],
    ]

    def model(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        return ModelReply("", rounds.pop(0)) if rounds else ModelReply("Nothing to save.")

    conversation = [{"role": "user", "content": "我喜欢制表符"}]
    result = manager.run_review(model, conversation, background=False).result
    assert result.status == "completed" and len(result.saved) == 1 and len(result.staged) == 1
    settle(manager)
    assert contents(fake) == ["Drinks oolong", "偏好制表符缩进"]
    assert not fake.calls("DELETE")
