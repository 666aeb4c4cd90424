"""The memory tool: schema shape, dispatcher order and messages, the per-turn failure cap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from builtin_helpers import call

from hermes_memory_builtin import MEMORY_SCHEMA, MemoryStore, memory_schema, memory_tool

TERMINAL = (
    "Memory consolidation failed {k} times this turn. Stop retrying memory calls — leave "
    "memory unchanged for now and continue with your reply to the user. The fact can be saved "
    "in a later turn."
)


def test_schema_shape() -> None:
    params = MEMORY_SCHEMA["parameters"]
    assert MEMORY_SCHEMA["name"] == "memory"
    assert params["type"] == "object"
    assert params["required"] == ["target"]
    assert set(params["properties"]) == {
        "action",
        "target",
        "content",
        "old_text",
        "new_text",
        "operations",
    }
    assert params["properties"]["target"]["enum"] == ["memory", "user"]
    assert params["properties"]["action"]["enum"] == ["add", "replace", "remove", "pending"]
    assert params["properties"]["operations"]["type"] == "array"
    assert params["properties"]["operations"]["items"]["required"] == ["action"]
    for keyword in ("allOf", "anyOf", "oneOf", "enum", "not"):
        assert keyword not in params
    json.dumps(MEMORY_SCHEMA)


def test_schema_narrowing() -> None:
    assert memory_schema(("memory", "user")) == MEMORY_SCHEMA
    only_user = memory_schema(["user"])
    assert only_user["parameters"]["properties"]["target"]["enum"] == ["user"]
    assert "TARGET: only 'user' is enabled" in only_user["description"]
    assert "TARGETS:" not in only_user["description"]
    only_memory = memory_schema(("memory",))
    assert "TARGET: only 'memory' is enabled" in only_memory["description"]
    assert MEMORY_SCHEMA["parameters"]["properties"]["target"]["enum"] == ["memory", "user"]


def test_no_store() -> None:
    assert call(None, target="memory", action="add", content="x") == {
        "error": "Memory is not available. It may be disabled in config or this environment.",
        "success": False,
    }


def test_target_default_and_invalid(store: MemoryStore) -> None:
    assert call(store, action="add", content="defaults to memory")["target"] == "memory"
    assert store.entries("memory") == ["defaults to memory"]
    assert call(store, target="notes", action="add", content="x") == {
        "success": False,
        "error": "Invalid memory target 'notes'. Use 'memory' or 'user'.",
    }


def test_disabled_target(mem_dir: Path) -> None:
    store = MemoryStore(mem_dir, user_profile_enabled=False)
    assert call(store, target="user", action="add", content="x") == {
        "success": False,
        "error": "Built-in USER.md writes are disabled in memory config.",
        "target": "user",
    }
    store.memory_enabled = False
    assert call(store, target="memory", action="add", content="x")["error"] == (
        "Built-in MEMORY.md writes are disabled in memory config."
    )
    assert not (mem_dir / "USER.md").exists()


def test_missing_action_and_operations(store: MemoryStore) -> None:
    for args in ({"target": "memory"}, {"target": "memory", "action": None, "operations": None}):
        result = json.loads(memory_tool(args, store))
        assert result["success"] is False
        assert "Missing required parameter" in result["error"]
        assert "action" in result["error"] and "operations" in result["error"]


def test_unknown_action_and_bad_operations(store: MemoryStore) -> None:
    assert call(store, target="memory", action="list")["error"] == (
        "Unknown action 'list'. Use: add, replace, remove"
    )
    assert call(store, target="memory", operations="add x")["error"] == (
        "operations must be a list of {action, content?, old_text?} objects."
    )


def test_single_op_validation(store: MemoryStore) -> None:
    store.add("memory", "existing entry")
    assert call(store, target="memory", action="add") == {
        "success": False,
        "error": "Content is required for 'add' action.",
    }
    replace = call(store, target="memory", action="replace", content="new")
    assert replace == {
        "success": False,
        "error": "'replace' needs old_text -- a short unique substring of the entry to replace. "
        "None was provided. Reissue the replace with old_text set to part of one of the "
        "current_entries below. For 'replace', content is the COMPLETE new entry -- the whole "
        "matched entry is overwritten, not just the old_text span.",
        "current_entries": ["existing entry"],
        "usage": "14/2,200",
    }
    remove = call(store, target="memory", action="remove", old_text="")
    assert remove["error"].endswith("part of one of the current_entries below.")
    assert call(store, target="memory", action="replace", old_text="existing") == {
        "success": False,
        "error": "content is required for 'replace' action.",
    }


def test_new_text_alias_and_content_wins(store: MemoryStore) -> None:
    call(store, target="user", action="add", new_text="from new_text")
    call(store, target="user", action="replace", old_text="new_text", content="c", new_text="n")
    assert store.entries("user") == ["c"]


def test_tool_batch_and_json_keys(store: MemoryStore) -> None:
    store.add("memory", "first")
    result = call(
        store,
        target="memory",
        operations=[
            {"action": "replace", "old_text": "first", "content": "first, revised"},
            {"action": "add", "content": "second"},
        ],
    )
    assert result["success"] is True
    assert result["replaced_entries"] == {"1": "first"}
    assert "removed_entries" not in result


def test_consolidation_cap(mem_dir: Path) -> None:
    store = MemoryStore(mem_dir, memory_char_limit=20)
    store.add("memory", "x" * 18)
    for _ in range(3):
        result = call(store, target="memory", action="replace", old_text="nothing", content="y")
        assert result["error"].startswith("No entry matched 'nothing'.")
    for k in (4, 5):
        result = call(store, target="memory", action="add", content="another long entry")
        assert result == {"success": False, "done": True, "error": TERMINAL.format(k=k)}
    store.start_turn()
    assert call(store, target="memory", action="add", content="zz")["error"].startswith(
        "Memory at 18/20 chars."
    )


def test_success_resets_cap_and_other_errors_do_not_count(store: MemoryStore) -> None:
    store.add("memory", "alpha one")
    store.add("memory", "alpha two")
    for _ in range(2):
        call(store, target="memory", action="remove", old_text="missing")
    assert store.consolidation_failures == 2
    call(store, target="memory", action="remove", old_text="alpha")  # ambiguous: not counted
    call(store, target="memory", action="add", content="")  # validation: not counted
    assert store.consolidation_failures == 2
    assert call(store, target="memory", action="add", content="beta")["success"]
    assert store.consolidation_failures == 0


@pytest.mark.parametrize("content", [12345, 3.5])
def test_numeric_content_is_text(store: MemoryStore, content: object) -> None:
    result = call(store, target="memory", action="add", content=content)
    assert result["success"] is True
    assert store.entries("memory") == [str(content)]


def test_cjk_round_trip_through_json(store: MemoryStore) -> None:
    raw = memory_tool({"target": "user", "action": "add", "content": "喜欢简洁的回答"}, store)
    assert "喜欢简洁的回答" not in raw  # success answers do not echo entries
    result = json.loads(
        memory_tool({"target": "user", "action": "remove", "old_text": "简洁"}, store)
    )
    assert result["removed_entry"] == "喜欢简洁的回答"


class ExplodingStore(MemoryStore):
    def add(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        raise RuntimeError("disk on fire")


def test_internal_errors_become_failure_answers(mem_dir: Path) -> None:
    result = call(ExplodingStore(mem_dir), target="memory", action="add", content="x")
    assert result["success"] is False
    assert "disk on fire" in result["error"]


def test_blank_strings_reach_the_store_checks(store: MemoryStore) -> None:
    store.add("memory", "entry")
    assert call(store, target="memory", action="add", content="   ")["error"] == (
        "Content cannot be empty."
    )
    assert call(store, target="memory", action="remove", old_text="  ")["error"] == (
        "old_text cannot be empty."
    )
    assert call(store, target="memory", action="replace", old_text="entry", content=" ")[
        "error"
    ] == ("new_content cannot be empty. Use 'remove' to delete entries.")
