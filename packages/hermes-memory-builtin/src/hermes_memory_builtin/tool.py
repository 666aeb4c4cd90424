"""The ``memory`` tool: its JSON schema and the dispatcher that turns arguments into store calls.

``memory_tool(args, store)`` always returns one JSON string and never raises for bad input;
failures carry ``"success": false``. The schema keeps every combinator keyword (``allOf``,
``anyOf``, ``oneOf``, ``enum``, ``not``) out of the top level of ``parameters``, because strict
tool-calling backends reject those with a non-retryable error; only ``target`` is required, so
clients that drop optional fields still reach the dispatcher and get an actionable answer.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from hermes_memory_builtin.format import TARGET_FILES, char_count, format_count_usage
from hermes_memory_builtin.store import MemoryStore
from hermes_memory_core.toolresult import tool_result

__all__ = ["MEMORY_SCHEMA", "memory_schema", "memory_tool"]

logger = logging.getLogger(__name__)

_TARGETS_PARAGRAPH = (
    "TARGETS: 'user' = who the user is (name, role, preferences, communication style, "
    "corrections they gave you). 'memory' = your own notes (environment facts, project "
    "conventions, tool quirks, lessons learned)."
)

_DESCRIPTION = (
    "Save durable facts to persistent memory that is shown to you at the start of every "
    "future session. Only save what will still matter in other sessions; skip trivial "
    "information, task progress, logs and TODOs (past conversations are searchable with "
    "session_search), and put reusable step-by-step procedures in a skill instead.\n\n"
    "Make all changes in ONE call: pass 'operations' (a list of add/replace/remove steps) — "
    "the batch is applied atomically and the size budget is checked only on the final "
    "result. For a single change use 'action' with 'content' and/or 'old_text'. "
    "'replace' overwrites the WHOLE entry identified by old_text with content; 'remove' "
    "deletes the entry identified by old_text (a short unique substring of it). When memory "
    "is full, reissue one batch that removes or shortens entries and adds the new one.\n\n"
    f"{_TARGETS_PARAGRAPH}"
)

_OPERATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["add", "replace", "remove"]},
        "content": {
            "type": "string",
            "description": "Entry text for add; the COMPLETE new entry for replace.",
        },
        "new_text": {"type": "string", "description": "Alias of content."},
        "old_text": {
            "type": "string",
            "description": "For replace/remove: a short unique substring of the entry.",
        },
    },
    "required": ["action"],
}

#: The OpenAI function schema of the ``memory`` tool (both targets enabled).
MEMORY_SCHEMA: dict[str, Any] = {
    "name": "memory",
    "description": _DESCRIPTION,
    "parameters": {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["add", "replace", "remove"],
                "description": "Single-change shape. Omit when using 'operations'.",
            },
            "target": {
                "type": "string",
                "enum": ["memory", "user"],
                "description": "'memory' for your notes, 'user' for the user profile.",
            },
            "content": {
                "type": "string",
                "description": (
                    "Required for add and replace. For replace it is the COMPLETE new entry."
                ),
            },
            "old_text": {
                "type": "string",
                "description": (
                    "REQUIRED for 'replace' and 'remove': a short unique substring that "
                    "identifies the entry (it is not spliced)."
                ),
            },
            "new_text": {
                "type": "string",
                "description": "Alias of content; content wins when both are given.",
            },
            "operations": {
                "type": "array",
                "description": (
                    "Batch of changes applied atomically, budget checked on the final result."
                ),
                "items": _OPERATION_SCHEMA,
            },
        },
        "required": ["target"],
    },
}


def memory_schema(targets: tuple[str, ...] | list[str] = ("memory", "user")) -> dict[str, Any]:
    """The ``memory`` schema narrowed to the enabled ``targets``.

    With both targets this equals `MEMORY_SCHEMA`. With one, the ``target`` enum holds only
    that value and the description's TARGETS paragraph names the single target.
    """
    enabled = [t for t in ("memory", "user") if t in targets]
    schema = copy.deepcopy(MEMORY_SCHEMA)
    if len(enabled) != 1:
        return schema
    only = enabled[0]
    schema["parameters"]["properties"]["target"]["enum"] = [only]
    if only == "memory":
        sentence = (
            "TARGET: only 'memory' is enabled — save your own notes (environment facts, "
            "project conventions, tool quirks, lessons learned); the user profile is off."
        )
    else:
        sentence = (
            "TARGET: only 'user' is enabled — save who the user is (name, role, preferences, "
            "communication style, corrections); your own notes store is off."
        )
    schema["description"] = schema["description"].replace(_TARGETS_PARAGRAPH, sentence)
    return schema


def _text_arg(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def _fail(message: str, **extra: Any) -> str:
    return tool_result({"success": False, "error": message, **extra})


def memory_tool(args: dict[str, Any] | None, store: MemoryStore | None) -> str:
    """Run one ``memory`` tool call against ``store`` and return the JSON answer.

    ``args`` holds ``target`` and either ``action`` (+ ``content``/``new_text``/``old_text``)
    or ``operations``. The answer is the store's result dict, serialised. An unexpected
    internal error is logged and answered as a failure, never raised to the caller.
    """
    try:
        return _dispatch(args, store)
    except Exception as exc:
        logger.exception("memory tool failed")
        return _fail(f"Memory tool failed unexpectedly: {exc}. Nothing further was changed.")


def _dispatch(args: dict[str, Any] | None, store: MemoryStore | None) -> str:
    if store is None:
        return _fail("Memory is not available. It may be disabled in config or this environment.")
    if not isinstance(args, dict):
        args = {}
    content = _text_arg(args.get("content"))
    if content is None:
        content = _text_arg(args.get("new_text"))
    old_text = _text_arg(args.get("old_text"))
    target = args.get("target")
    if target is None:
        target = "memory"
    if not isinstance(target, str) or target not in TARGET_FILES:
        return _fail(f"Invalid memory target '{target}'. Use 'memory' or 'user'.")
    if not store.is_enabled(target):
        return _fail(
            f"Built-in {TARGET_FILES[target]} writes are disabled in memory config.",
            target=target,
        )
    operations = args.get("operations")
    if operations:
        if not isinstance(operations, list):
            return _fail("operations must be a list of {action, content?, old_text?} objects.")
        return tool_result(store.apply_batch(target, operations))
    action = args.get("action")
    if action is None or action == "":
        return _fail(
            "Missing required parameter: provide either 'action' (add, replace or remove, "
            "with content/old_text) or 'operations' (a list of {action, content?, old_text?} "
            "objects)."
        )
    if action not in ("add", "replace", "remove"):
        return _fail(f"Unknown action '{action}'. Use: add, replace, remove")
    if action == "add":
        if not content:
            return _fail("Content is required for 'add' action.")
        return tool_result(store.add(target, content))
    if not old_text:
        entries = store.visible_entries(target)
        message = (
            f"'{action}' needs old_text -- a short unique substring of the entry to {action}. "
            "None was provided. Reissue the "
            f"{action} with old_text set to part of one of the current_entries below."
        )
        if action == "replace":
            message += (
                " For 'replace', content is the COMPLETE new entry -- the whole matched entry "
                "is overwritten, not just the old_text span."
            )
        return _fail(
            message,
            current_entries=entries,
            usage=format_count_usage(char_count(store.entries(target)), store.limit(target)),
        )
    if action == "replace":
        if not content:
            return _fail("content is required for 'replace' action.")
        return tool_result(store.replace(target, old_text, content))
    return tool_result(store.remove(target, old_text))
