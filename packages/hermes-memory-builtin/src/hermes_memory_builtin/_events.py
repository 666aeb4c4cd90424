"""The writes one ``memory`` tool answer stands for, as typed `MemoryWrite` events.

The builtin tier reads its own answer (it knows its JSON) and emits one event per entry it
added, replaced or removed; the manager forwards them to the external provider. A failed
call, and a write staged for a person's review (``"staged"`` in the answer), emit nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hermes_memory_core import MemoryWrite

__all__ = ["tool_writes"]


def tool_writes(result: str, args: Mapping[str, Any]) -> list[MemoryWrite]:
    """The `MemoryWrite` events of a successful ``memory`` tool call (``[]`` otherwise)."""
    try:
        payload = json.loads(result)
    except ValueError:
        return []
    if not isinstance(payload, dict) or payload.get("success") is not True:
        return []
    target = str(payload.get("target") or args.get("target") or "memory")
    operations = args.get("operations")
    if payload.get("staged"):
        # A background-review batch saves its additions at once and stages only its
        # replace/remove steps: the saved additions are real writes and are mirrored.
        saved = payload.get("additions_saved")
        if not (payload.get("proposal_staged") and isinstance(operations, list)):
            return []
        if not (isinstance(saved, int) and saved > 0):
            return []
        adds = [op for op in operations if isinstance(op, Mapping) and op.get("action") == "add"]
        return [w for op in adds for w in _one(op, target, None)] if len(adds) == saved else []
    if isinstance(operations, list) and operations:
        replaced = _index_map(payload.get("replaced_entries"))
        removed = _index_map(payload.get("removed_entries"))
        writes: list[MemoryWrite] = []
        for index, op in enumerate(operations, start=1):
            if isinstance(op, Mapping):
                writes.extend(_one(op, target, replaced.get(index) or removed.get(index)))
        return writes
    previous = payload.get("replaced_entry") or payload.get("removed_entry")
    return _one(args, target, previous if isinstance(previous, str) else None)


def _one(op: Mapping[str, Any], target: str, previous: str | None) -> list[MemoryWrite]:
    action = op.get("action")
    if action not in ("add", "replace", "remove"):
        return []
    content = op.get("content")
    if content is None:
        content = op.get("new_text")
    metadata: dict[str, Any] = {}
    if op.get("old_text") is not None:
        metadata["old_text"] = op.get("old_text")
    if previous is not None:
        metadata["previous_content"] = previous
    if action == "remove":
        content = previous if previous is not None else op.get("old_text")
    if not isinstance(content, str):
        return []
    return [MemoryWrite(action, target, content.strip(), metadata)]


def _index_map(value: Any) -> dict[int, str]:
    if not isinstance(value, Mapping):
        return {}
    result = {}
    for key, text in value.items():
        try:
            result[int(key)] = str(text)
        except (TypeError, ValueError):
            continue
    return result
