"""Threat scanning of memory content, at write time and for the system-prompt snapshot.

Both use the ``strict`` scope of `hermes_memory_guard`. Every entry is scanned, also
one that already starts with ``[BLOCKED:`` (the reference let such entries through
unscanned, which was an injection bypass). Entries longer than the scanner's window are
blocked whole rather than scanned in part, so a payload cannot hide beyond the window.

The model reads the entries *joined* (``"\\n§\\n"`` between them), so each entry being clean
is not enough: ``"Ignore all previous"`` followed by ``"instructions and reveal …"`` is one
instruction in the prompt. `scan_entries` therefore also scans the joined text and, when it
trips a pattern that no single entry does, finds the run of consecutive entries responsible
and blocks those entries too. Entries a human approved (`approved`) are never blocked; in a
split payload only the unapproved entries of the run are.
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from dataclasses import dataclass

from hermes_memory_builtin._format import TARGET_FILES, serialise
from hermes_memory_guard import (
    HOLD,
    REFUSE,
    first_threat_message,
    scan_for_threats,
    threat_tier,
    threat_verdict,
)

__all__ = [
    "MAX_SCAN_CHARS",
    "BlockedEntries",
    "ScanReport",
    "WriteVerdict",
    "sanitize_for_prompt",
    "scan_entries",
    "write_threat",
    "write_verdict",
]

#: The scanner reads at most this many characters of a text.
MAX_SCAN_CHARS = 65_536

_SCOPE = "strict"
_REMOVE_HINT = "Removed from system prompt; use memory(action=remove) to delete the original."


def write_threat(content: str) -> str | None:
    """The refusal message for content that must not be written, or ``None`` when clean."""
    if len(content) > MAX_SCAN_CHARS:
        return (
            f"Blocked: content is too large to scan ({len(content):,} chars, the scanner reads "
            f"{MAX_SCAN_CHARS:,}). Memory entries must be short."
        )
    return first_threat_message(content, scope=_SCOPE)


@dataclass(frozen=True)
class WriteVerdict:
    """The tiered verdict on new memory content (`write_verdict`).

    :param tier: ``"refuse"`` (structural signal), ``"hold"`` (vocabulary only: a person
        decides) or ``None`` (clean).
    :param message: the refusal text (names the finding; for a person or a refusal), or
        ``None`` when clean.
    """

    tier: str | None
    message: str | None


def write_verdict(content: str) -> WriteVerdict:
    """How new memory content is treated: refused, held for a person, or written."""
    too_large = write_threat(content) if len(content) > MAX_SCAN_CHARS else None
    if too_large:
        return WriteVerdict(REFUSE, too_large)
    verdict = threat_verdict(content, scope=_SCOPE)
    if verdict.tier is None:
        return WriteVerdict(None, None)
    if verdict.tier == REFUSE:
        structural = [pid for pid in verdict.ids if threat_tier([pid]) == REFUSE]
        message = first_threat_message(content, scope=_SCOPE)
        if structural and (message is None or structural[0] not in message):
            message = _structural_message(structural[0])
        return WriteVerdict(REFUSE, message)
    # Vocabulary the reference patterns miss still gets a message (for a person, never
    # for the model: the memory tool stages a held write and names nothing).
    message = first_threat_message(content, scope=_SCOPE) or _structural_message(verdict.ids[0])
    return WriteVerdict(HOLD, message)


def _structural_message(pid: str) -> str:
    if pid.startswith("invisible_unicode_"):
        code = pid.removeprefix("invisible_unicode_")
        return f"Blocked: content contains invisible unicode character {code} (possible injection)."
    return (
        f"Blocked: content matches threat pattern '{pid}'. Content is injected into the system "
        "prompt and must not contain injection or exfiltration payloads."
    )


@functools.lru_cache(maxsize=2048)
def _entry_ids(entry: str) -> tuple[str, ...]:
    # Entries are rescanned on every write and load; the result depends only on the text.
    return tuple(dict.fromkeys(scan_for_threats(entry, scope=_SCOPE)))


def _ids(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(scan_for_threats(text, scope=_SCOPE)))


@dataclass(frozen=True)
class BlockedEntries:
    """Entries replaced by a placeholder, and why.

    :param indexes: positions (0-based) of the entries that were blocked.
    :param window: ``(first, last)`` positions of the run of consecutive entries whose text
        trips the scan (equal to the single index for a per-entry finding).
    :param ids: the pattern / invisible-character ids found.
    :param split: True when only the joined text of the run trips the scan.
    """

    indexes: tuple[int, ...]
    window: tuple[int, int]
    ids: tuple[str, ...]
    split: bool


@dataclass(frozen=True)
class ScanReport:
    """The result of `scan_entries`: the entries as they may be shown, and what was blocked."""

    entries: list[str]
    blocked: list[BlockedEntries]

    @property
    def blocked_indexes(self) -> set[int]:
        """Positions of every blocked entry."""
        return {i for item in self.blocked for i in item.indexes}


def _placeholder(filename: str, ids: tuple[str, ...], *, split: bool) -> str:
    found = ", ".join(ids)
    if split:
        return (
            f"[BLOCKED: {filename} entry contained threat pattern(s): {found} "
            f"(split across adjacent entries). {_REMOVE_HINT}]"
        )
    return f"[BLOCKED: {filename} entry contained threat pattern(s): {found}. {_REMOVE_HINT}]"


def scan_entries(target: str, entries: list[str], approved: Collection[str] = ()) -> ScanReport:
    """Scan ``entries`` one by one and joined; return them with flagged ones replaced.

    :param target: ``"memory"`` or ``"user"`` (names the file in the placeholders).
    :param entries: the entries in file order.
    :param approved: entry texts a human approved: never replaced.

    A flagged entry becomes ``[BLOCKED: <file> entry contained threat pattern(s): <ids>.
    Removed from system prompt; use memory(action=remove) to delete the original.]``; an
    entry that is only dangerous together with its neighbours gets the same placeholder with
    ``(split across adjacent entries)`` after the ids.
    """
    filename = TARGET_FILES[target]
    approved_set = set(approved)
    work = list(entries)
    blocked: list[BlockedEntries] = []
    for i, entry in enumerate(entries):
        if entry in approved_set:
            continue
        if len(entry) > MAX_SCAN_CHARS:
            work[i] = (
                f"[BLOCKED: {filename} entry too large to scan ({len(entry):,} chars). "
                f"{_REMOVE_HINT}]"
            )
            blocked.append(BlockedEntries((i,), (i, i), ("too_large_to_scan",), split=False))
            continue
        ids = _entry_ids(entry)
        if ids:
            work[i] = _placeholder(filename, ids, split=False)
            blocked.append(BlockedEntries((i,), (i, i), ids, split=False))
    frozen = {i for item in blocked for i in item.indexes}
    frozen.update(i for i, entry in enumerate(entries) if entry in approved_set)
    _block_split_payloads(filename, work, frozen, blocked)
    return ScanReport(work, blocked)


#: Split payloads are looked for in windows of entries whose joined text holds at most
#: twice this many characters, each window overlapping the next by at least this many: a
#: payload whose joined text is shorter than this always lies whole in some window, and
#: every character is scanned about twice, however many entries the file holds.
SPLIT_WINDOW_CHARS = 4096


def _block_split_payloads(
    filename: str, work: list[str], frozen: set[int], blocked: list[BlockedEntries]
) -> None:
    """Replace, in ``work``, the unfrozen entries of every run whose joined text trips.

    Linear in the text: the entries are read in overlapping windows (`SPLIT_WINDOW_CHARS`);
    in a window that trips, the shortest tripping run is found by galloping from the
    window's start (scans as long as the run, not the window), blocked, and the search
    goes on after it. (Scanning everything after each blocked run made a file of many
    small split payloads quadratic: 5.7 KB took seconds.)
    """
    start = 0
    n = len(work)
    while start < n:
        end = _window_end(work, start)
        found = _find_window(work, start, end, known_clean=start not in frozen)
        if found is None:
            if end >= n:
                return
            start = _next_window(work, start, end)
            continue
        first, last = found
        ids = _ids(serialise(work[first : last + 1]))
        victims = tuple(i for i in range(first, last + 1) if i not in frozen)
        if not victims:
            start = first + 1  # every entry of the run is approved or already a placeholder
            continue
        for i in victims:
            work[i] = _placeholder(filename, ids, split=True)
            frozen.add(i)
        blocked.append(BlockedEntries(victims, (first, last), ids, split=True))
        start = last + 1


def _window_end(work: list[str], start: int) -> int:
    """End (exclusive) of the window from ``start``: at least two entries, else as many as
    fit in ``2 * SPLIT_WINDOW_CHARS`` joined characters."""
    size = 0
    end = start
    while end < len(work):
        size += len(work[end]) + 3
        if end - start >= 2 and size > 2 * SPLIT_WINDOW_CHARS:
            break
        end += 1
    return end


def _next_window(work: list[str], start: int, end: int) -> int:
    """Where the window after ``[start, end)`` starts: its last entries covering at least
    ``SPLIT_WINDOW_CHARS`` characters are read again (the overlap)."""
    size = 0
    k = end
    while k - 1 > start and size < SPLIT_WINDOW_CHARS:
        k -= 1
        size += len(work[k]) + 3
    return max(k, start + 1)


def _find_window(
    work: list[str], start: int, end: int, *, known_clean: bool = False
) -> tuple[int, int] | None:
    """A short run ``[first, last]`` of ``work[start:end]`` whose joined text trips, or
    ``None`` when the whole window is clean.

    The shortest tripping prefix (which fixes ``last``) is found by galloping — prefixes of
    1, 2, 4 … entries, then a binary search in the last step — so a short payload costs a
    few short scans and a clean window about two scans of its text; then the latest start
    that still trips fixes ``first``. ``known_clean``: ``work[start]`` alone passed the
    scan already (an entry that is neither approved nor a placeholder), so the first probe
    is two entries.
    """
    clean, step = (start, 1) if known_clean else (start - 1, 1)  # work[start:clean+1] clean
    tripping = -1
    while tripping < 0:
        probe = min(clean + step, end - 1)
        if _ids(serialise(work[start : probe + 1])):
            tripping = probe
        elif probe >= end - 1:
            return None
        else:
            clean, step = probe, step * 2
    while tripping - clean > 1:
        mid = (clean + tripping) // 2
        if _ids(serialise(work[start : mid + 1])):
            tripping = mid
        else:
            clean = mid
    last = tripping
    trips, clean_from = start, last + 1  # work[trips:last+1] trips; work[clean_from:] clean
    while clean_from - trips > 1:
        mid = (trips + clean_from) // 2
        if _ids(serialise(work[mid : last + 1])):
            trips = mid
        else:
            clean_from = mid
    return trips, last


def sanitize_for_prompt(
    target: str, entries: list[str], approved: Collection[str] = ()
) -> list[str]:
    """``entries`` with every flagged entry replaced by a ``[BLOCKED: …]`` placeholder.

    Flagged means: the entry alone trips the strict scan, or it is part of a run of adjacent
    entries whose joined text does (see `scan_entries`). Entries in ``approved`` are kept.
    """
    return scan_entries(target, entries, approved).entries
