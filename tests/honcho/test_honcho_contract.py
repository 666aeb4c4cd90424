"""Public contract of the Honcho adapter (issue 6): tool names and parameters, the environment
variables it reads, and the `get_config_schema()` field vocabulary shared with Hermes
(`reference/hermes-memory-behaviour.md` §6: type is text / integer / number / boolean)."""

from __future__ import annotations

from hermes_memory_honcho import HonchoProvider

SCHEMA_TYPES = {"text", "integer", "number", "boolean"}


def test_tool_names_and_required_parameters():
    tools = {t["name"]: t["parameters"] for t in HonchoProvider().get_tool_schemas()}
    assert list(tools) == [
        "honcho_profile",
        "honcho_search",
        "honcho_reasoning",
        "honcho_context",
        "honcho_conclude",
    ]
    assert tools["honcho_search"]["required"] == ["query"]
    assert tools["honcho_reasoning"]["required"] == ["query"]
    assert set(tools["honcho_conclude"]["properties"]) >= {"conclusion", "delete_id", "peer"}


def test_config_schema_env_vars():
    env = {f["key"]: f.get("env_var") for f in HonchoProvider().get_config_schema()}
    assert env["api_key"] == "HONCHO_API_KEY"
    assert env["base_url"] == "HONCHO_BASE_URL"
    assert env["environment"] == "HONCHO_ENVIRONMENT"
    assert env["timeout"] == "HONCHO_TIMEOUT"


def test_config_schema_types_use_the_shared_vocabulary():
    schema = {f["key"]: f for f in HonchoProvider().get_config_schema()}
    assert {f["type"] for f in schema.values()} <= SCHEMA_TYPES
    assert schema["api_key"]["type"] == "text"
    assert schema["workspace"]["type"] == "text"
    assert schema["timeout"]["type"] == "number"
    assert schema["context_tokens"]["type"] == "integer"
    assert schema["observe_me"]["type"] == "boolean"
