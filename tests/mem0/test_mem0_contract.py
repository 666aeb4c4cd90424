"""Public contract of the mem0 adapter (issue 6): tool names and parameters, the environment
variables it reads, and the `get_config_schema()` field vocabulary shared with Hermes
(`reference/hermes-memory-behaviour.md` §6: type is text / integer / number / boolean)."""

from __future__ import annotations

from hermes_memory_mem0 import Mem0Provider

SCHEMA_TYPES = {"text", "integer", "number", "boolean", "object"}


def test_tool_names_and_required_parameters():
    tools = {t["name"]: t["parameters"] for t in Mem0Provider().get_tool_schemas()}
    assert list(tools) == ["mem0_search", "mem0_add", "mem0_update", "mem0_delete"]
    assert tools["mem0_search"]["required"] == ["query"]
    assert tools["mem0_add"]["required"] == ["content"]
    assert sorted(tools["mem0_update"]["required"]) == ["memory_id", "text"]
    assert tools["mem0_delete"]["required"] == ["memory_id"]


def test_config_schema_env_vars():
    env = {f["key"]: f.get("env_var") for f in Mem0Provider().get_config_schema()}
    assert env["api_key"] == "MEM0_API_KEY"
    assert env["host"] == "MEM0_HOST"
    assert env["mode"] == "MEM0_MODE"
    assert env["user_id"] == "MEM0_USER_ID"
    assert env["agent_id"] == "MEM0_AGENT_ID"


def test_config_schema_types_use_the_shared_vocabulary():
    schema = {f["key"]: f for f in Mem0Provider().get_config_schema()}
    assert {f["type"] for f in schema.values()} <= SCHEMA_TYPES
    assert schema["api_key"]["type"] == "text"
    assert schema["mode"]["type"] == "text"
    assert schema["recall_top_k"]["type"] == "integer"
    assert schema["timeout"]["type"] == "number"
    assert schema["rerank"]["type"] == "boolean"
    assert schema["oss"]["type"] == "object"
    # a field's declared type agrees with its default value
    python_type = {"text": str, "integer": int, "number": float, "boolean": bool}
    for key, field in schema.items():
        if field.get("default") is not None and field["type"] in python_type:
            assert type(field["default"]) is python_type[field["type"]], key
