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

from hermes_memory_builtin._format import TARGET_FILES, char_count, format_count_usage
from hermes_memory_builtin._pending import (
    BACKGROUND_REVIEW,
    THREAT_REVIEW,
    WRITE_APPROVAL,
    PendingError,
    PendingStore,
)
from hermes_memory_builtin._scan import scan_entries
from hermes_memory_builtin._store import MemoryStore
from hermes_memory_core import tool_result
from hermes_memory_guard import HOLD, scrub_secrets

__all__ = ["MEMORY_SCHEMA", "list_pending", "memory_schema", "memory_tool"]

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
                "enum": ["add", "replace", "remove", "pending"],
                "description": (
                    "Single-change shape. Omit when using 'operations'. 'pending' lists "
                    "changes staged for a person's approval (read-only)."
                ),
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


def memory_tool(
    args: dict[str, Any] | None,
    store: MemoryStore | None,
    *,
    origin: str | None = None,
    write_approval: bool = False,
) -> str:
    """Run one ``memory`` tool call against ``store`` and return the JSON answer.

    ``args`` holds ``target`` and either ``action`` (+ ``content``/``new_text``/``old_text``)
    or ``operations``. The answer is the store's result dict, serialised. An unexpected
    internal error is logged and answered as a failure, never raised to the caller.

    :param origin: who is writing, recorded in the entry metadata (default: the store's
        ``write_origin``). It comes from the host, never from ``args`` (an ``origin`` key
        there is ignored). ``"background_review"`` (an unattended review) turns on the
        background-review gate: adds are applied, replace/remove steps are staged as a
        proposal (`hermes_memory_builtin._pending`).
    :param write_approval: the approval gate (``memory.write_approval``): every write is
        staged for a person to apply or reject, whatever the origin.

    Staged answers are ``{"success": true, "staged": true, "pending_id": ..., ...}``;
    invalid writes are refused exactly as without a gate and never staged. ``action:
    "pending"`` lists the proposals of ``target`` (read-only: applying or rejecting one is
    for a person, with ``hermes-memory memory pending``).
    """
    try:
        return _dispatch(args, store, origin=origin, write_approval=write_approval)
    except Exception as exc:
        logger.exception("memory tool failed")
        return _fail(f"Memory tool failed unexpectedly: {exc}. Nothing further was changed.")


def _dispatch(
    args: dict[str, Any] | None,
    store: MemoryStore | None,
    *,
    origin: str | None,
    write_approval: bool,
) -> str:
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
    gate = _Gate(store, target, origin, write_approval)
    operations = args.get("operations")
    if operations:
        if not isinstance(operations, list):
            return _fail("operations must be a list of {action, content?, old_text?} objects.")
        return tool_result(gate.batch(operations))
    action = args.get("action")
    if action == "pending":
        return tool_result(list_pending(store, target))
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
        return tool_result(gate.add(content))
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
        return tool_result(gate.replace(old_text, content))
    return tool_result(gate.remove(old_text))


_STAGED_NOTE = "This change is staged, not saved: do not repeat it."


