"""The single-entry edits of `MemoryStore`: what `add`, `replace` and `remove` decide.

Each function returns a `Mutation` that `MemoryStore` runs under the file's lock on the
entries as they are on disk (`hermes_memory_builtin._file_writes`), so the decision is never
made on a stale copy. Content is screened first (`screen_content`): the entry separator is
refused, credentials are masked, and the threat scan runs on the content alone; once the
final entries are known it runs again on them joined, so an instruction split across
adjacent entries is refused too.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from hermes_memory_builtin._feedback import Result, WriteFeedback, echo, split_threat
from hermes_memory_builtin._file_writes import Mutation, Outcome
from hermes_memory_builtin._format import (
    char_count,
    dedupe,
    delimiter_problem,
    normalize_newlines,
    preview,
)
from hermes_memory_builtin._scan import write_verdict
from hermes_memory_builtin._sidecar import EntryMeta, entry_key, now_iso
from hermes_memory_builtin._similarity import find_near_duplicate
from hermes_memory_guard import scrub_secrets

__all__ = [
    "ScreenedContent",
    "add_mutation",
    "as_text",
    "distinct_matches",
    "remove_mutation",
    "replace_mutation",
    "screen_content",
]


class ScreenedContent(NamedTuple):
    """Content that passed `screen_content`: the text to store (credentials masked), whether
    anything was masked, and the threat the scan found (only when a human approved it)."""

    text: str
    redacted: bool
    threat: str | None


def as_text(value: Any) -> str:
    """A tool argument as entry text: strings normalised and stripped, numbers as text,
    anything else empty (the caller refuses empty content with its own message)."""
    if isinstance(value, str):
        return normalize_newlines(value).strip()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return ""


def screen_content(text: str, *, approved_by_human: bool = False) -> ScreenedContent | Result:
    """Check new entry text before any lock is taken; a refusal is returned as a result.

    The separator is refused, credentials are masked (the masked text is what gets
    scanned and stored), and a threat-scan hit is refused unless a human approved it. The
    refusal carries ``threat_verdict``: ``"refuse"`` for a structural signal, ``"hold"`` for
    vocabulary alone (the ``memory`` tool then stages the write for a person instead).
    """
    problem = delimiter_problem(text)
    if problem:
        return {"success": False, "error": problem}
    masked = scrub_secrets(text)
    verdict = write_verdict(masked)
    if verdict.message and not approved_by_human:
        return {"success": False, "error": verdict.message, "threat_verdict": verdict.tier}
    return ScreenedContent(masked, masked != text, verdict.message)


def distinct_matches(entries: list[str], old_text: str) -> list[int]:
    """Indexes of the distinct entries ``old_text`` identifies: exact matches beat
    substrings; an entry text that appears twice counts once."""
    exact = [i for i, entry in enumerate(entries) if entry == old_text]
    located = exact or [i for i, entry in enumerate(entries) if old_text in entry]
    seen: set[str] = set()
    unique: list[int] = []
    for i in located:
        if entries[i] not in seen:
            seen.add(entries[i])
            unique.append(i)
    return unique


def approved(meta: EntryMeta) -> EntryMeta:
    """``meta`` marked as accepted by a human."""
    marked = EntryMeta(created=meta["created"], updated=meta["updated"], origin=meta["origin"])
    marked["human_approved"] = True
    return marked


def add_mutation(
    feedback: WriteFeedback,
    target: str,
    content: str,
    *,
    origin: str,
    approved_by_human: bool,
) -> Mutation:
    """The mutation of `MemoryStore.add` for screened ``content``."""
    limit = feedback.limit(target)

    def mutation(entries: list[str], metas: dict[str, EntryMeta]) -> Outcome:
        if content in entries:
            meta = metas.get(entry_key(content))
            if approved_by_human and meta is not None and not meta.get("human_approved"):
                approved_metas = dict(metas)
                approved_metas[entry_key(content)] = approved(meta)
                result = feedback.success(
                    target,
                    entries,
                    "Entry already exists (no duplicate added); marked as approved by a human.",
                )
                return Outcome(result, entries, approved_metas)
            return Outcome(
                feedback.success(target, entries, "Entry already exists (no duplicate added).")
            )
        used = char_count(entries)
        similar = find_near_duplicate(content, entries)
        if similar is not None:
            # Shown as the snapshot shows it: a hand-planted payload is never quoted back.
            similar = echo(target, [similar], metas)[0]
            return Outcome(
                feedback.refusal(
                    target,
                    entries,
                    metas,
                    "Not added: this is nearly the same as an existing entry: "
                    f"'{preview(similar)}'. If it updates that entry, use "
                    "action='replace' with old_text set to part of it and content "
                    "set to the complete new entry; if memory already says this, "
                    "leave it unchanged.",
                    similar_entry=similar,
                )
            )
        final = [*entries, content]
        if char_count(final) > limit:
            return Outcome(
                feedback.over_budget(
                    target,
                    entries,
                    final,
                    entries,
                    metas,
                    f"Memory at {used:,}/{limit:,} chars. Adding this entry "
                    f"({len(content)} chars) would exceed the limit. Consolidate "
                    "now: use 'replace' to merge overlapping entries into shorter "
                    "ones or 'remove' stale or less important entries (see "
                    "current_entries below), then retry this add — all in this "
                    "turn.",
                )
            )
        stamp = now_iso()
        new_metas = dict(metas)
        meta = EntryMeta(created=stamp, updated=stamp, origin=origin)
        new_metas[entry_key(content)] = approved(meta) if approved_by_human else meta
        if not approved_by_human:
            refusal = split_threat(target, entries, final, metas, new_metas)
            if refusal is not None:
                return Outcome(refusal)
        return Outcome(feedback.success(target, final, "Entry added."), final, new_metas)

    return mutation


def replace_mutation(
    feedback: WriteFeedback,
    target: str,
    old: str,
    new: str,
    *,
    origin: str,
    approved_by_human: bool,
) -> Mutation:
    """The mutation of `MemoryStore.replace`: the entry ``old`` identifies becomes ``new``
    (screened), keeping its ``created`` time."""
    limit = feedback.limit(target)

    def mutation(entries: list[str], metas: dict[str, EntryMeta]) -> Outcome:
        located = _locate_single(feedback, target, entries, old, "replace", metas)
        if isinstance(located, dict):
            return Outcome(located)
        previous = entries[located]
        final = list(entries)
        final[located] = new
        final = dedupe(final)
        if char_count(final) > limit:
            removable = [entry for i, entry in enumerate(entries) if i != located]
            return Outcome(
                feedback.over_budget(
                    target,
                    entries,
                    final,
                    removable,
                    metas,
                    f"Replacement would put memory at {char_count(final):,}/"
                    f"{limit:,} chars. Shorten the new content, or 'remove' other "
                    "stale or less important entries to make room (see "
                    "current_entries below), then retry — all in this turn.",
                )
            )
        new_metas = dict(metas)
        old_meta = metas.get(entry_key(previous))
        stamp = now_iso()
        meta = EntryMeta(
            created=old_meta["created"] if old_meta else stamp, updated=stamp, origin=origin
        )
        new_metas[entry_key(new)] = approved(meta) if approved_by_human else meta
        if not approved_by_human:
            refusal = split_threat(target, entries, final, metas, new_metas)
            if refusal is not None:
                return Outcome(refusal)
        shown_previous = echo(target, [previous], metas)[0]
        result = feedback.success(target, final, "Entry replaced.", replaced_entry=shown_previous)
        return Outcome(result, final, new_metas)

    return mutation


def remove_mutation(feedback: WriteFeedback, target: str, old: str) -> Mutation:
    """The mutation of `MemoryStore.remove`: delete the entry ``old`` identifies."""

    def mutation(entries: list[str], metas: dict[str, EntryMeta]) -> Outcome:
        located = _locate_single(feedback, target, entries, old, "remove", metas)
        if isinstance(located, dict):
            return Outcome(located)
        previous = entries[located]
        final = [entry for i, entry in enumerate(entries) if i != located]
        shown_previous = echo(target, [previous], metas)[0]
        result = feedback.success(target, final, "Entry removed.", removed_entry=shown_previous)
        return Outcome(result, final, metas)

    return mutation


def _locate_single(
    feedback: WriteFeedback,
    target: str,
    entries: list[str],
    old_text: str,
    verb: str,
    metas: dict[str, EntryMeta],
) -> int | Result:
    matches = distinct_matches(entries, old_text)
    if not matches:
        return feedback.consolidation_failure(
            {
                "success": False,
                "error": (
                    f"No entry matched '{old_text}'. Check current_entries below and retry "
                    f"with the exact text of the entry you want to {verb}."
                ),
                "current_entries": echo(target, entries, metas),
            }
        )
    if len(matches) > 1:
        return {
            "success": False,
            "error": f"Multiple entries matched '{old_text}'. Be more specific.",
            "matches": [
                preview(entry) for entry in echo(target, [entries[i] for i in matches], metas)
            ],
        }
    return matches[0]
