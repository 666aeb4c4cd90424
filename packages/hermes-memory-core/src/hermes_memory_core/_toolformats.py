"""Convert `MemoryManager.get_all_tool_schemas` output to what LLM APIs expect.

The manager returns bare function schemas, ``{"name", "description", "parameters"}`` with
``parameters`` a JSON Schema object. Chat APIs wrap them differently:

- OpenAI (Chat Completions, and every OpenAI-compatible server):
  ``{"type": "function", "function": {"name", "description", "parameters"}}``
- Anthropic (Messages API): ``{"name", "description", "input_schema"}``

Example::

    tools = to_openai_tools(manager.get_all_tool_schemas())
    response = client.chat.completions.create(model=..., messages=..., tools=tools)

Both converters copy their input (the results can be changed freely), accept schemas that
are already wrapped for OpenAI, and raise `ValueError` naming the offending entry for a
schema without a name.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["to_anthropic_tools", "to_openai_tools"]

_EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


def _function(schema: Mapping[str, Any], index: int) -> dict[str, Any]:
    if not isinstance(schema, Mapping):
        raise ValueError(f"tool schema #{index} is a {type(schema).__name__}, not a mapping")
    if schema.get("type") == "function" and isinstance(schema.get("function"), Mapping):
        schema = schema["function"]
    name = schema.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"tool schema #{index} has no 'name'")
    parameters = schema.get("parameters", schema.get("input_schema"))
    if not isinstance(parameters, Mapping):
        parameters = _EMPTY_PARAMETERS
    description = schema.get("description")
    return {
        "name": name,
        "description": description if isinstance(description, str) else "",
        "parameters": copy.deepcopy(dict(parameters)),
    }


def to_openai_tools(schemas: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI ``tools=`` entries: ``{"type": "function", "function": {...}}`` per schema.

    :param schemas: `MemoryManager.get_all_tool_schemas` (or any function schemas).
    :raises ValueError: an entry is not a mapping or has no name.
    """
    return [
        {"type": "function", "function": _function(schema, index)}
        for index, schema in enumerate(schemas)
    ]


def to_anthropic_tools(schemas: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic ``tools=`` entries: ``{"name", "description", "input_schema"}`` per schema.

    :param schemas: `MemoryManager.get_all_tool_schemas` (or any function schemas).
    :raises ValueError: an entry is not a mapping or has no name.
    """
    tools = []
    for index, schema in enumerate(schemas):
        function = _function(schema, index)
        tools.append(
            {
                "name": function["name"],
                "description": function["description"],
                "input_schema": function["parameters"],
            }
        )
    return tools