class _Gate:
    """The approval gate and the background-review gate in front of one store call."""

    def __init__(
        self, store: MemoryStore, target: str, origin: str | None, write_approval: bool
    ) -> None:
        self.store = store
        self.target = target
        self.origin = origin or store.write_origin
        self.approval = write_approval
        self.unattended = origin == BACKGROUND_REVIEW

    def add(self, content: str) -> dict[str, Any]:
        op = {"action": "add", "content": content}
        if not self.approval:
            return self._held_or([op], self.store.add(self.target, content, origin=self.origin))
        return self._stage([op], single=True)

    def replace(self, old_text: str, content: str) -> dict[str, Any]:
        op = {"action": "replace", "old_text": old_text, "content": content}
        if not (self.approval or self.unattended):
            result = self.store.replace(self.target, old_text, content, origin=self.origin)
            return self._held_or([op], result)
        return self._stage([op], single=True)

    def remove(self, old_text: str) -> dict[str, Any]:
        if not (self.approval or self.unattended):
            return self.store.remove(self.target, old_text, origin=self.origin)
        return self._stage([{"action": "remove", "old_text": old_text}], single=True)

    def batch(self, operations: list[Any]) -> dict[str, Any]:
        destructive = any(
            isinstance(op, dict) and op.get("action") in ("replace", "remove") for op in operations
        )
        if self.approval or (self.unattended and destructive):
            return self._stage(operations, single=False)
        result = self.store.apply_batch(self.target, operations, origin=self.origin)
        return self._held_or(operations, result, single=False)

    def _held_or(
        self, operations: list[Any], result: dict[str, Any], *, single: bool = True
    ) -> dict[str, Any]:
        """``result``, unless the threat scan held the write: then it is staged for a person
        (vocabulary alone never refuses a write, and the model learns nothing to rephrase)."""
        if result.get("success") is True or result.get("threat_verdict") != HOLD:
            return result
        return self._stage(operations, single=single, held=True)

    def _stage(self, operations: list[Any], *, single: bool, held: bool = False) -> dict[str, Any]:
        """Validate ``operations`` now (dry run under the lock), then stage them pinned.

        ``held``: the threat scan held the change (vocabulary only): it is checked as a
        person's approval would apply it and staged with the reason ``threat_review``.
        """
        store, target = self.store, self.target
        checked = store.resolve_batch(
            target, operations, origin=self.origin, allow_empty=single, approved_by_human=held
        )
        if not held and checked.get("threat_verdict") == HOLD:
            return self._stage(operations, single=single, held=True)
        if (
            single
            and operations[0]["action"] == "add"
            and checked.get("success") is True
            and scrub_secrets(operations[0]["content"].strip()) in store.entries(target)
        ):
            # Already saved: nothing to approve (the answer a direct add would give).
            return store.add(target, operations[0]["content"], origin=self.origin)
        if checked.get("success") is not True:
            return checked
        matched: dict[int, str] = checked.get("matched_entries") or {}
        ops = [_staged_op(op, matched.get(i)) for i, op in enumerate(operations, start=1)]
        saved = 0
        reason = WRITE_APPROVAL if self.approval else BACKGROUND_REVIEW
        if held:
            reason = THREAT_REVIEW
        if reason == BACKGROUND_REVIEW and not single:
            adds = [op for op in ops if op["action"] == "add"]
            rest = [op for op in ops if op["action"] != "add"]
            if adds:
                result = store.apply_batch(target, adds, origin=self.origin)
                if result.get("success") is True:
                    saved, ops = len(adds), rest
        try:
            pending_id, known = _pending_store(store).stage(
                target, ops, reason=reason, origin=self.origin, single=single
            )
        except PendingError as exc:
            logger.warning("memory write not staged: %s", exc)
            saved_note = (
                f" {saved} addition(s) of the batch were saved; its replace/remove steps were not."
                if saved
                else ""
            )
            return {
                "success": False,
                "error": f"Could not stage this change for review ({exc}); it was not "
                f"applied.{saved_note}",
                "additions_saved": saved,
            }
        if reason == THREAT_REVIEW:
            return _held_answer(target, pending_id, known)
        shown = [_shown_op(target, op) for op in ops]
        if reason == BACKGROUND_REVIEW:
            return {
                "success": True,
                "staged": True,
                "proposal_staged": True,
                "pending_id": pending_id,
                "additions_saved": saved,
                "target": target,
                "operations": shown,
                "message": (
                    f"{'Already proposed' if known else 'Proposal staged'} (id {pending_id}): "
                    "an unattended review may add entries but not replace or remove them, so "
                    f"{'these steps wait' if len(ops) > 1 else 'this step waits'} for a person "
                    "to apply or reject with `hermes-memory memory pending`."
                    + (f" {saved} addition(s) were saved." if saved else "")
                ),
                "note": _STAGED_NOTE,
            }
        return {
            "success": True,
            "staged": True,
            "pending_id": pending_id,
            "target": target,
            "operations": shown,
            "message": (
                f"{'Already staged' if known else 'Staged'} for approval (id {pending_id}): "
                "memory writes need a person's approval here (memory.write_approval). It is "
                "not in memory until applied with `hermes-memory memory pending apply "
                f"{pending_id}`."
            ),
            "note": _STAGED_NOTE,
        }


