"""SupermemoryProvider with the real ``supermemory`` SDK against the loopback fake: what it
sends (captured paths, bodies and headers), session ingest, recall with the profile, the
tools."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from supermemory_fake import Doc, FakeSupermemory

from hermes_memory_core import MemoryManager
from hermes_memory_supermemory import SupermemoryProvider

Make = Callable[..., SupermemoryProvider]
NS = "/ns/hermes"


def adds(fake: FakeSupermemory) -> list[dict[str, Any]]:
    return [s.body for s in fake.seen if s.method == "POST" and s.path.endswith("/document")]


def test_a_session_is_one_document_appended_at_each_ingest_point(
    fake: FakeSupermemory, make: Make
) -> None:
    provider = make(fake.url)
    provider.initialize("sess-1")
    provider.sync_turn("I keep bees in 京都", "Lovely.")
    provider.sync_turn("They are Italian bees", "Noted.")
    assert provider._pending is not None and provider._pending.drain(5)
    assert adds(fake) == []  # buffered until an ingest point
    assert provider.on_pre_compress([{"role": "user", "content": "x"}]) == ""
    assert provider._pending.drain(5)
    provider.sync_turn("Third turn", "ok")
    provider.on_session_end([])
    bodies = adds(fake)
    assert [b["id"] for b in bodies] == ["sess-1", "sess-1"]
    assert bodies[0]["content"] == (
        "User: I keep bees in 京都\nAssistant: Lovely.\n\n"
        "User: They are Italian bees\nAssistant: Noted."
    )
    assert bodies[1]["content"] == "User: Third turn\nAssistant: ok"  # only what is new
    assert bodies[0]["metadata"] == {"source": "hermes-memory", "kind": "conversation"}
    assert bodies[0]["date"].endswith("+00:00")
    assert len(fake.docs) == 1 and fake.docs[0].adds == 2
    first = next(s for s in fake.seen if s.path == f"{NS}/document")
    assert first.headers["Authorization"] == "Bearer sm-test-key"
    assert first.headers["x-sm-source"] == "hermes-memory"
    assert first.headers["User-Agent"].startswith("hermes-memory-supermemory/")


def test_a_reset_sends_the_old_session_to_its_own_document(
    fake: FakeSupermemory, make: Make
) -> None:
    provider = make(fake.url)
    provider.initialize("old")
    provider.sync_turn("before the reset", "ok")
    provider.on_session_switch("new", reset=True)
    provider.sync_turn("after the reset", "ok")
    provider.on_session_end([])
    assert [(b["id"], b["content"].split("\n")[0]) for b in adds(fake)] == [
        ("old", "User: before the reset"),
        ("new", "User: after the reset"),
    ]


def test_a_long_session_is_sent_in_parts_in_order(fake: FakeSupermemory, make: Make) -> None:
    provider = make(fake.url, max_session_chars=1000)
    provider.initialize("long")
    for n in range(30):
        provider.sync_turn(f"turn {n} " + "語" * 40, "ok")
    provider.sync_turn("x" * 2500, "")  # one turn longer than a part
    provider.on_session_end([])
    bodies = adds(fake)
    assert len(bodies) > 3 and all(len(b["content"]) <= 1000 for b in bodies)
    assert {b["id"] for b in bodies} == {"long"}
    sent = "".join(b["content"] for b in bodies)
    assert sent.index("turn 0 ") < sent.index("turn 29 ") < sent.index("x" * 900)
    assert sent.count("x") == 2500  # nothing dropped


def test_curated_adds_are_mirrored_and_removals_are_not(fake: FakeSupermemory, make: Make) -> None:
    provider = make(fake.url)
    provider.initialize("s")
    provider.on_memory_write("add", "user", "Prefers 绿茶")
    provider.on_memory_write("replace", "memory", "Project uses uv")
    provider.on_memory_write("remove", "user", "Old fact")
    provider.on_session_end([])
    assert [(b.get("id"), b["content"], b["metadata"]["kind"]) for b in adds(fake)] == [
        (None, "Prefers 绿茶", "user"),
        (None, "Project uses uv", "memory"),
    ]


def test_subagents_and_auto_capture_off_send_nothing(fake: FakeSupermemory, make: Make) -> None:
    sub = make(fake.url)
    sub.initialize("s", agent_context="subagent")
    sub.sync_turn("secret plan", "ok")
    sub.on_memory_write("add", "user", "likes tea")
    sub.on_session_end([])
    answer = json.loads(sub.handle_tool_call("supermemory_save", {"content": "x"}))
    assert "may not write" in answer["error"]
    off = make(fake.url, auto_capture=False)
    off.initialize("s2")
    off.sync_turn("not captured", "ok")
    off.on_memory_write("add", "user", "not mirrored")
    off.on_session_end([])
    assert adds(fake) == []


def test_recall_brings_the_profile_every_n_turns(fake: FakeSupermemory, make: Make) -> None:
    fake.docs.append(Doc("hermes", "d1", "User keeps bees\nThe bees live in 京都 hives"))
    fake.docs.append(Doc("other", "d2", "bees elsewhere"))
    provider = make(fake.url, profile_every=2)
    provider.initialize("s", curated_entries=["User keeps bees."])
    first = provider.prefetch("bees")
    assert first == (
        "## Supermemory profile\n- Lives in 京都\n- Planning a trip to Oslo\n\n"
        "## Supermemory memory\n- The bees live in 京都 hives"
    )
    status = provider.recall_status()
    assert status is not None and status.count == 3
    search = next(s for s in fake.seen if s.path == f"{NS}/search")
    assert search.body == {"query": "bees", "limit": 5, "searchMode": "memories"}
    assert provider.prefetch("hives") == "## Supermemory memory\n- The bees live in 京都 hives"
    assert provider.prefetch("京都").startswith("## Supermemory profile")  # turn 3
    assert fake.paths().count(f"POST {NS}/profile") == 2


def test_a_repeated_query_is_answered_from_the_cache(fake: FakeSupermemory, make: Make) -> None:
    fake.docs.append(Doc("hermes", "d1", "Momo is the dog"))
    provider = make(fake.url, profile_every=0)
    provider.initialize("s")
    assert provider.prefetch("Momo") == "## Supermemory memory\n- Momo is the dog"
    before = len(fake.seen)
    assert provider.prefetch("Momo") == "## Supermemory memory\n- Momo is the dog"
    assert len(fake.seen) == before


def test_auto_recall_off_sends_nothing(fake: FakeSupermemory, make: Make) -> None:
    provider = make(fake.url, auto_recall=False)
    provider.initialize("s")
    assert provider.prefetch("bees") == ""
    assert fake.seen == []


def test_the_container_tag_is_the_namespace_with_identity(
    fake: FakeSupermemory, make: Make
) -> None:
    provider = make(fake.url, container_tag="hermes-{identity}")
    provider.initialize("s", user_id="アリス")
    assert provider.namespace == "hermes-アリス"
    json.loads(provider.handle_tool_call("supermemory_save", {"content": "Alice likes 抹茶"}))
    assert fake.seen[-1].path == "/ns/hermes-アリス/document"
    hostile = make(fake.url, container_tag="t-{identity}")
    hostile.initialize("s", user_id="../../admin")
    assert not hostile.active and "container_tag" in hostile._init_error
    assert hostile.prefetch("x") == ""
    assert all("admin" not in s.path for s in fake.seen)


def test_the_four_tools(fake: FakeSupermemory, make: Make) -> None:
    provider = make(fake.url)
    provider.initialize("s")
    saved = json.loads(provider.handle_tool_call("supermemory_save",
                                                 {"content": "Alice prefers 绿茶"}))  # fmt: skip
    assert saved == {"result": "Saved.", "id": "doc1", "container_tag": "hermes"}
    assert fake.seen[-1].body["metadata"] == {"source": "hermes-memory", "kind": "tool"}
    found = json.loads(provider.handle_tool_call("supermemory_search",
                                                 {"query": "绿茶", "limit": 3}))  # fmt: skip
    assert found["count"] == 1 and found["results"][0]["memory"] == "Alice prefers 绿茶"
    assert fake.seen[-1].body["limit"] == 3
    memory_id = found["results"][0]["id"]
    nothing = json.loads(provider.handle_tool_call("supermemory_search", {"query": "kayak"}))
    assert nothing == {"result": "No relevant memories found.", "count": 0}
    profile = json.loads(provider.handle_tool_call("supermemory_profile", {}))
    assert profile == {"static": ["Lives in 京都"], "dynamic": ["Planning a trip to Oslo"],
                       "container_tag": "hermes"}  # fmt: skip
    gone = json.loads(provider.handle_tool_call("supermemory_forget", {"id": memory_id}))
    assert gone == {"forgotten": 1, "errors": []}
    assert fake.seen[-1].method == "DELETE" and fake.seen[-1].body == {"ids": [memory_id]}
    assert json.loads(provider.handle_tool_call("supermemory_search", {"query": "绿茶"}))[
        "count"] == 0  # fmt: skip


def test_forget_by_description_with_preview(fake: FakeSupermemory, make: Make) -> None:
    fake.docs.append(Doc("hermes", "d1", "Works at Acme\nLikes jazz"))
    provider = make(fake.url)
    provider.initialize("s")
    preview = json.loads(provider.handle_tool_call("supermemory_forget",
                                                   {"query": "Acme", "preview": True}))  # fmt: skip
    assert preview == {"would_forget": 1, "matches": [{"id": "m0.0", "memory": "Works at Acme"}]}
    assert fake.seen[-1].path == f"{NS}/memories/semantic"
    assert fake.seen[-1].body == {"query": "Acme", "dryRun": True}
    assert fake.forgotten == set()
    done = json.loads(provider.handle_tool_call("supermemory_forget", {"query": "Acme"}))
    assert done["forgotten"] == 1 and fake.forgotten == {"m0.0"}


def test_bad_tool_arguments_are_clear_errors(fake: FakeSupermemory, make: Make) -> None:
    provider = make(fake.url)
    provider.initialize("s")
    cases: list[tuple[str, Any, str]] = [
        ("supermemory_search", {"query": "  \u200b\u2060 "}, "'query' is required"),
        ("supermemory_search", {"query": "x", "limit": "many"}, "'limit' must be"),
        ("supermemory_save", {"content": 42}, "'content' is required"),
        ("supermemory_save", ["not", "an", "object"], "must be a JSON object"),
        ("supermemory_forget", {}, "exactly one of 'id' or 'query'"),
        ("supermemory_forget", {"id": "m1", "query": "x"}, "exactly one of"),
        ("supermemory_forget", {"id": "\u200b"}, "exactly one of"),
        ("supermemory_forget", {"query": "x", "preview": "yes"}, "'preview' must be"),
        ("supermemory_delete", {}, "Unknown tool"),
    ]
    for tool, args, expected in cases:
        answer = json.loads(provider.handle_tool_call(tool, args))
        assert expected in answer["error"], (tool, answer)
    assert fake.seen == []


def test_a_whole_session_through_the_manager(
    fake: FakeSupermemory, make: Make, hermes_home: Path
) -> None:
    manager = MemoryManager(hermes_home=hermes_home)
    assert manager.add_provider(make(fake.url, profile_every=0))
    manager.initialize_all("s1")
    manager.sync_all("My dog is called Momo", "Nice name.")
    assert manager.flush_pending(5)
    manager.on_session_end([])
    assert "Momo" in manager.prefetch_all("what is my dog called Momo")
    found = json.loads(manager.handle_tool_call("supermemory_search", {"query": "Momo"}))
    assert found["count"] == 1
    manager.shutdown_all()
