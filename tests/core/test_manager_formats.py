"""Helpers for embedding hosts: tool schema converters and Hermes-style session ids."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest

from hermes_memory_core import (
    MemoryManager,
    MemoryProvider,
    new_session_id,
    to_anthropic_tools,
    to_openai_tools,
)
from hermes_memory_core._ids import SESSION_ID_PATTERN

SCHEMAS: list[dict[str, Any]] = [
    {
        "name": "memory",
        "description": "Save durable facts — 记住用户的偏好",
        "parameters": {
            "type": "object",
            "properties": {"target": {"type": "string", "enum": ["memory", "user"]}},
            "required": ["target"],
        },
    },
    {"type": "function", "function": {"name": "wrapped", "description": "already wrapped"}},
]


def test_openai_format():
    tools = to_openai_tools(SCHEMAS)
    assert tools[0] == {"type": "function", "function": SCHEMAS[0]}
    assert tools[1] == {
        "type": "function",
        "function": {
            "name": "wrapped",
            "description": "already wrapped",
            "parameters": {"type": "object", "properties": {}},
        },
    }
    tools[0]["function"]["parameters"]["required"].append("x")
    assert SCHEMAS[0]["parameters"]["required"] == ["target"], "input is not shared"
    json.dumps(tools)


def test_anthropic_format():
    tools = to_anthropic_tools(SCHEMAS)
    assert tools[0] == {
        "name": "memory",
        "description": SCHEMAS[0]["description"],
        "input_schema": SCHEMAS[0]["parameters"],
    }
    assert tools[1]["input_schema"] == {"type": "object", "properties": {}}
    assert to_openai_tools(tools)[0]["function"]["parameters"] == SCHEMAS[0]["parameters"]


@pytest.mark.parametrize("bad", [{"description": "nameless"}, "memory", {"name": ""}])
def test_bad_schema_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="tool schema #1"):
        to_openai_tools([SCHEMAS[0], bad])
    with pytest.raises(ValueError, match="tool schema #1"):
        to_anthropic_tools([SCHEMAS[0], bad])


def test_converters_take_the_managers_schemas():
    class Tools(MemoryProvider):
        name = "tools"

        def is_available(self) -> bool:
            return True

        def initialize(self, session_id: str, **kwargs: Any) -> None:
            pass

        def get_tool_schemas(self) -> list[dict[str, Any]]:
            return SCHEMAS

    manager = MemoryManager()
    manager.add_provider(Tools())
    names = [t["function"]["name"] for t in to_openai_tools(manager.get_all_tool_schemas())]
    assert names == ["memory", "wrapped"]
    assert [t["name"] for t in to_anthropic_tools(manager.get_all_tool_schemas())] == names
    manager.shutdown_all()


def test_new_session_id_has_the_hermes_shape():
    ids = {new_session_id() for _ in range(50)}
    assert len(ids) == 50
    assert all(SESSION_ID_PATTERN.match(i) for i in ids)
    fixed = new_session_id(datetime(2026, 12, 1, 9, 5, 7))
    assert fixed.startswith("20261201_090507_") and len(fixed) == 22
