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

The cost is bounded: windows of the joined text are scanned first and an entry alone only
in a window that trips; after `MAX_FLAGGED` findings the rest of the file (but its
approved entries) is withheld behind one ``[WITHHELD: …]`` placeholder, unscanned.
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


@functools.lru_cache(maxsize=256)
def _ids(text: str) -> tuple[str, ...]:
    # A found run is scanned again for its ids right after the search that found it.
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
    #: Positions of the entries withheld unscanned once `MAX_FLAGGED` findings were made;
    #: ``entries`` then shows one ``[WITHHELD: …]`` placeholder in their place (so it is
    #: shorter than the input) and keeps the approved entries after it.
    withheld: tuple[int, ...] = ()

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
    ``(split across adjacent entries)`` after the ids. Once `MAX_FLAGGED` findings are
    made, the rest of the file (but its approved entries) is withheld behind one
    ``[WITHHELD: …]`` placeholder: see `ScanReport.withheld`.
    """
    return _FileScan(TARGET_FILES[target], entries, set(approved)).run()


#: Split payloads are looked for in windows of entries whose joined text holds at most
#: twice this many characters, each window overlapping the next by at least this many: a
#: payload whose joined text is shorter than this always lies whole in some window, and
#: every character is scanned about twice, however many entries the file holds.
SPLIT_WINDOW_CHARS = 4096

#: After this many findings (entries blocked alone, or split runs), the rest of the file is
#: withheld from the prompt unscanned: a file that hostile is not a person's notes, and
#: scanning all of it could cost seconds at every session start (each finding costs a few
#: scans of its run). The scan flags about 2.5 % of the project's hard benign notes, so a
#: 2,000-note file (the default budget holds about 30) stays well below it.
MAX_FLAGGED = 100


class _FileScan:
    """One `scan_entries` pass: windows of the joined entries, read in file order.

    A window's joined text is scanned first; only a window that trips has its entries
    scanned one by one (then searched for split runs). This relies on the property the
    split search has always relied on (its galloping search): a text that trips still
    trips with more entries joined around it. ``eager`` scans every entry alone first
    (the entry-by-entry path, kept to test that both give the same blocked set).
    """

    def __init__(
        self,
        filename: str,
        entries: list[str],
        approved: set[str],
        *,
        eager: bool = False,
        bound: int | None = None,
    ) -> None:
        self.filename = filename
        self.entries = entries
        self.approved = approved
        self.work = list(entries)
        self.resolved = [False] * len(entries)
        self.frozen: set[int] = set()
        self.blocked: list[BlockedEntries] = []
        self.eager = eager
        self.bound = MAX_FLAGGED if bound is None else bound

    def resolve(self, i: int) -> None:
        """Scan entry ``i`` alone (once); a flagged or too large one becomes a placeholder."""
        if self.resolved[i]:
            return
        self.resolved[i] = True
        entry = self.entries[i]
        if entry in self.approved:
            self.frozen.add(i)
            return
        if len(entry) > MAX_SCAN_CHARS:
            self.work[i] = (
                f"[BLOCKED: {self.filename} entry too large to scan ({len(entry):,} chars). "
                f"{_REMOVE_HINT}]"
            )
            self.frozen.add(i)
            self.blocked.append(BlockedEntries((i,), (i, i), ("too_large_to_scan",), False))
            return
        ids = _entry_ids(entry)
        if ids:
            self.work[i] = _placeholder(self.filename, ids, split=False)
            self.frozen.add(i)
            self.blocked.append(BlockedEntries((i,), (i, i), ids, split=False))

    def window(self, start: int) -> int:
        """`_window_end` from ``start`` with every entry of the window, and the one after
        it (whose length decides the end), resolved."""
        n = len(self.work)
        while True:
            end = _window_end(self.work, start)
            pending = [i for i in range(start, min(end + 1, n)) if not self.resolved[i]]
            if not pending:
                return end
            for i in pending:  # placeholders change lengths: the window may move
                self.resolve(i)

    def fits(self, start: int, probe: int) -> bool:
        """Whether entry ``probe`` lies in the window from ``start`` (resolving only the
        entries up to it: the window's end depends on the lengths before it alone)."""
        if probe >= len(self.work):
            return False
        for i in range(start, probe + 1):
            self.resolve(i)
        size = sum(len(self.work[i]) + 3 for i in range(start, probe + 1))
        return probe - start < 2 or size <= 2 * SPLIT_WINDOW_CHARS

    def clean_window(self, start: int) -> int | None:
        """The end of the window from ``start`` when its joined text is clean as it stands
        (its unread entries are then clean alone: marked read); ``None`` when it trips, or
        has no unread entry, or one too large to scan."""
        n = len(self.work)
        while True:
            end = _window_end(self.work, start)
            if end < n and not self.resolved[end]:
                before = self.work[end]
                self.resolve(end)
                if self.work[end] != before:
                    continue
            break
        pending = [i for i in range(start, end) if not self.resolved[i]]
        if not pending or any(len(self.entries[i]) > MAX_SCAN_CHARS for i in pending):
            return None
        if _ids(serialise(self.work[start:end])):
            return None
        for i in pending:
            self.resolved[i] = True
            if self.entries[i] in self.approved:
                self.frozen.add(i)
        return end

    def trips(self, first: int, last: int) -> bool:
        """Whether the joined text of ``work[first:last+1]`` trips the scan (one entry read
        alone already and left as it is, neither approved nor blocked, is known clean)."""
        if first == last and self.resolved[first] and first not in self.frozen:
            return False
        return bool(_ids(serialise(self.work[first : last + 1])))

    def find(self, start: int) -> tuple[tuple[int, int] | None, int]:
        """A short run ``[first, last]`` from ``start`` whose joined text trips (or
        ``None``), and the window's end (``-1`` when a run was found before it was needed).

        The shortest tripping prefix (which fixes ``last``) is found by galloping —
        prefixes of 1, 2, 4 … entries, then a binary search in the last step — so a short
        payload costs a few short scans (and scanning a few entries alone) and a clean
        window about two scans of its text; then the latest start that still trips fixes
        ``first``. When ``work[start]`` passed the scan alone already (neither approved
        nor a placeholder), the first probe is two entries.
        """
        clean = start if start not in self.frozen else start - 1  # work[start:clean+1] clean
        step, tripping, end = 1, -1, -1
        while tripping < 0:
            probe = clean + step
            if end < 0 and not self.fits(start, probe):
                end = self.window(start)
            if end >= 0:
                probe = min(probe, end - 1)
            if self.trips(start, probe):
                tripping = probe
            elif end >= 0 and probe >= end - 1:
                return None, end
            else:
                clean, step = probe, step * 2
        while tripping - clean > 1:
            mid = (clean + tripping) // 2
            if self.trips(start, mid):
                tripping = mid
            else:
                clean = mid
        last = tripping
        trips, clean_from = start, last + 1  # work[trips:last+1] trips; work[clean_from:] clean
        while clean_from - trips > 1:
            mid = (trips + clean_from) // 2
            if self.trips(mid, last):
                trips = mid
            else:
                clean_from = mid
        return (trips, last), end

    def run(self) -> ScanReport:
        n = len(self.work)
        if self.eager:
            for i in range(n):
                self.resolve(i)
        start = 0
        # Right after a found run the next window likely trips too: gallop at once rather
        # than scan the whole window first.
        whole_first = not self.eager
        while start < n:
            if len(self.blocked) >= self.bound:
                return self.withhold(start)
            found: tuple[int, int] | None = None
            end = (self.clean_window(start) or -1) if whole_first else -1
            if end < 0:
                found, end = self.find(start)
            if found is None:
                if end >= n:
                    break
                start = _next_window(self.work, start, end)
                whole_first = not self.eager
                continue
            whole_first = False
            first, last = found
            ids = _ids(serialise(self.work[first : last + 1]))
            victims = tuple(i for i in range(first, last + 1) if i not in self.frozen)
            if not victims:
                start = first + 1  # every entry of the run is approved or already a placeholder
                continue
            for i in victims:
                self.work[i] = _placeholder(self.filename, ids, split=True)
                self.frozen.add(i)
            self.blocked.append(BlockedEntries(victims, (first, last), ids, split=True))
            start = last + 1
        return ScanReport(self.work, self.blocked)

    def withhold(self, cut: int) -> ScanReport:
        """The report when the bound is reached: entries before ``cut`` are fully checked;
        after it, approved entries stay and the rest is replaced by one placeholder."""
        withheld = tuple(
            i for i in range(cut, len(self.work)) if self.entries[i] not in self.approved
        )
        if not withheld:
            return ScanReport(self.work, self.blocked)
        shown = self.work[:cut]
        notice = _withheld_placeholder(self.filename, len(self.blocked), cut, len(withheld))
        for i in range(cut, len(self.work)):
            if i == withheld[0]:
                shown.append(notice)
            elif self.entries[i] in self.approved:
                shown.append(self.entries[i])
        blocked = [item for item in self.blocked if item.indexes[0] < cut]
        return ScanReport(shown, blocked, withheld)


def _withheld_placeholder(filename: str, found: int, checked: int, count: int) -> str:
    return (
        f"[WITHHELD: {filename} is not shown past entry {checked}: its first {checked} "
        f"entries hold {found} blocked threats, more than a person's notes do. "
        f"{count} remaining entr{'y is' if count == 1 else 'ies are'} withheld unscanned. "
        "Tell the user to review and clean the file with `hermes-memory memory show` and "
        "`hermes-memory memory remove` (or the dashboard); approved entries are still shown.]"
    )


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


def sanitize_for_prompt(
    target: str, entries: list[str], approved: Collection[str] = ()
) -> list[str]:
    """``entries`` with every flagged entry replaced by a ``[BLOCKED: …]`` placeholder.

    Flagged means: the entry alone trips the strict scan, or it is part of a run of adjacent
    entries whose joined text does (see `scan_entries`). Entries in ``approved`` are kept.
    """
    return scan_entries(target, entries, approved).entries
