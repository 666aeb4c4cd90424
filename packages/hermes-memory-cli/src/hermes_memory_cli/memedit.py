"""Validating and applying a hand edit of MEMORY.md / USER.md (``hermes-memory memory edit``).

The edited text must parse as entries separated by lines holding only ``§``, fit the
character budget, and pass the strict threat scan entry by entry (an entry a human already
approved, or every flagged entry with ``allow_flagged``, is kept and recorded as approved).
Only then does it replace the file, under the same lock the ``memory`` tool takes, and only
if nobody changed the file while it was being edited. A rejected edit that differs from the
file is never thrown away: it is saved beside the file as ``<FILE>.rejected-<timestamp>``
(mode 0600) and its path is reported.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from hermes_memory_builtin.format import (
    ENTRY_DELIMITER,
    char_count,
    parse_entries,
    preview,
    read_raw,
    serialise,
    split_pieces,
)
from hermes_memory_builtin.locking import exclusive_lock
from hermes_memory_builtin.scan import write_threat
from hermes_memory_builtin.sidecar import (
    EntryMeta,
    entry_key,
    load_sidecar,
    now_iso,
    reconcile,
    save_sidecar,
)
from hermes_memory_core.fsutil import atomic_write_text

__all__ = ["EditCheck", "apply_edit", "check_edit", "keep_rejected"]


@dataclass
class EditCheck:
    """The outcome of validating edited text: ``entries`` to write, or ``problems``."""

    entries: list[str]
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: entries the threat scan flagged (refused, or kept when approved)
    flagged: list[str] = field(default_factory=list)
    #: entries to record as approved by a human in the metadata sidecar
    approved: set[str] = field(default_factory=set)

    @property
    def ok(self) -> bool:
        """True when the text may replace the file."""
        return not self.problems


def check_edit(
    text: str,
    *,
    limit: int,
    filename: str,
    approved: set[str] | None = None,
    allow_flagged: bool = False,
) -> EditCheck:
    """Validate edited file text for a memory file of budget ``limit`` characters.

    ``approved`` holds entries a human approved earlier (kept as they are even when the
    threat scan flags them); with ``allow_flagged`` every flagged entry is accepted and
    returned in ``EditCheck.approved``.
    """
    problems: list[str] = []
    notes: list[str] = []
    flagged: list[str] = []
    keep: set[str] = set()
    already = approved or set()
    if "\x00" in text:
        problems.append("the text contains NUL characters")
    pieces = split_pieces(text)
    entries = parse_entries(text)
    if len(pieces) != len(entries):
        notes.append(f"{len(pieces) - len(entries)} duplicate entr(y/ies) dropped")
    used = char_count(entries)
    if used > limit:
        problems.append(
            f"{filename} would use {used:,} of {limit:,} chars; "
            f"shorten or remove {used - limit:,} chars"
        )
    for number, entry in enumerate(entries, 1):
        threat = write_threat(entry)
        if not threat:
            continue
        flagged.append(entry)
        if entry in already or allow_flagged:
            keep.add(entry)
            notes.append(f"entry {number} ('{preview(entry, 40)}') is flagged, kept as approved")
        else:
            problems.append(f"entry {number} ('{preview(entry, 40)}'): {threat}")
    return EditCheck(
        entries=entries, problems=problems, notes=notes, flagged=flagged, approved=keep
    )


def keep_rejected(path: Path, text: str) -> Path:
    """Save a rejected edit beside ``path`` as ``<name>.rejected-<timestamp>``; return it."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate = path.with_name(f"{path.name}.rejected-{stamp}")
    n = 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.rejected-{stamp}-{n}")
    atomic_write_text(candidate, text, mode=0o600)
    return candidate


class ConcurrentChange(Exception):
    """The file changed on disk while it was being edited."""


def apply_edit(
    path: Path, entries: list[str], *, expected: bytes | None, approved: set[str] | None = None
) -> None:
    """Write ``entries`` to ``path`` under its lock if it still holds ``expected`` bytes.

    ``expected`` is what the file held when editing started (``None``: it did not exist).
    Raises `ConcurrentChange` when it differs now. The metadata sidecar keeps the history of
    untouched entries; new or changed entries are recorded with origin ``"cli-edit"``, and
    the entries in ``approved`` are marked ``human_approved``.
    """
    with exclusive_lock(path):
        raw = read_raw(path)
        current = raw.data if raw.exists else None
        if raw.exists and current is None:
            raise ConcurrentChange(f"{path.name} cannot be read now: {raw.error}")
        if current != expected:
            raise ConcurrentChange(f"{path.name} was changed by someone else during the edit")
        stored = load_sidecar(path)
        metas = reconcile(stored, entries, path)
        known = stored or {}
        stamp = now_iso()
        for entry in entries:
            key = entry_key(entry)
            if key not in known:
                metas[key] = EntryMeta(created=stamp, updated=stamp, origin="cli-edit")
            if approved and entry in approved:
                metas[key]["human_approved"] = True
        atomic_write_text(path, serialise(entries), tmp_prefix=".mem_")
        save_sidecar(path, entries, metas)


def editor_command() -> str:
    """``$VISUAL``, else ``$EDITOR``, else ``vi``."""
    return os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"


def template(entries: list[str]) -> str:
    """The buffer shown in the editor: the entries separated by ``§`` lines."""
    return (ENTRY_DELIMITER.join(entries) + "\n") if entries else ""