def _held_answer(target: str, pending_id: str, known: bool) -> dict[str, Any]:
    """The answer to a write the threat scan held: it waits for a person. It names no
    pattern and quotes no text, so it teaches nothing about how to get past the scan."""
    return {
        "success": True,
        "staged": True,
        "held": True,
        "pending_id": pending_id,
        "target": target,
        "message": (
            f"{'Already held' if known else 'Held'} for a person's approval (id {pending_id}): "
            "this change is not in memory; it is saved only if a person approves it."
        ),
        "note": "Waiting for a person's decision: do not repeat, reword or split this change.",
    }


def _staged_op(op: Any, matched: str | None) -> dict[str, Any]:
    """A normalised copy of one operation as it is stored, pinned to ``matched``."""
    assert isinstance(op, dict)  # resolve_batch refused anything else
    action = str(op["action"])
    staged: dict[str, Any] = {"action": action}
    content = op.get("content")
    if content is None:
        content = op.get("new_text")
    if action in ("add", "replace"):
        staged["content"] = scrub_secrets((_text_arg(content) or "").strip())
    if action in ("replace", "remove"):
        staged["old_text"] = _text_arg(op.get("old_text")) or ""
        if matched is not None:
            staged["matched_entry"] = matched
    return staged


def _shown_op(target: str, op: dict[str, Any]) -> dict[str, Any]:
    """An operation as it may be shown to the model (flagged texts as placeholders)."""
    shown = dict(op)
    for key in ("content", "matched_entry"):
        if isinstance(shown.get(key), str) and shown[key]:
            shown[key] = scan_entries(target, [shown[key]]).entries[0]
    return shown


#: How an operation held by the threat scan is listed to the model (no text, no pattern).
_HELD_OP: dict[str, Any] = {"action": "held", "content": "[held for a person's review]"}


def _pending_store(store: MemoryStore) -> PendingStore:
    """Where ``store`` keeps proposals: its own ``pending_store()`` if it has one (a store
    whose entries are not files), else ``pending.json`` in its memories directory."""
    own = getattr(store, "pending_store", None)
    if callable(own):
        found = own()
        if isinstance(found, PendingStore):
            return found
    return PendingStore(store.memory_dir)


def list_pending(store: MemoryStore, target: str | None = None) -> dict[str, Any]:
    """The proposals waiting in ``store``'s directory, in the tool's answer shape.

    ``{"success": true, "pending": [{"pending_id", "target", "reason", "created",
    "operations"}], "count": n, "message": ...}``; texts the threat scan flags are shown as
    ``[BLOCKED: ...]`` placeholders. A broken proposals file answers ``success: false``.
    """
    try:
        records = _pending_store(store).proposals(target)
    except PendingError as exc:
        return {"success": False, "error": f"Cannot read pending proposals: {exc}"}
    items = [
        {
            "pending_id": r["id"],
            "target": r["target"],
            "reason": r.get("reason", ""),
            "created": r.get("created", ""),
            "operations": [
                _HELD_OP if r.get("reason") == THREAT_REVIEW else _shown_op(r["target"], op)
                for op in r["operations"]
            ],
        }
        for r in records
    ]
    return {
        "success": True,
        "pending": items,
        "count": len(items),
        "message": (
            f"{len(items)} proposal(s) wait for a person's decision; only a person can apply "
            "or reject them (`hermes-memory memory pending`)."
            if items
            else "No proposals are pending."
        ),
    }
