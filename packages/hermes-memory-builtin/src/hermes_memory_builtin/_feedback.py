"""`WriteFeedback`: the answers `MemoryStore` writes give the model.

A refused write tells the model exactly what to do next (which entry it resembles, how many
characters to free and which old entries would free them), shows the current entries with
flagged ones as ``[BLOCKED: …]`` placeholders, and counts consolidation failures per turn
so that a model stuck in a loop gets a terminal "stop retrying" answer instead of another
actionable one. The dict shapes are the reference's response shapes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from hermes_memory_builtin._format import (
    ENTRY_DELIMITER,
    char_count,
    format_count_usage,
    format_usage,
    preview,
)
from hermes_memory_builtin._scan import scan_entries
from hermes_memory_builtin._sidecar import EntryMeta, approved_entries, entry_key
from hermes_memory_guard import threat_tier

__all__ = [
    "BATCH_SUFFIX",
    "MAX_CONSOLIDATION_FAILURES_PER_TURN",
    "REDACTION_NOTE",
    "SUCCESS_NOTE",
    "Result",
    "WriteFeedback",
    "annotate",
    "invalid_target",
    "stale_error",
]

Result = dict[str, Any]

#: Actionable consolidation errors per turn before the terminal "stop retrying" answer.
MAX_CONSOLIDATION_FAILURES_PER_TURN = 3
SUCCESS_NOTE = "Write saved. This update is complete — do not repeat it."
BATCH_SUFFIX = " No operations were applied (batch is all-or-nothing)."
#: The ``redacted`` field of a successful write whose content had credentials masked (the
#: same key `hermes_memory_core.MemoryManager` sets for tool writes it scrubbed first).
REDACTION_NOTE = (
    "Credentials in the content were replaced by [redacted] before saving: memory is shown "
    "in every future prompt, so secrets are never stored there."
)


class WriteFeedback:
    """Builds the result dicts of one store's writes and counts its consolidation failures.

    :param limit: the character budget of a target (``MemoryStore.limit``).
    """

    def __init__(self, limit: Callable[[str], int]) -> None:
        self.limit = limit
        #: Consolidation failures in the current turn (reset by a success or a new turn).
        self.failures = 0

    def success(self, target: str, entries: list[str], message: str, **extra: Any) -> Result:
        """A successful write's answer (its ``note`` comes last, after any annotation)."""
        self.failures = 0
        result: Result = {
            "success": True,
            "done": True,
            "target": target,
            "usage": format_usage(char_count(entries), self.limit(target)),
            "entry_count": len(entries),
            "message": message,
        }
        result.update(extra)
        result["note"] = SUCCESS_NOTE
        return result

    def consolidation_failure(self, result: Result) -> Result:
        """Count a failure the model should fix by consolidating; past the per-turn cap the
        answer becomes a terminal one telling it to stop retrying."""
        self.failures += 1
        if self.failures > MAX_CONSOLIDATION_FAILURES_PER_TURN:
            return {
                "success": False,
                "done": True,
                "error": (
                    f"Memory consolidation failed {self.failures} times this turn. Stop "
                    "retrying memory calls — leave memory unchanged for now and continue with "
                    "your reply to the user. The fact can be saved in a later turn."
                ),
            }
        return result

    def refusal(
        self,
        target: str,
        entries: list[str],
        metas: dict[str, EntryMeta],
        error: str,
        *,
        similar_entry: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> Result:
        """A counted consolidation failure showing the current entries and their usage
        (and the entry the content resembles, when there is one)."""
        result: Result = {"success": False, "error": error}
        if similar_entry is not None:
            result["similar_entry"] = echo(target, [similar_entry], metas)[0]
        result.update(_capped_entries(target, entries, metas))
        result["usage"] = format_count_usage(char_count(entries), self.limit(target))
        result.update(extra or {})
        return self.consolidation_failure(result)

    def over_budget(
        self,
        target: str,
        entries: list[str],
        final: list[str],
        removable: list[str],
        metas: dict[str, EntryMeta],
        error: str,
    ) -> Result:
        """A counted refusal of a write that would leave ``final`` over the budget, with the
        exact room to make (`room_advice`) appended to ``error``."""
        advice, extra = self.room_advice(target, final, removable, metas)
        return self.refusal(target, entries, metas, error + advice, extra=extra)

    def room_advice(
        self,
        target: str,
        final: list[str],
        removable: list[str],
        metas: dict[str, EntryMeta],
    ) -> tuple[str, dict[str, Any]]:
        """Exactly how many chars to free from ``final`` and which old entries would do it."""
        limit = self.limit(target)
        needed = char_count(final) - limit
        order = sorted(
            range(len(removable)),
            key=lambda i: (_updated(metas, removable[i]), i),
        )
        chosen: list[str] = []
        # A running total (removing one entry frees its text and one separator): linear in
        # the entries, however many a hand-grown file holds.
        counts = Counter(final)
        size, count = char_count(final), len(final)
        for i in order:
            if size <= limit:
                break
            entry = removable[i]
            if counts[entry] == 0:
                continue
            counts[entry] -= 1
            chosen.append(entry)
            count -= 1
            size -= len(entry) + (len(ENTRY_DELIMITER) if count else 0)
        if size > limit:
            movable = set(removable)
            kept = [entry for entry in final if entry not in movable]
            over = char_count(kept) - limit
            text = (
                f" Free at least {needed:,} chars. Even with every other entry removed the "
                f"result would still be {over:,} chars over the limit: shorten the new content."
            )
            return text, {"chars_to_free": needed, **_capped_removals(target, removable, metas)}
        text = (
            f" Free at least {needed:,} chars: removing the {len(chosen)} least recently "
            "updated entr" + ("y" if len(chosen) == 1 else "ies") + " listed in "
            "suggested_removals would be enough (or shorten entries by that much)."
        )
        return text, {"chars_to_free": needed, **_capped_removals(target, chosen, metas)}


#: At most this many entries are listed in ``suggested_removals`` …
MAX_SUGGESTED_REMOVALS = 20
#: … and at most this many characters of entries in ``current_entries`` (a file grown by
#: hand far past its budget must not turn one refusal into a megabyte answer).
MAX_ECHOED_CHARS = 16_000


def _capped_removals(target: str, entries: list[str], metas: dict[str, EntryMeta]) -> Result:
    shown = entries[:MAX_SUGGESTED_REMOVALS]
    fields: Result = {"suggested_removals": echo(target, shown, metas)}
    if len(entries) > len(shown):
        fields["suggested_removals_omitted"] = len(entries) - len(shown)
    return fields


def _capped_entries(target: str, entries: list[str], metas: dict[str, EntryMeta]) -> Result:
    """``current_entries`` (and ``current_entries_omitted`` when the list is cut)."""
    total, end = 0, len(entries)
    for index, entry in enumerate(entries):
        total += len(entry)
        if total > MAX_ECHOED_CHARS and index > 0:
            end = index
            break
    fields: Result = {"current_entries": echo(target, entries[:end], metas)}
    if end < len(entries):
        fields["current_entries_omitted"] = len(entries) - end
    return fields


def echo(target: str, entries: list[str], metas: dict[str, EntryMeta]) -> list[str]:
    """``entries`` as they may be shown to the model in a response: flagged entries as the
    snapshot's ``[BLOCKED: …]`` placeholders (a hand-planted payload must not reach the model
    through an error response either)."""
    return scan_entries(target, entries, approved_entries(entries, metas)).entries


def echo_map(target: str, items: dict[int, str], metas: dict[str, EntryMeta]) -> dict[int, str]:
    """`echo` of each value of ``items`` (op index → entry), keys kept."""
    shown = [echo(target, [text], metas)[0] for text in items.values()]
    return dict(zip(items, shown, strict=True))


def split_threat(
    target: str,
    before: list[str],
    after: list[str],
    metas_before: dict[str, EntryMeta],
    metas_after: dict[str, EntryMeta],
) -> Result | None:
    """A refusal when ``after`` blocks an entry that ``before`` did not: the write would
    complete an instruction split across adjacent entries.

    The refusal never quotes the other entries (stored text is not echoed to the model) and
    carries ``threat_verdict``: ``"refuse"`` when the joined text shows a structural signal,
    ``"hold"`` when it is vocabulary only — then the write waits for a person rather than
    being refused because of what another entry says.
    """
    new = scan_entries(target, after, approved_entries(after, metas_after))
    if not any(item.split for item in new.blocked):
        return None  # the common case: one joined scan, no second one of ``before``
    old = scan_entries(target, before, approved_entries(before, metas_before))
    was_blocked = {before[i] for i in old.blocked_indexes}
    for item in new.blocked:
        if all(after[i] in was_blocked for i in item.indexes):
            continue
        first, last = item.window
        changed = set(after) - set(before)
        others = sum(1 for i in range(first, last + 1) if after[i] not in changed)
        ids = ", ".join(f"'{pid}'" for pid in item.ids)
        neighbours = "the adjacent entry" if others == 1 else f"{others} adjacent entries"
        together = f" together with {neighbours}" if others else ""
        return {
            "success": False,
            "error": (
                f"Blocked: this content, read{together}, matches threat pattern(s) {ids}. "
                "Memory entries are shown joined in the system prompt, so an instruction "
                "split across entries is still an instruction."
            ),
            "threat_verdict": threat_tier(item.ids),
        }
    return None


def invalid_target(target: Any) -> Result:
    """The answer to a write naming neither ``"memory"`` nor ``"user"``."""
    return {
        "success": False,
        "error": f"Invalid memory target '{target}'. Use 'memory' or 'user'.",
    }


def stale_error(entry: str) -> Result:
    """The answer to a staged change whose pinned entry is no longer on disk as reviewed."""
    return {
        "success": False,
        "error": (
            "Entry changed since it was staged, so this write was not applied: "
            f"'{preview(entry)}' is no longer in memory as it was when the change was "
            "reviewed. Nothing was changed; reject this proposal and stage the change again "
            "against the current entries if it is still wanted."
        ),
        "stale_entry": entry,
    }


def annotate(result: Result, *, redacted: bool, approved: bool, threat: str | None) -> Result:
    """Add the notes a successful write owes its caller: masked credentials, an approval."""
    if result.get("success") is not True or "note" not in result:
        return result
    note = result.pop("note")
    if redacted:
        result["redacted"] = REDACTION_NOTE
    if approved:
        result["human_approved"] = True
        if threat:
            result["threat_overridden"] = threat
    result["note"] = note
    return result


def _updated(metas: dict[str, EntryMeta], entry: str) -> str:
    meta = metas.get(entry_key(entry))
    return meta["updated"] if meta is not None else ""
