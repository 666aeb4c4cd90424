"""`MemoryStore`: the curated MEMORY.md / USER.md store (live state, frozen snapshot, writes).

Two states per target:

* **live** — the entry list, refreshed from disk by every mutation and by `refresh`;
* **snapshot** — the rendered system-prompt block captured by `load_from_disk`, never changed
  by writes, so the system prompt stays byte-stable for a whole session.

The store is a facade over modules with one job each: `hermes_memory_builtin._file_writes` (the
write protocol: lock, re-read, drift check, atomic write, sidecar), `.editing` and `.batch`
(what each edit decides), `.feedback` (the answers given to the model and the per-turn
failure count) and `.snapshot` (reading a file for the system prompt). Results are plain
dicts in the reference's response shapes; the ``memory`` tool (`hermes_memory_builtin._tool`)
serialises them.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from hermes_memory_builtin._batches import batch_mutation, screen_operations
from hermes_memory_builtin._entry_edits import (
    add_mutation,
    as_text,
    remove_mutation,
    replace_mutation,
    screen_content,
)
from hermes_memory_builtin._errors import MemoryFileError
from hermes_memory_builtin._feedback import (
    MAX_CONSOLIDATION_FAILURES_PER_TURN,
    Result,
    WriteFeedback,
    annotate,
    invalid_target,
)
from hermes_memory_builtin._file_writes import FILE_MODE, Mutation, clean_temps_if_any, mutate_file
from hermes_memory_builtin._files import ensure_memory_dir
from hermes_memory_builtin._format import (
    TARGET_FILES,
    RawFile,
    char_count,
    format_usage,
    parse_entries,
)
from hermes_memory_builtin._memory_dir import MemoryDir
from hermes_memory_builtin._reading import _open_problem, read_raw
from hermes_memory_builtin._scan import scan_entries
from hermes_memory_builtin._sidecar import (
    EntryMeta,
    approved_entries,
    load_sidecar,
    metadata_rows,
    reconcile,
)
from hermes_memory_builtin._snapshot import LoadedTarget, load_target
from hermes_memory_core.config import resolve_home
from hermes_memory_core.kit import as_positive_int

__all__ = [
    "DEFAULT_MEMORY_CHAR_LIMIT",
    "DEFAULT_USER_CHAR_LIMIT",
    "FILE_MODE",
    "MAX_CONSOLIDATION_FAILURES_PER_TURN",
    "TARGETS",
    "MemoryStore",
    "Result",
    "default_memory_dir",
]

logger = logging.getLogger(__name__)

DEFAULT_MEMORY_CHAR_LIMIT = 2200
DEFAULT_USER_CHAR_LIMIT = 1375
TARGETS: tuple[str, ...] = ("memory", "user")


def default_memory_dir() -> Path:
    """``$HERMES_HOME/memories`` (``~/.hermes/memories`` by default), resolved now."""
    return resolve_home() / "memories"


def _coerce_limit(name: str, value: Any) -> int:
    try:
        return as_positive_int(value)
    except ValueError:
        raise ValueError(f"{name} must be a positive integer, got {value!r}") from None


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
        # Why composed: the answers and the per-turn failure count are one concern
        # shared by every edit (and by subclasses that store the text elsewhere).
        self._feedback = WriteFeedback(self.limit)
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
                loaded = {target: LoadedTarget([], None, exc) for target in TARGETS}
            else:
                loaded = self._load_targets(directory)
            for target, one in loaded.items():
                self._live[target] = one.entries
                self._snapshot[target] = one.block
                if one.problem is not None:
                    self._load_problems[target] = one.problem
                    self._load_errors[target] = str(one.problem)
            if strict:
                for target in TARGETS:
                    if target in self._load_problems:
                        raise self._load_problems[target]

    def _load_targets(self, directory: Path) -> dict[str, LoadedTarget]:
        """Both files and their sidecars, read through one descriptor of ``directory``."""
        try:
            with MemoryDir.open(directory) as opened:
                clean_temps_if_any(opened, self.path("memory"))
                return {
                    t: load_target(t, self.path(t), self.limit(t), directory=opened)
                    for t in TARGETS
                }
        except OSError as exc:  # swapped for a link or a file since it was checked
            problem = exc if isinstance(exc, MemoryFileError) else _open_problem(directory, exc)
            logger.warning("%s", problem)
            return {target: LoadedTarget([], None, problem) for target in TARGETS}

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
        raw, _metas = self._read_with_sidecar(target, sidecar=False)
        with self._mutex:
            if raw.readable:
                self._live[target] = parse_entries(raw.text)
            return list(self._live[target])

    def visible_entries(self, target: str) -> list[str]:
        """`refresh` ``target`` and return its entries as they may be shown to the model:
        entries the threat scan flags (alone or joined with their neighbours) appear as
        ``[BLOCKED: …]`` placeholders, as in the snapshot; human-approved ones as they are."""
        target = self._check_target(target)
        raw, metas = self._read_with_sidecar(target)
        with self._mutex:
            if raw.readable:
                self._live[target] = parse_entries(raw.text)
            entries = list(self._live[target])
        return scan_entries(target, entries, approved_entries(entries, metas)).entries

    def _read_with_sidecar(
        self, target: str, *, sidecar: bool = True
    ) -> tuple[RawFile, dict[str, EntryMeta] | None]:
        """``target``'s file and (with ``sidecar``) its sidecar, both read through one
        descriptor of the memories directory."""
        path = self.path(target)
        try:
            with MemoryDir.open_if_exists(path.parent) as opened:
                if opened is None:
                    return RawFile(exists=False, text=None), None
                raw = read_raw(path, directory=opened)
                metas = load_sidecar(path, directory=opened) if sidecar else None
                return raw, metas
        except OSError:
            return read_raw(path), None  # the same refusal, with its message

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
        raw, metas = self._read_with_sidecar(target)
        if not raw.readable:
            return []
        entries = parse_entries(raw.text)
        return metadata_rows(entries, reconcile(metas, entries, path))

    # ------------------------------------------------------------------ turn bookkeeping
    def start_turn(self) -> None:
        """Reset the per-turn consolidation-failure counter (call at every user turn)."""
        with self._mutex:
            self._feedback.failures = 0

    @property
    def consolidation_failures(self) -> int:
        """Consolidation failures counted in the current turn."""
        return self._feedback.failures

    # ------------------------------------------------------------------ the write protocol
    def _mutate(self, target: str, *, drift_check: bool, mutation: Mutation) -> Result:
        """Run ``mutation`` under the file's lock on the entries on disk now (subclasses
        that keep the text elsewhere override this one method)."""
        with self._mutex:
            result, on_disk = mutate_file(
                self.path(target),
                limit=self.limit(target),
                drift_check=drift_check,
                mutation=mutation,
            )
            if on_disk is not None:
                self._live[target] = on_disk
            return result

    # ------------------------------------------------------------------ edits
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
            return invalid_target(target)
        content = as_text(content)
        if not content:
            return {"success": False, "error": "Content cannot be empty."}
        chosen = origin or self.write_origin
        return self._write_screened(
            target,
            content,
            approved_by_human=approved_by_human,
            drift_check=False,
            build=lambda text: add_mutation(
                self._feedback, target, text, origin=chosen, approved_by_human=approved_by_human
            ),
        )

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
            return invalid_target(target)
        old = as_text(old_text)
        new = as_text(new_content)
        if not old:
            return {"success": False, "error": "old_text cannot be empty."}
        if not new:
            return {
                "success": False,
                "error": "new_content cannot be empty. Use 'remove' to delete entries.",
            }
        chosen = origin or self.write_origin
        return self._write_screened(
            target,
            new,
            approved_by_human=approved_by_human,
            drift_check=True,
            build=lambda text: replace_mutation(
                self._feedback,
                target,
                old,
                text,
                origin=chosen,
                approved_by_human=approved_by_human,
            ),
        )

    def _write_screened(
        self,
        target: str,
        text: str,
        *,
        approved_by_human: bool,
        drift_check: bool,
        build: Callable[[str], Mutation],
    ) -> Result:
        """Screen ``text``, run the mutation ``build`` makes of the screened text, and add
        the notes the caller is owed (masked credentials, a human's approval)."""
        screened = screen_content(text, approved_by_human=approved_by_human)
        if isinstance(screened, dict):
            return screened
        result = self._mutate(target, drift_check=drift_check, mutation=build(screened.text))
        return annotate(
            result, redacted=screened.redacted, approved=approved_by_human, threat=screened.threat
        )

    def remove(self, target: str, old_text: str, *, origin: str | None = None) -> Result:
        """Delete the entry identified by ``old_text`` (removing the last entry is allowed)."""

        del origin  # removals leave no metadata behind
        if target not in TARGET_FILES:
            return invalid_target(target)
        old = as_text(old_text)
        if not old:
            return {"success": False, "error": "old_text cannot be empty."}
        return self._mutate(
            target, drift_check=True, mutation=remove_mutation(self._feedback, target, old)
        )

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
        approved_by_human: bool = False,
    ) -> Result:
        """Dry run of `apply_batch`: the same checks under the lock, nothing written.

        The answer is what `apply_batch` would answer now; on success it also holds
        ``matched_entries``: ``{op index (1-based): the full entry text}`` of every replace
        and remove step, the exact entries a staged change is pinned to. ``allow_empty``
        checks a single ``remove`` (which may delete the last entry) rather than a batch.
        ``approved_by_human`` checks the change as a person's approval would apply it (no
        threat refusals).
        """
        return self._batch(
            target,
            operations,
            origin=origin,
            dry_run=True,
            allow_empty=allow_empty,
            approved_by_human=approved_by_human,
        )

    def apply_pinned(
        self,
        target: str,
        operations: Iterable[Any],
        pinned: dict[int, str],
        *,
        origin: str | None = None,
        allow_empty: bool = False,
        approved_by_human: bool = False,
    ) -> Result:
        """Apply a staged change whose replace/remove steps are pinned to exact entries.

        ``pinned`` maps op indexes (1-based) to the full entry each replace/remove step was
        reviewed against; the step touches exactly that entry (no substring matching). If
        any pinned entry is no longer in the file as it was, nothing is applied and the
        answer is a failure with ``stale_entry``. ``allow_empty`` lets a staged single
        ``remove`` delete the last entry, as a direct `remove` may. ``approved_by_human``:
        a person approved a change the threat scan held; its findings are not refusals and
        the new entries are recorded as approved.
        """
        return self._batch(
            target,
            operations,
            origin=origin,
            pinned=pinned,
            allow_empty=allow_empty,
            approved_by_human=approved_by_human,
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
        approved_by_human: bool = False,
    ) -> Result:
        if target not in TARGET_FILES:
            return invalid_target(target)
        screened = screen_operations(operations, approved_by_human=approved_by_human)
        if isinstance(screened, dict):
            return screened
        ops, redacted = screened
        mutation = batch_mutation(
            self._feedback,
            target,
            ops,
            origin=origin or self.write_origin,
            dry_run=dry_run,
            pinned=pinned,
            allow_empty=allow_empty,
            approved_by_human=approved_by_human,
        )
        result = self._mutate(target, drift_check=True, mutation=mutation)
        return annotate(result, redacted=redacted, approved=approved_by_human, threat=None)
