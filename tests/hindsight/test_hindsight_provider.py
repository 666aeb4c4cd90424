"""HindsightProvider with the real ``hindsight-client`` against the loopback fake: what it
sends (captured requests), retain batching per session, recall/reflect prefetch, the tools."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hindsight_fake import Doc, FakeHindsight

from hermes_memory_core import MemoryManager
from hermes_memory_hindsight import HindsightProvider

Make = Callable[..., HindsightProvider]
BANK = "/v1/default/banks/hermes"


def retains(fake: FakeHindsight) -> list[dict[str, Any]]:
    return [item for s in fake.seen if s.path == f"{BANK}/memories" for item in s.body["items"]]


def test_turns_are_retained_every_n_into_one_document_per_session(
    fake: FakeHindsight, make: Make
) -> None:
    provider = make(fake.url, retain_every=2, api_key="hs-secret")
    provider.initialize("sess-1")
    provider.sync_turn("I keep bees in 京都", "Lovely.")
    assert provider._pending is not None and provider._pending.drain(5)
    assert retains(fake) == []  # one turn buffered, N=2
    provider.sync_turn("They are Italian bees", "Noted.")
    assert provider._pending.drain(5)
    provider.sync_turn("Third turn", "ok")  # a partial batch: sent at session end
    provider.on_session_end([])
    items = retains(fake)
    assert [i["document_id"] for i in items] == ["sess-1", "sess-1"]
    assert [i["update_mode"] for i in items] == ["append", "append"]
    assert items[0]["content"] == (
        "User: I keep bees in 京都\nAssistant: Lovely.\n\n"
        "User: They are Italian bees\nAssistant: Noted."
    )
    assert items[1]["content"] == "User: Third turn\nAssistant: ok"
    assert fake.docs[0].content.endswith("User: Third turn\nAssistant: ok")
    # the version probe happened once, before the first retain; auth and client headers
    assert fake.paths()[0] == "GET /version"
    assert fake.paths().count("GET /version") == 1
    first = next(s for s in fake.seen if s.path == f"{BANK}/memories")
    assert first.headers["Authorization"] == "Bearer hs-secret"
    assert first.headers["User-Agent"].startswith("hermes-memory-hindsight/")
    assert first.body["async"] is False


def test_a_server_without_append_gets_one_document_per_batch(
    fake: FakeHindsight, make: Make
) -> None:
    fake.version = None  # an old server: GET /version is 404
    provider = make(fake.url)
    provider.initialize("s")
    provider.sync_turn("one", "a")
    provider.sync_turn("two", "b")
    provider.on_session_end([])
    items = retains(fake)
    assert [i["document_id"] for i in items] == ["s.0", "s.1"]
    assert all(i.get("update_mode") is None for i in items)
    assert len(fake.docs) == 2  # nothing replaced


def test_a_session_switch_sends_the_old_sessions_buffer_to_its_own_document(
    fake: FakeHindsight, make: Make
) -> None:
    provider = make(fake.url, retain_every=5)
    provider.initialize("old")
    provider.sync_turn("before the switch", "ok")
    provider.on_session_switch("new", reset=True)
    provider.sync_turn("after the switch", "ok")
    provider.on_session_end([])
    assert [(i["document_id"], i["content"].split("\n")[0]) for i in retains(fake)] == [
        ("old", "User: before the switch"),
        ("new", "User: after the switch"),
    ]


def test_subagents_do_not_retain(fake: FakeHindsight, make: Make) -> None:
    provider = make(fake.url)
    provider.initialize("s", agent_context="subagent")
    provider.sync_turn("secret plan", "ok")
    provider.on_memory_write("add", "user", "likes tea")
    provider.on_session_end([])
    assert retains(fake) == []
    answer = json.loads(provider.handle_tool_call("hindsight_retain", {"content": "x"}))
    assert "may not write" in answer["error"]


def test_recall_prefetch_leaves_out_curated_facts(fake: FakeHindsight, make: Make) -> None:
    fake.docs.append(
        Doc("hermes", None, "User keeps bees\nThe bees live in 京都 hives", None, None)
    )
    fake.docs.append(Doc("hermes", None, "Beeswax candles were a gift", None, None))
    fake.docs.append(Doc("other-bank", None, "bees elsewhere", None, None))
    provider = make(fake.url)
    provider.initialize("s", curated_entries=["User keeps bees."])
    provider.on_memory_write("add", "user", "Beeswax candles were a gift.")  # now curated too
    block = provider.prefetch("bees")
    assert block == "## Hindsight memory\n- The bees live in 京都 hives"
    status = provider.recall_status()
    assert status is not None and status.count == 1
    recall = next(s for s in fake.seen if s.path == f"{BANK}/memories/recall")
    assert recall.body["query"] == "bees" and recall.body["budget"] == "mid"
    # a repeated query within the freshness window is answered from the cache
    before = len(fake.seen)
    assert provider.prefetch("bees") == block
    assert len(fake.seen) == before


def test_reflect_prefetch(fake: FakeHindsight, make: Make) -> None:
    provider = make(fake.url, prefetch_method="reflect", budget="low")
    provider.initialize("s")
    assert provider.prefetch("what do you know?") == "## Hindsight reflection\nThe user keeps bees."
    reflect = next(s for s in fake.seen if s.path == f"{BANK}/reflect")
    assert reflect.body["budget"] == "low"


def test_prefetch_off_sends_nothing(fake: FakeHindsight, make: Make) -> None:
    provider = make(fake.url, prefetch_method="off")
    provider.initialize("s")
    assert provider.prefetch("bees") == ""
    assert fake.seen == []


def test_the_three_tools(fake: FakeHindsight, make: Make) -> None:
    provider = make(fake.url, bank_id="team:alice")
    provider.initialize("s")
    saved = json.loads(provider.handle_tool_call("hindsight_retain",
                                                 {"content": "Alice prefers 绿茶", "context": "tea"}))  # fmt: skip
    assert saved == {"result": "Retained.", "bank_id": "team:alice"}
    sent = next(s for s in fake.seen if s.method == "POST")
    assert sent.path == "/v1/default/banks/team:alice/memories"
    assert sent.body["items"][0]["context"] == "tea"
    assert sent.body["items"][0].get("document_id") is None
    found = json.loads(provider.handle_tool_call("hindsight_recall",
                                                 {"query": "绿茶", "max_results": 1}))  # fmt: skip
    assert found["count"] == 1 and found["results"][0]["text"] == "Alice prefers 绿茶"
    nothing = json.loads(provider.handle_tool_call("hindsight_recall", {"query": "kayak"}))
    assert nothing == {"result": "No relevant memories found.", "count": 0}
    answer = json.loads(provider.handle_tool_call("hindsight_reflect",
                                                  {"query": "tea?", "budget": "high"}))  # fmt: skip
    assert answer == {"answer": "The user keeps bees."}
    assert fake.seen[-1].body["budget"] == "high"


def test_bad_tool_arguments_are_clear_errors(fake: FakeHindsight, make: Make) -> None:
    provider = make(fake.url)
    provider.initialize("s")
    cases: list[tuple[str, Any, str]] = [
        ("hindsight_recall", {"query": "  \u200b "}, "'query' is required"),
        ("hindsight_recall", {"query": "x", "max_results": "many"}, "'max_results' must be"),
        ("hindsight_reflect", {"query": "x", "budget": "huge"}, "'budget' must be one of"),
        ("hindsight_retain", {"content": 42}, "'content' is required"),
        ("hindsight_retain", ["not", "an", "object"], "must be a JSON object"),
        ("hindsight_forget", {}, "Unknown tool"),
    ]
    for tool, args, expected in cases:
        answer = json.loads(provider.handle_tool_call(tool, args))
        assert expected in answer["error"], (tool, answer)
    assert [s for s in fake.seen if s.method == "POST"] == []


def test_a_whole_session_through_the_manager(
    fake: FakeHindsight, make: Make, hermes_home: Path
) -> None:
    manager = MemoryManager(hermes_home=hermes_home)
    assert manager.add_provider(make(fake.url))
    manager.initialize_all("s1")
    manager.sync_all("My dog is called Momo", "Nice name.")
    assert manager.flush_pending(5)
    manager.on_session_end([])  # sends the retain queue (its own worker) within the bound
    assert "Momo" in manager.prefetch_all("what is my dog called")
    found = json.loads(manager.handle_tool_call("hindsight_recall", {"query": "Momo"}))
    assert found["count"] == 1
    manager.shutdown_all()
