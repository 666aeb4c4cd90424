"""All-or-nothing batches of `MemoryStore` edits (`apply_batch`, `resolve_batch`,
`apply_pinned`).

Operations run in order on a working copy of the entries on disk and the budget is checked
on the final state only, so a batch may remove before it adds. One failing step aborts
everything. A staged change (see `hermes_memory_builtin._pending`) is *pinned*: each of its
replace/remove steps names the exact entry a human reviewed, and the batch refuses to
touch anything if that entry changed since.
"""

from __future__ import annotations

from typing import Any

from hermes_memory_builtin._entry_edits import approved, as_text, distinct_matches, screen_content
from hermes_memory_builtin._feedback import (
    BATCH_SUFFIX,
    Result,
    WriteFeedback,
    echo,
    echo_map,
    split_threat,
    stale_error,
)
from hermes_memory_builtin._file_writes import Mutation, Outcome
from hermes_memory_builtin._format import TARGET_FILES, char_count, dedupe, preview
from hermes_memory_builtin._sidecar import EntryMeta, entry_key, now_iso
from hermes_memory_builtin._similarity import find_near_duplicate

__all__ = ["batch_mutation", "screen_operations"]


def screen_operations(
    operations: Any, *, approved_by_human: bool = False
) -> tuple[list[Any], bool] | Result:
    """Check a batch's shape and screen every add/replace content before any lock is taken.

    Returns the operations with ``content`` screened (``new_text`` folded into it) and
    whether credentials were masked, or the refusal naming the first bad operation (a
    threat refusal carries the ``threat_verdict`` of the worst operation: one structural
    finding refuses the batch, vocabulary alone holds it). ``approved_by_human``: a person
    accepted the contents, threat-scan findings are not refusals.
    """
    if not isinstance(operations, list):
        return {
            "success": False,
            "error": "operations must be a list of {action, content?, old_text?} objects.",
        }
    ops: list[Any] = operations
    if not ops:
        return {"success": False, "error": "operations list is empty."}
    redacted = False
    cleaned: list[Any] = []
    held: Result | None = None
    for index, op in enumerate(ops, start=1):
        if isinstance(op, dict) and op.get("action") in ("add", "replace"):
            text = _op_content(op)
            screened = screen_content(text, approved_by_human=approved_by_human) if text else None
            if isinstance(screened, dict):
                refusal = {
                    "success": False,
                    "error": f"Operation {index}: {screened['error']}{BATCH_SUFFIX}",
                }
                if screened.get("threat_verdict") == "hold":
                    held = held or {**refusal, "threat_verdict": "hold"}
                    continue
                if "threat_verdict" in screened:
                    refusal["threat_verdict"] = screened["threat_verdict"]
                return refusal
            redacted = redacted or bool(screened and screened.redacted)
            op = {key: value for key, value in op.items() if key != "new_text"}
            op["content"] = screened.text if screened else text
        cleaned.append(op)
    if held is not None:
        return held
    return cleaned, redacted


