"""Validating and applying a hand edit of MEMORY.md / USER.md (``hermes-memory memory edit``).

The edited text must parse as entries separated by lines holding only ``§``, fit the
character budget, and pass the strict threat scan entry by entry (an entry a human already
approved, or every flagged entry with ``allow_flagged``, is kept and recorded as approved).
Only then does it replace the file through the store's API
(`hermes_memory_builtin._replace_file.replace_entries`: the lock the ``memory`` tool takes, the
sidecar, an atomic replace), and only if nobody changed the file while it was edited. A
rejected edit that differs from the file is never thrown away: it is saved beside the file
as ``<FILE>.rejected-<timestamp>`` (mode 0600) and its path is reported.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from hermes_memory_builtin import (
    TARGET_FILES,
    ConcurrentChange,
    char_count,
    parse_entries,
    preview,
    replace_entries,
    scan_entries,
    split_pieces,
    write_verdict,
)
from hermes_memory_cli._i18n import cli_gettext as _
from hermes_memory_core.kit import atomic_write_text

__all__ = ["ConcurrentChange", "EditCheck", "apply_edit", "check_edit", "keep_rejected"]


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
    person_wrote: bool = True,
) -> EditCheck:
    """Validate edited file text for a memory file of budget ``limit`` characters.

    ``approved`` holds entries a human approved earlier (kept as they are even when the
    threat scan flags them); with ``allow_flagged`` every flagged entry is accepted and
    returned in ``EditCheck.approved``. ``person_wrote``: the person typed the text (an
    edit), so an entry only the word lists hold is kept as theirs; False for text read from
    a file on disk (an import), the least trusted source, where it is refused like the rest.
    """
    problems: list[str] = []
    notes: list[str] = []
    flagged: list[str] = []
    keep: set[str] = set()
    already = approved or set()
    if "\x00" in text:
        problems.append(_("the text contains NUL characters"))
    pieces = split_pieces(text)
    entries = parse_entries(text)
    if len(pieces) != len(entries):
        notes.append(
            _("{count} duplicate entr(y/ies) dropped").format(count=len(pieces) - len(entries))
        )
    used = char_count(entries)
    if used > limit:
        problems.append(
            _(
                "{name} would use {used:,} of {limit:,} chars; shorten or remove {over:,} chars"
            ).format(name=filename, used=used, limit=limit, over=used - limit)
        )
    for number, entry in enumerate(entries, 1):
        verdict = write_verdict(entry)
        threat = verdict.message
        if not threat:
            continue
        flagged.append(entry)
        if verdict.tier == "hold" and person_wrote and not (entry in already or allow_flagged):
            # A hold waits for a person: the person editing the file keeps it.
            keep.add(entry)
            notes.append(
                _(
                    "entry {number} ('{preview}'): the threat scan's word lists matched it "
                    "({matched}); kept as approved by you"
                ).format(number=number, preview=preview(entry, 40), matched=_matched(entry))
            )
        elif entry in already or allow_flagged:
            keep.add(entry)
            notes.append(
                _("entry {number} ('{preview}') is flagged, kept as approved").format(
                    number=number, preview=preview(entry, 40)
                )
            )
        else:
            problems.append(
                _("entry {number} ('{preview}'): {threat}").format(
                    number=number, preview=preview(entry, 40), threat=threat
                )
            )
    if not problems:
        _check_split_runs(entries, filename, already | keep, allow_flagged, keep, notes, problems)
    return EditCheck(
        entries=entries, problems=problems, notes=notes, flagged=flagged, approved=keep
    )


def _check_split_runs(
    entries: list[str],
    filename: str,
    approved: set[str],
    allow_flagged: bool,
    keep: set[str],
    notes: list[str],
    problems: list[str],
) -> None:
    """Entries that trip the scan only when read together (a split run) would be blocked
    from the next snapshot. The person editing sees the whole file: a run the word lists
    flag is kept as approved (as a hold would be); a structural one needs --allow-flagged."""
    from hermes_memory_guard import REFUSE, threat_tier

    targets = {name: target for target, name in TARGET_FILES.items()}
    if filename not in targets:
        return
    report = scan_entries(targets[filename], entries, approved=approved)
    for item in report.blocked:
        if not item.split:
            continue
        numbers = ", ".join(str(i + 1) for i in item.indexes)
        if threat_tier(item.ids) == REFUSE and not allow_flagged:
            problems.append(
                _("entries {numbers}: flagged read together ({matched})").format(
                    numbers=numbers, matched=", ".join(item.ids)
                )
            )
            continue
        keep.update(entries[i] for i in item.indexes)
        notes.append(
            _(
                "entries {numbers}: the threat scan flagged them read together ({matched}); "
                "kept as approved by you"
            ).format(numbers=numbers, matched=", ".join(item.ids))
        )


def _matched(entry: str) -> str:
    from hermes_memory_guard import threat_verdict

    return ", ".join(threat_verdict(entry).ids)


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


def apply_edit(
    path: Path, entries: list[str], *, expected: bytes | None, approved: set[str] | None = None
) -> None:
    """Write the checked ``entries`` through the store's API (`replace_entries`: its lock,
    sidecar and atomic replace); `ConcurrentChange` when the file changed meanwhile."""
    replace_entries(path, entries, expected=expected, approved=approved, origin="cli-edit")


def editor_command() -> str:
    """``$VISUAL``, else ``$EDITOR``, else ``vi``."""
    return os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
