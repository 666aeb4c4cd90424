"""`MemoryStore`: the curated MEMORY.md / USER.md store (live state, frozen snapshot, writes).

Two states per target:

* **live** — the entry list, refreshed from disk by every mutation and by `refresh`;
* **snapshot** — the rendered system-prompt block captured by `load_from_disk`, never changed
  by writes, so the system prompt stays byte-stable for a whole session.

Every mutation takes the file's lock, re-reads the file, applies the change to what is on
disk *now* (never to a stale in-memory copy), writes the whole file atomically and updates
the metadata sidecar. Results are plain dicts in the reference's response shapes; the
``memory`` tool (`hermes_memory_builtin.tool`) serialises them.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_memory_builtin.drift import check_drift, save_backup
from hermes_memory_builtin.errors import MemoryFileError
from hermes_memory_builtin.files import (
    STALE_TEMP_AGE_S,
    TEMP_PREFIX,
    clean_stale_temps,
    ensure_memory_dir,
)
from hermes_memory_builtin.format import (
    TARGET_FILES,
    RawFile,
    char_count,
    dedupe,
    delimiter_problem,
    format_count_usage,
    format_usage,
    hermes_entries,
    normalise_newlines,
    parse_entries,
    preview,
    read_raw,
    render_block,
    serialise,
)
from hermes_memory_builtin.locking import LockError, exclusive_lock
from hermes_memory_builtin.scan import scan_entries, write_threat
from hermes_memory_builtin.sidecar import (
    EntryMeta,
    approved_entries,
    entry_key,
    load_sidecar,
    now_iso,
    reconcile,
    save_sidecar,
)
from hermes_memory_builtin.similarity import find_near_duplicate
from hermes_memory_core.coerce import as_positive_int
from hermes_memory_core.config import resolve_home
from hermes_memory_core.fsutil import atomic_write_text
from hermes_memory_core.redact import scrub_secrets

__all__ = [
    "DEFAULT_MEMORY_CHAR_LIMIT",
    "DEFAULT_USER_CHAR_LIMIT",
    "MAX_CONSOLIDATION_FAILURES_PER_TURN",
    "TARGETS",
    "MemoryStore",
    "default_memory_dir",
]

logger = logging.getLogger(__name__)

DEFAULT_MEMORY_CHAR_LIMIT = 2200
DEFAULT_USER_CHAR_LIMIT = 1375
#: Actionable consolidation errors per turn before the terminal "stop retrying" answer.
MAX_CONSOLIDATION_FAILURES_PER_TURN = 3
TARGETS: tuple[str, ...] = ("memory", "user")

SUCCESS_NOTE = "Write saved. This update is complete — do not repeat it."
BATCH_SUFFIX = " No operations were applied (batch is all-or-nothing)."
#: The ``redacted`` field of a successful write whose content had credentials masked (the
#: same key `hermes_memory_core.MemoryManager` sets for tool writes it scrubbed first).
REDACTION_NOTE = (
    "Credentials in the content were replaced by [redacted] before saving: memory is shown "
    "in every future prompt, so secrets are never stored there."
)
#: Mode of the memory files and their sidecars.
FILE_MODE = 0o600

Result = dict[str, Any]


def default_memory_dir() -> Path:
    """``$HERMES_HOME/memories`` (``~/.hermes/memories`` by default), resolved now."""
    return resolve_home() / "memories"


def _coerce_limit(name: str, value: Any) -> int:
    try:
        return as_positive_int(value)
    except ValueError:
        raise ValueError(f"{name} must be a positive integer, got {value!r}") from None


@dataclass
class _Outcome:
    """What a mutation decided: the result dict and, when it writes, the new entries."""

    result: Result
    entries: list[str] | None = None
    metas: dict[str, EntryMeta] | None = None


_Mutation = Callable[[list[str], dict[str, EntryMeta]], _Outcome]


def _locate(entries: list[str], old_text: str) -> list[int]:
    """Indexes of the entries ``old_text`` identifies: exact matches beat substrings."""
    exact = [i for i, entry in enumerate(entries) if entry == old_text]
    if exact:
        return exact
    return [i for i, entry in enumerate(entries) if old_text in entry]


def _distinct(entries: list[str], indexes: list[int]) -> list[int]:
    seen: set[str] = set()
    unique: list[int] = []
    for i in indexes:
        if entries[i] not in seen:
            seen.add(entries[i])
            unique.append(i)
    return unique


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return normalise_newlines(value).strip()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return ""


class MemoryStore:
    """The curated memory of one Hermes home: ``MEMORY.md`` (target ``"memory"``, the agent's
    notes) and ``USER.md`` (target ``"user"``, the user profile).

    :param memory_dir: directory holding the files; ``None`` means ``$HERMES_HOME/memories``
        (``~/.hermes/memories``), resolved on every call so a profile switch is honoured.
    :param memory_char_limit: write budget of MEMORY.md in characters (default 2,200);
        strings such as ``"2200"`` from YAML are accepted.
    :param user_char_limit: write budget of USER.md (default 1,375).
    :param memory_enabled: whether the ``memory`` tool may write MEMORY.md.
    :param user_profile_enabled: whether the ``memory`` tool may write USER.md.
    :param write_origin: origin recorded in the metadata sidecar for writes that do not pass
        their own ``origin`` (for example ``"assistant"``, ``"background_review"``).
    :raises ValueError: when a limit is not a positive integer.

    Call `load_from_disk` once per session to take the snapshot. Mutations (`add`,
    `replace`, `remove`, `apply_batch`) return result dicts and never raise for bad input.
    """

    def __init__(
        self,
        memory_dir: str | os.PathLike[str] | None = None,
        *,
        memory_char_limit: int | str = DEFAULT_MEMORY_CHAR_LIMIT,
        user_char_limit: int | str = DEFAULT_USER_CHAR_LIMIT,
        memory_enabled: bool = True,
        user_profile_enabled: bool = True,
        write_origin: str = "assistant",
    ) -> None:
        self._memory_dir = Path(memory_dir).expanduser() if memory_dir is not None else None
        self.memory_char_limit = _coerce_limit("memory_char_limit", memory_char_limit)
        self.user_char_limit = _coerce_limit("user_char_limit", user_char_limit)
        self.memory_enabled = bool(memory_enabled)
        self.user_profile_enabled = bool(user_profile_enabled)
        self.write_origin = write_origin
        self._live: dict[str, list[str]] = {target: [] for target in TARGETS}
        self._snapshot: dict[str, str | None] = dict.fromkeys(TARGETS)
        self._load_errors: dict[str, str] = {}
        self._load_problems: dict[str, MemoryFileError] = {}
        self._failures = 0
        self._mutex = threading.RLock()

    # ------------------------------------------------------------------ basic properties
    @property
    def memory_dir(self) -> Path:
        """The directory of the memory files (resolved now when none was given)."""
        return self._memory_dir if self._memory_dir is not None else default_memory_dir()

    def path(self, target: str) -> Path:
        """Path of the file behind ``target``."""
        return self.memory_dir / TARGET_FILES[self._check_target(target)]

    def limit(self, target: str) -> int:
        """Character budget of ``target``."""
        target = self._check_target(target)
        return self.memory_char_limit if target == "memory" else self.user_char_limit

    def is_enabled(self, target: str) -> bool:
        """Whether the ``memory`` tool may write ``target``."""
        target = self._check_target(target)
        return self.memory_enabled if target == "memory" else self.user_profile_enabled

    @property
    def load_errors(self) -> dict[str, str]:
        """Targets whose file existed but could not be used at the last load, with the full
        message (path, cause and fix)."""
        return dict(self._load_errors)

    @staticmethod
    def _check_target(target: str) -> str:
        if target not in TARGET_FILES:
            raise ValueError(f"Invalid memory target {target!r}. Use 'memory' or 'user'.")
        return target

    # ------------------------------------------------------------------ reading
    def load_from_disk(self, *, strict: bool = False) -> None:
        """Read both files into the live state and freeze the system-prompt snapshot.

        The memories directory is created (mode 0700) when missing, and ``.mem_*.tmp``
        files left by a killed writer more than 10 minutes ago are removed. Every entry is
        threat-scanned alone and joined with its neighbours; flagged entries appear in the
        snapshot as ``[BLOCKED: …]`` placeholders (entries a human approved are kept).

        A file that exists but cannot be used — a symbolic link (also a linked memories
        directory), not UTF-8, not readable, a directory — is left untouched: its live list
        is empty, the full message is in `load_errors` (the exception in `load_problems`),
        and every write to it is refused until it is fixed (it is never mistaken for an
        empty store).

        :param strict: raise the first problem instead of only recording it (for a command
            line tool that should print it and exit non-zero). Both targets are loaded
            before raising.
        :raises MemoryFileError: only with ``strict=True``; `UnsafeMemoryPath` for links.
        """
        with self._mutex:
            self._load_errors = {}
            self._load_problems = {}
            directory = self.memory_dir
            try:
                ensure_memory_dir(directory)
            except MemoryFileError as exc:
                logger.warning("%s", exc)
                for target in TARGETS:
                    self._live[target] = []
                    self._snapshot[target] = None
                    self._load_problems[target] = exc
                    self._load_errors[target] = str(exc)
                if strict:
                    raise
                return
            self._clean_temps_if_any(directory)
            for target in TARGETS:
                path = self.path(target)
                raw = read_raw(path)
                if not raw.readable:
                    problem = _problem_of(path, raw)
                    logger.warning("memory left untouched: %s", problem)
                    self._load_problems[target] = problem
                    self._load_errors[target] = str(problem)
                    entries: list[str] = []
                else:
                    entries = parse_entries(raw.text)
                limit = self.limit(target)
                used = char_count(entries)
                if used > limit:
                    logger.warning(
                        "%s is over its limit (%s/%s chars); it is loaded whole — consolidate it",
                        path,
                        f"{used:,}",
                        f"{limit:,}",
                    )
                approved = approved_entries(entries, load_sidecar(path)) if entries else set()
                report = scan_entries(target, entries, approved)
                for item in report.blocked:
                    logger.warning(
                        "%s: entr%s %s blocked from the system prompt (%s%s)",
                        path,
                        "y" if len(item.indexes) == 1 else "ies",
                        ", ".join(str(i + 1) for i in item.indexes),
                        ", ".join(item.ids),
                        "; split across adjacent entries" if item.split else "",
                    )
                self._live[target] = entries
                self._snapshot[target] = render_block(target, report.entries, limit)
            if strict:
                for target in TARGETS:
                    if target in self._load_problems:
                        raise self._load_problems[target]

    def _clean_temps_if_any(self, directory: Path) -> None:
        """Remove stale temp files under the MEMORY.md lock, without creating a lock file
        when there is nothing to clean (loading stays read-only in the common case)."""
        try:
            names = [n for n in os.listdir(directory) if n.startswith(TEMP_PREFIX)]
        except OSError:
            return
        if not names:
            return
        try:
            with exclusive_lock(self.path("memory"), timeout=0):
                clean_stale_temps(directory, STALE_TEMP_AGE_S)
        except LockError:
            pass  # a writer is busy; the next write cleans up under its own lock

    @property
    def load_problems(self) -> dict[str, MemoryFileError]:
        """Targets whose file could not be used at the last load, with the exception (its
        ``str`` is a complete message naming the path, the cause and the fix)."""
        return dict(self._load_problems)

    def entries(self, target: str) -> list[str]:
        """The live entries of ``target`` (a copy), as of the last load, refresh or write."""
        with self._mutex:
            return list(self._live[self._check_target(target)])

    def refresh(self, target: str) -> list[str]:
        """Re-read ``target`` from disk into the live state (not the snapshot) and return it.

        Unreadable files leave the live state as it was.
        """
        target = self._check_target(target)
        raw = read_raw(self.path(target))
        with self._mutex:
            if raw.readable:
                self._live[target] = parse_entries(raw.text)
            return list(self._live[target])

    def visible_entries(self, target: str) -> list[str]:
        """`refresh` ``target`` and return its entries as they may be shown to the model:
        entries the threat scan flags (alone or joined with their neighbours) appear as
        ``[BLOCKED: …]`` placeholders, as in the snapshot; human-approved ones as they are."""
        target = self._check_target(target)
        entries = self.refresh(target)
        return scan_entries(
            target, entries, approved_entries(entries, load_sidecar(self.path(target)))
        ).entries

    def format_for_system_prompt(self, target: str) -> str | None:
        """The frozen block taken by `load_from_disk`; ``None`` when the store was empty."""
        with self._mutex:
            return self._snapshot[self._check_target(target)]

    def usage(self, target: str) -> str:
        """Live usage of ``target`` as ``"P% — C/L chars"``."""
        return format_usage(char_count(self.entries(target)), self.limit(target))

    def entry_metadata(self, target: str) -> list[dict[str, Any]]:
        """Entries on disk with their metadata: ``entry``, ``created``, ``updated``, ``origin``
        and ``human_approved`` (a bool).

        Read without the lock and without writing; entries the sidecar does not know yet
        are reported as they would be recorded on the next write.
        """
        path = self.path(target)
        raw = read_raw(path)
        if not raw.readable:
            return []
        entries = parse_entries(raw.text)
        metas = reconcile(load_sidecar(path), entries, path)
        rows: list[dict[str, Any]] = []
        for entry in entries:
            meta = metas[entry_key(entry)]
            rows.append(
                {
                    "entry": entry,
                    "created": meta["created"],
                    "updated": meta["updated"],
                    "origin": meta["origin"],
                    "human_approved": meta.get("human_approved") is True,
                }
            )
        return rows

    # ------------------------------------------------------------------ turn bookkeeping
    def start_turn(self) -> None:
        """Reset the per-turn consolidation-failure counter (call at every user turn)."""
        with self._mutex:
            self._failures = 0

    @property
    def consolidation_failures(self) -> int:
        """Consolidation failures counted in the current turn."""
        return self._failures

    def _consolidation_failure(self, result: Result) -> Result:
        self._failures += 1
        if self._failures > MAX_CONSOLIDATION_FAILURES_PER_TURN:
            return {
                "success": False,
                "done": True,
                "error": (
                    f"Memory consolidation failed {self._failures} times this turn. Stop "
                    "retrying memory calls — leave memory unchanged for now and continue with "
                    "your reply to the user. The fact can be saved in a later turn."
                ),
            }
        return result

    def _success(self, target: str, entries: list[str], message: str, **extra: Any) -> Result:
        self._failures = 0
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

    @staticmethod
    def _invalid_target(target: Any) -> Result:
        return {
            "success": False,
            "error": f"Invalid memory target '{target}'. Use 'memory' or 'user'.",
        }

    # ------------------------------------------------------------------ the write protocol
    def _mutate(self, target: str, *, drift_check: bool, mutation: _Mutation) -> Result:
        path = self.path(target)
        name = TARGET_FILES[target]
        with self._mutex:
            try:
                ensure_memory_dir(path.parent)
            except MemoryFileError as exc:
                return {
                    "success": False,
                    "error": f"Refusing to write {name}: {exc}. Nothing was changed.",
                }
            try:
                with exclusive_lock(path):
                    clean_stale_temps(path.parent, STALE_TEMP_AGE_S)
                    raw = read_raw(path)
                    if not raw.readable:
                        return {
                            "success": False,
                            "error": _unreadable_message(name, _problem_of(path, raw)),
                        }
                    text = raw.text or ""
                    disk = parse_entries(text)
                    if drift_check and raw.data is not None:
                        report = check_drift(text, disk, self.limit(target))
                        if report.drifted:
                            logger.warning("%s drifted: %s", path, "; ".join(report.reasons))
                            return _drift_error(name, save_backup(path, raw.data))
                    self._live[target] = disk
                    metas = reconcile(load_sidecar(path), disk, path)
                    outcome = mutation(list(disk), metas)
                    if outcome.entries is not None:
                        normalised = _normalisation(raw, disk)
                        backup = save_backup(path, raw.data) if normalised and raw.data else ""
                        atomic_write_text(
                            path, serialise(outcome.entries), tmp_prefix=TEMP_PREFIX, mode=FILE_MODE
                        )
                        self._live[target] = outcome.entries
                        save_sidecar(path, outcome.entries, outcome.metas or metas)
                        if normalised:
                            outcome.result.update(_normalised_fields(name, normalised, backup))
                    return outcome.result
            except LockError as exc:
                return {
                    "success": False,
                    "error": f"Could not lock {name}: {exc}. Nothing was changed.",
                }
            except OSError as exc:
                return {
                    "success": False,
                    "error": f"Failed to write memory file {path}: {exc}. Nothing was changed.",
                }

    def _echo(self, target: str, entries: list[str], metas: dict[str, EntryMeta]) -> list[str]:
        """``entries`` as they may be shown to the model in a response: flagged entries as
        the snapshot's ``[BLOCKED: …]`` placeholders (a hand-planted payload must not reach
        the model through an error response either)."""
        return scan_entries(target, entries, approved_entries(entries, metas)).entries

    def _split_threat(
        self,
        target: str,
        before: list[str],
        after: list[str],
        metas_before: dict[str, EntryMeta],
        metas_after: dict[str, EntryMeta],
    ) -> Result | None:
        """A refusal when ``after`` blocks an entry that ``before`` did not: the write would
        complete an instruction split across adjacent entries."""
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
            others = [after[i] for i in range(first, last + 1) if after[i] not in changed]
            ids = ", ".join(f"'{pid}'" for pid in item.ids)
            shown = ", ".join(f"'{preview(entry, 60)}'" for entry in others)
            together = (
                f" together with the adjacent entr{'y' if len(others) == 1 else 'ies'} {shown}"
                if others
                else ""
            )
            return {
                "success": False,
                "error": (
                    f"Blocked: this content, read{together}, matches threat pattern(s) {ids}. "
                    "Memory entries are shown joined in the system prompt, so an instruction "
                    "split across entries is still an instruction. Rephrase the content, or "
                    "change the other entry first."
                ),
            }
        return None

    def _room_advice(
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
        remaining = list(final)
        for i in order:
            if char_count(remaining) <= limit:
                break
            chosen.append(removable[i])
            remaining.remove(removable[i])
        if char_count(remaining) > limit:
            kept = [entry for entry in final if entry not in removable]
            over = char_count(kept) - limit
            text = (
                f" Free at least {needed:,} chars. Even with every other entry removed the "
                f"result would still be {over:,} chars over the limit: shorten the new content."
            )
            shown = self._echo(target, list(removable), metas)
            return text, {"chars_to_free": needed, "suggested_removals": shown}
        text = (
            f" Free at least {needed:,} chars: removing the {len(chosen)} least recently "
            "updated entr" + ("y" if len(chosen) == 1 else "ies") + " listed in "
            "suggested_removals would be enough (or shorten entries by that much)."
        )
        return text, {
            "chars_to_free": needed,
            "suggested_removals": self._echo(target, chosen, metas),
        }

    # ------------------------------------------------------------------ add
    def add(
        self,
        target: str,
        content: str,
        *,
        origin: str | None = None,
        approved_by_human: bool = False,
    ) -> Result:
        """Append ``content`` as a new entry of ``target``.

        Exact duplicates succeed without writing; near-duplicates (same text but for case,
        punctuation, whitespace or a tiny edit) and additions over the budget are refused
        with the entry they resemble or the characters to free. Content holding the entry
        separator (a line of only ``§``) is refused. Credentials are masked before saving
        (the result then carries ``redacted``). Content that trips the threat scan — alone,
        or joined with the existing entries (a split instruction) — is refused.

        :param approved_by_human: a human at the command line explicitly accepted this
            content: a threat-scan refusal is overridden (the result says which, in
            ``threat_overridden``), the entry is recorded as human-approved in the sidecar and
            is never blocked from the system prompt at load for a threat. The ``memory`` tool
            never sets this. Editing the entry later without approval drops the approval.
        """
        if target not in TARGET_FILES:
            return self._invalid_target(target)
        content = _as_text(content)
        if not content:
            return {"success": False, "error": "Content cannot be empty."}
        problem = delimiter_problem(content)
        if problem:
            return {"success": False, "error": problem}
        masked = scrub_secrets(content)
        redacted = masked != content
        content = masked
        threat = write_threat(content)
        if threat and not approved_by_human:
            return {"success": False, "error": threat}
        origin = origin or self.write_origin
        limit = self.limit(target)

        def mutation(entries: list[str], metas: dict[str, EntryMeta]) -> _Outcome:
            if content in entries:
                meta = metas.get(entry_key(content))
                if approved_by_human and meta is not None and not meta.get("human_approved"):
                    approved_metas = dict(metas)
                    approved_metas[entry_key(content)] = _approved(meta)
                    result = self._success(
                        target,
                        entries,
                        "Entry already exists (no duplicate added); marked as approved by a human.",
                    )
                    return _Outcome(result, entries, approved_metas)
                return _Outcome(
                    self._success(target, entries, "Entry already exists (no duplicate added).")
                )
            used = char_count(entries)
            similar = find_near_duplicate(content, entries)
            if similar is not None:
                return _Outcome(
                    self._consolidation_failure(
                        {
                            "success": False,
                            "error": (
                                "Not added: this is nearly the same as an existing entry: "
                                f"'{preview(similar)}'. If it updates that entry, use "
                                "action='replace' with old_text set to part of it and content "
                                "set to the complete new entry; if memory already says this, "
                                "leave it unchanged."
                            ),
                            "similar_entry": self._echo(target, [similar], metas)[0],
                            "current_entries": self._echo(target, entries, metas),
                            "usage": format_count_usage(used, limit),
                        }
                    )
                )
            final = [*entries, content]
            if char_count(final) > limit:
                advice, extra = self._room_advice(target, final, entries, metas)
                return _Outcome(
                    self._consolidation_failure(
                        {
                            "success": False,
                            "error": (
                                f"Memory at {used:,}/{limit:,} chars. Adding this entry "
                                f"({len(content)} chars) would exceed the limit. Consolidate "
                                "now: use 'replace' to merge overlapping entries into shorter "
                                "ones or 'remove' stale or less important entries (see "
                                "current_entries below), then retry this add — all in this "
                                "turn." + advice
                            ),
                            "current_entries": self._echo(target, entries, metas),
                            "usage": format_count_usage(used, limit),
                            **extra,
                        }
                    )
                )
            stamp = now_iso()
            new_metas = dict(metas)
            meta = EntryMeta(created=stamp, updated=stamp, origin=origin)
            new_metas[entry_key(content)] = _approved(meta) if approved_by_human else meta
            if not approved_by_human:
                refusal = self._split_threat(target, entries, final, metas, new_metas)
                if refusal is not None:
                    return _Outcome(refusal)
            return _Outcome(self._success(target, final, "Entry added."), final, new_metas)

        result = self._mutate(target, drift_check=False, mutation=mutation)
        return _annotate(result, redacted=redacted, approved=approved_by_human, threat=threat)

    # ------------------------------------------------------------------ replace / remove
    def _locate_single(
        self,
        target: str,
        entries: list[str],
        old_text: str,
        verb: str,
        metas: dict[str, EntryMeta],
    ) -> int | Result:
        matches = _distinct(entries, _locate(entries, old_text))
        if not matches:
            return self._consolidation_failure(
                {
                    "success": False,
                    "error": (
                        f"No entry matched '{old_text}'. Check current_entries below and retry "
                        f"with the exact text of the entry you want to {verb}."
                    ),
                    "current_entries": self._echo(target, entries, metas),
                }
            )
        if len(matches) > 1:
            return {
                "success": False,
                "error": f"Multiple entries matched '{old_text}'. Be more specific.",
                "matches": [
                    preview(entry)
                    for entry in self._echo(target, [entries[i] for i in matches], metas)
                ],
            }
        return matches[0]

    def replace(
        self,
        target: str,
        old_text: str,
        new_content: str,
        *,
        origin: str | None = None,
        approved_by_human: bool = False,
    ) -> Result:
        """Overwrite the whole entry identified by ``old_text`` with ``new_content``.

        ``old_text`` identifies the entry (an exact entry, else a unique substring); it is
        not spliced. ``new_content`` is the complete new entry; it is checked like `add`
        content (separator, credentials, threat scan alone and joined with its neighbours).
        The new entry keeps the old one's ``created`` time; a human approval of the old
        entry is not carried over.

        :param approved_by_human: as for `add`: override a threat-scan refusal and record
            the new entry as approved by a human. Never set by the ``memory`` tool.
        """
        if target not in TARGET_FILES:
            return self._invalid_target(target)
        old = _as_text(old_text)
        new = _as_text(new_content)
        if not old:
            return {"success": False, "error": "old_text cannot be empty."}
        if not new:
            return {
                "success": False,
                "error": "new_content cannot be empty. Use 'remove' to delete entries.",
            }
        problem = delimiter_problem(new)
        if problem:
            return {"success": False, "error": problem}
        masked = scrub_secrets(new)
        redacted = masked != new
        new = masked
        threat = write_threat(new)
        if threat and not approved_by_human:
            return {"success": False, "error": threat}
        origin = origin or self.write_origin
        limit = self.limit(target)

        def mutation(entries: list[str], metas: dict[str, EntryMeta]) -> _Outcome:
            located = self._locate_single(target, entries, old, "replace", metas)
            if isinstance(located, dict):
                return _Outcome(located)
            previous = entries[located]
            final = list(entries)
            final[located] = new
            final = dedupe(final)
            if char_count(final) > limit:
                used = char_count(entries)
                removable = [entry for i, entry in enumerate(entries) if i != located]
                advice, extra = self._room_advice(target, final, removable, metas)
                return _Outcome(
                    self._consolidation_failure(
                        {
                            "success": False,
                            "error": (
                                f"Replacement would put memory at {char_count(final):,}/"
                                f"{limit:,} chars. Shorten the new content, or 'remove' other "
                                "stale or less important entries to make room (see "
                                "current_entries below), then retry — all in this turn." + advice
                            ),
                            "current_entries": self._echo(target, entries, metas),
                            "usage": format_count_usage(used, limit),
                            **extra,
                        }
                    )
                )
            new_metas = dict(metas)
            old_meta = metas.get(entry_key(previous))
            stamp = now_iso()
            meta = EntryMeta(
                created=old_meta["created"] if old_meta else stamp, updated=stamp, origin=origin
            )
            new_metas[entry_key(new)] = _approved(meta) if approved_by_human else meta
            if not approved_by_human:
                refusal = self._split_threat(target, entries, final, metas, new_metas)
                if refusal is not None:
                    return _Outcome(refusal)
            shown_previous = self._echo(target, [previous], metas)[0]
            result = self._success(target, final, "Entry replaced.", replaced_entry=shown_previous)
            return _Outcome(result, final, new_metas)

        result = self._mutate(target, drift_check=True, mutation=mutation)
        return _annotate(result, redacted=redacted, approved=approved_by_human, threat=threat)

    def remove(self, target: str, old_text: str, *, origin: str | None = None) -> Result:
        """Delete the entry identified by ``old_text`` (removing the last entry is allowed)."""
        del origin  # removals leave no metadata behind
        if target not in TARGET_FILES:
            return self._invalid_target(target)
        old = _as_text(old_text)
        if not old:
            return {"success": False, "error": "old_text cannot be empty."}

        def mutation(entries: list[str], metas: dict[str, EntryMeta]) -> _Outcome:
            located = self._locate_single(target, entries, old, "remove", metas)
            if isinstance(located, dict):
                return _Outcome(located)
            previous = entries[located]
            final = [entry for i, entry in enumerate(entries) if i != located]
            shown_previous = self._echo(target, [previous], metas)[0]
            result = self._success(target, final, "Entry removed.", removed_entry=shown_previous)
            return _Outcome(result, final, metas)

        return self._mutate(target, drift_check=True, mutation=mutation)

    # ------------------------------------------------------------------ batch
    def apply_batch(
        self, target: str, operations: Iterable[Any], *, origin: str | None = None
    ) -> Result:
        """Apply ``operations`` (``{action, content?/new_text?, old_text?}``) all or nothing.

        Operations run in order on a working copy of the entries on disk; the budget is
        checked on the final state only. Any failing operation aborts the whole batch, and
        a batch that would empty a non-empty store is refused. Every failure carries
        ``current_entries`` (the entries on disk, flagged ones as placeholders) and ``usage``.
        Add/replace contents are checked like `add` content (separator, credentials, threat
        scan alone and on the final joined entries).
        """
        return self._batch(target, operations, origin=origin)

    def resolve_batch(
        self,
        target: str,
        operations: Iterable[Any],
        *,
        origin: str | None = None,
        allow_empty: bool = False,
    ) -> Result:
        """Dry run of `apply_batch`: the same checks under the lock, nothing written.

        The answer is what `apply_batch` would answer now; on success it also holds
        ``matched_entries``: ``{op index (1-based): the full entry text}`` of every replace
        and remove step, the exact entries a staged change is pinned to. ``allow_empty``
        checks a single ``remove`` (which may delete the last entry) rather than a batch.
        """
        return self._batch(target, operations, origin=origin, dry_run=True, allow_empty=allow_empty)

    def apply_pinned(
        self,
        target: str,
        operations: Iterable[Any],
        pinned: dict[int, str],
        *,
        origin: str | None = None,
        allow_empty: bool = False,
    ) -> Result:
        """Apply a staged change whose replace/remove steps are pinned to exact entries.

        ``pinned`` maps op indexes (1-based) to the full entry each replace/remove step was
        reviewed against; the step touches exactly that entry (no substring matching). If
        any pinned entry is no longer in the file as it was, nothing is applied and the
        answer is a failure with ``stale_entry``. ``allow_empty`` lets a staged single
        ``remove`` delete the last entry, as a direct `remove` may.
        """
        return self._batch(
            target, operations, origin=origin, pinned=pinned, allow_empty=allow_empty
        )

    def _batch(
        self,
        target: str,
        operations: Iterable[Any],
        *,
        origin: str | None,
        dry_run: bool = False,
        pinned: dict[int, str] | None = None,
        allow_empty: bool = False,
    ) -> Result:
        if target not in TARGET_FILES:
            return self._invalid_target(target)
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
        for index, op in enumerate(ops, start=1):
            if isinstance(op, dict) and op.get("action") in ("add", "replace"):
                text = _op_content(op)
                problem = delimiter_problem(text) if text else None
                if problem:
                    return {
                        "success": False,
                        "error": f"Operation {index}: {problem}{BATCH_SUFFIX}",
                    }
                masked = scrub_secrets(text)
                redacted = redacted or masked != text
                threat = write_threat(masked) if masked else None
                if threat:
                    return {"success": False, "error": f"Operation {index}: {threat}{BATCH_SUFFIX}"}
                op = {key: value for key, value in op.items() if key != "new_text"}
                op["content"] = masked
            cleaned.append(op)
        ops = cleaned
        origin = origin or self.write_origin
        limit = self.limit(target)
        name = TARGET_FILES[target]

        def mutation(entries: list[str], metas: dict[str, EntryMeta]) -> _Outcome:
            used = char_count(entries)

            def fail(message: str, extra: dict[str, Any] | None = None) -> _Outcome:
                return _Outcome(
                    self._consolidation_failure(
                        {
                            "success": False,
                            "error": message,
                            "current_entries": self._echo(target, entries, metas),
                            "usage": format_count_usage(used, limit),
                            **(extra or {}),
                        }
                    )
                )

            def abort(message: str) -> _Outcome:
                return fail(message + BATCH_SUFFIX)

            for entry in (pinned or {}).values():
                if entry not in entries:
                    return _Outcome(_stale_error(entry))
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
                old = _as_text(op.get("old_text"))
                if action == "add":
                    if not content:
                        return abort(f"{label}: content is required.")
                    if content in working:
                        continue
                    similar = find_near_duplicate(content, working)
                    if similar is not None:
                        return abort(
                            f"{label}: nearly the same as the existing entry "
                            f"'{preview(similar)}' -- use replace to update that entry instead."
                        )
                    working.append(content)
                    new_metas[entry_key(content)] = EntryMeta(
                        created=stamp, updated=stamp, origin=origin
                    )
                    continue
                if not old:
                    return abort(f"{label}: old_text is required.")
                if action == "replace" and not content:
                    return abort(f"{label}: content is required (use action='remove' to delete).")
                if pinned is not None and index in pinned:
                    exact = [i for i, entry in enumerate(working) if entry == pinned[index]]
                    if not exact:
                        return _Outcome(_stale_error(pinned[index]))
                    matches = exact[:1]
                else:
                    matches = _distinct(working, _locate(working, old))
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
                new_metas[entry_key(content)] = EntryMeta(
                    created=old_meta["created"] if old_meta else stamp,
                    updated=stamp,
                    origin=origin,
                )
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
                advice, extra = self._room_advice(target, working, unchanged, new_metas)
                return fail(
                    f"After applying all {len(ops)} operations, memory would be at "
                    f"{total:,}/{limit:,} chars -- over the limit. Remove or shorten more "
                    "entries in the same batch, then retry." + advice,
                    extra,
                )
            refusal = self._split_threat(target, entries, working, metas, new_metas)
            if refusal is not None:
                refusal["error"] += BATCH_SUFFIX
                return _Outcome(refusal)
            extra_fields: dict[str, Any] = {}
            if replaced:
                extra_fields["replaced_entries"] = self._echo_map(target, replaced, metas)
            if removed:
                extra_fields["removed_entries"] = self._echo_map(target, removed, metas)
            result = self._success(
                target, working, f"Applied {len(ops)} operation(s).", **extra_fields
            )
            if dry_run:
                result["matched_entries"] = {**replaced, **removed}
                return _Outcome(result)
            if working == entries:
                return _Outcome(result)
            return _Outcome(result, working, new_metas)

        result = self._mutate(target, drift_check=True, mutation=mutation)
        return _annotate(result, redacted=redacted, approved=False, threat=None)

    def _echo_map(
        self, target: str, items: dict[int, str], metas: dict[str, EntryMeta]
    ) -> dict[int, str]:
        shown = [self._echo(target, [text], metas)[0] for text in items.values()]
        return dict(zip(items, shown, strict=True))


def _stale_error(entry: str) -> Result:
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


def _approved(meta: EntryMeta) -> EntryMeta:
    approved = EntryMeta(created=meta["created"], updated=meta["updated"], origin=meta["origin"])
    approved["human_approved"] = True
    return approved


def _annotate(result: Result, *, redacted: bool, approved: bool, threat: str | None) -> Result:
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


def _op_content(op: dict[str, Any]) -> str:
    content = op.get("content")
    if content is None:
        content = op.get("new_text")
    return _as_text(content)


def _problem_of(path: Path, raw: RawFile) -> MemoryFileError:
    if raw.problem is not None:
        return raw.problem
    return MemoryFileError(path, f"cannot be read ({raw.error})", "check the file, then retry")


def _unreadable_message(name: str, problem: MemoryFileError) -> str:
    return (
        f"Refusing to write {name}: the file exists on disk but could not be read — "
        f"{problem.path} {problem.problem}. Treating an unreadable file as empty and saving "
        "would wipe existing memory, so the write is refused. Nothing was changed. Tell the "
        f"user how to fix it: {problem.fix}."
    )


def _normalisation(raw: RawFile, entries: list[str]) -> str:
    """Why rewriting ``raw`` as ``entries`` changes how Hermes Agent reads the file ("" when
    it does not): its reader has none of our tolerance for CRLF, spaces or blank lines
    around '§', and older versions kept a BOM."""
    data = raw.data
    if not data:
        return ""
    if data == serialise(entries).encode("utf-8"):
        return ""
    reasons = []
    if data.startswith(b"\xef\xbb\xbf"):
        reasons.append("a byte-order mark (BOM) at the start")
    if b"\r" in data:
        reasons.append("CRLF or CR line endings")
    theirs = hermes_entries(data)
    if theirs is not None and theirs != entries and b"\r" not in data:
        reasons.append("a '§' separator line with spaces or tabs around the sign")
    return " and ".join(reasons)


def _normalised_fields(name: str, reasons: str, backup: str) -> Result:
    return {
        "normalized_file": True,
        "normalized_backup": backup,
        "normalization_note": (
            f"{name} had been edited by hand ({reasons}); it was read leniently and has now "
            f"been rewritten in the canonical format that Hermes Agent reads (entries "
            f"separated by a line holding only '§'). The file as it was is saved at {backup}."
        ),
    }


def _drift_error(name: str, backup: str) -> Result:
    return {
        "success": False,
        "error": (
            f"Refusing to write {name}: file on disk has content that wouldn't round-trip "
            "through the memory tool (likely added by the patch tool, a shell append, a manual "
            f"edit, or a concurrent session). A snapshot was saved to {backup}. Resolve the "
            "drift first — either rewrite the file as a clean §-delimited list of entries, or "
            "move the extra content out — then retry. This guard exists to prevent silent data "
            "loss (issue #26045)."
        ),
        "drift_backup": backup,
        "remediation": (
            "Open the .bak file, integrate the missing entries into the memory tool one at a "
            "time via memory(action=add, content=...), then remove or rewrite the original "
            "file to a clean state."
        ),
    }