def batch_mutation(
    feedback: WriteFeedback,
    target: str,
    ops: list[Any],
    *,
    origin: str,
    dry_run: bool = False,
    pinned: dict[int, str] | None = None,
    allow_empty: bool = False,
    approved_by_human: bool = False,
) -> Mutation:
    """The mutation applying screened ``ops`` (see the module docstring); with ``dry_run``
    nothing is written and the success answer also holds ``matched_entries``. With
    ``approved_by_human`` (a person accepted the change) the joined-entries threat check is
    skipped and the new entries are recorded as approved."""
    limit = feedback.limit(target)
    name = TARGET_FILES[target]

    def mutation(entries: list[str], metas: dict[str, EntryMeta]) -> Outcome:
        def fail(message: str, extra: dict[str, Any] | None = None) -> Outcome:
            return Outcome(feedback.refusal(target, entries, metas, message, extra=extra))

        def abort(message: str) -> Outcome:
            return fail(message + BATCH_SUFFIX)

        for entry in (pinned or {}).values():
            if entry not in entries:
                return Outcome(stale_error(entry))
        working = list(entries)
        new_metas = dict(metas)
        replaced: dict[int, str] = {}
        removed: dict[int, str] = {}
        stamp = now_iso()
        for index, op in enumerate(ops, start=1):
            action = op.get("action") if isinstance(op, dict) else None
            shown = action if isinstance(action, str) and action else "unknown"
            label = f"Operation {index} ({shown})"
            if action not in ("add", "replace", "remove") or not isinstance(op, dict):
                return abort(f"{label}: unknown action. Use add, replace, or remove.")
            content = _op_content(op)
            old = as_text(op.get("old_text"))
            if action == "add":
                if not content:
                    return abort(f"{label}: content is required.")
                if content in working:
                    continue
                similar = find_near_duplicate(content, working)
                if similar is not None:
                    shown = preview(echo(target, [similar], metas)[0])
                    return abort(
                        f"{label}: nearly the same as the existing entry "
                        f"'{shown}' -- use replace to update that entry instead."
                    )
                working.append(content)
                meta = EntryMeta(created=stamp, updated=stamp, origin=origin)
                new_metas[entry_key(content)] = approved(meta) if approved_by_human else meta
                continue
            if not old:
                return abort(f"{label}: old_text is required.")
            if action == "replace" and not content:
                return abort(f"{label}: content is required (use action='remove' to delete).")
            if pinned is not None and index in pinned:
                exact = [i for i, entry in enumerate(working) if entry == pinned[index]]
                if not exact:
                    return Outcome(stale_error(pinned[index]))
                matches = exact[:1]
            else:
                matches = distinct_matches(working, old)
            if not matches:
                return abort(f"{label}: no entry matched '{old}'.")
            if len(matches) > 1:
                return abort(
                    f"{label}: '{old}' matched multiple distinct entries -- be more specific."
                )
            position = matches[0]
            previous = working[position]
            if action == "remove":
                removed[index] = previous
                del working[position]
                continue
            replaced[index] = previous
            working[position] = content
            old_meta = new_metas.get(entry_key(previous))
            meta = EntryMeta(
                created=old_meta["created"] if old_meta else stamp,
                updated=stamp,
                origin=origin,
            )
            new_metas[entry_key(content)] = approved(meta) if approved_by_human else meta
        working = dedupe(working)
        if entries and not working and not allow_empty:
            return fail(
                f"Refusing to empty {name}: this batch would remove every entry from a "
                "previously non-empty store. Keep at least one entry — merge overlapping "
                "entries into a shorter one instead of removing the last one. To delete "
                "the final entry deliberately, use single remove() calls."
            )
        total = char_count(working)
        if total > limit:
            unchanged = [entry for entry in working if entry in entries]
            advice, extra = feedback.room_advice(target, working, unchanged, new_metas)
            return fail(
                f"After applying all {len(ops)} operations, memory would be at "
                f"{total:,}/{limit:,} chars -- over the limit. Remove or shorten more "
                "entries in the same batch, then retry." + advice,
                extra,
            )
        refusal = (
            None if approved_by_human else split_threat(target, entries, working, metas, new_metas)
        )
        if refusal is not None:
            refusal["error"] += BATCH_SUFFIX
            return Outcome(refusal)
        extra_fields: dict[str, Any] = {}
        if replaced:
            extra_fields["replaced_entries"] = echo_map(target, replaced, metas)
        if removed:
            extra_fields["removed_entries"] = echo_map(target, removed, metas)
        result = feedback.success(
            target, working, f"Applied {len(ops)} operation(s).", **extra_fields
        )
        if dry_run:
            result["matched_entries"] = {**replaced, **removed}
            return Outcome(result)
        if working == entries:
            return Outcome(result)
        return Outcome(result, working, new_metas)

    return mutation


def _op_content(op: dict[str, Any]) -> str:
    content = op.get("content")
    if content is None:
        content = op.get("new_text")
    return as_text(content)
