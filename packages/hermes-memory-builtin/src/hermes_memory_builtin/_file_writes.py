"""The write protocol of one memory file, shared by every `MemoryStore` mutation.

A mutation takes the file's lock, re-reads the file, applies the change to what is on disk
*now* (never to a stale in-memory copy), writes the whole file atomically and updates the
metadata sidecar. A file that exists but cannot be read is never treated as empty (saving
would wipe it), and a file edited by hand in a way the memory tool would not round-trip is
backed up and refused (drift) or, for harmless differences, rewritten canonically with a
backup and a note.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hermes_memory_builtin._drift import check_drift, save_backup
from hermes_memory_builtin._errors import MemoryFileError
from hermes_memory_builtin._feedback import Result
from hermes_memory_builtin._files import (
    STALE_TEMP_AGE_S,
    TEMP_PREFIX,
    clean_stale_temps,
    ensure_memory_dir,
)
from hermes_memory_builtin._format import (
    RawFile,
    hermes_entries,
    parse_entries,
    serialise,
)
from hermes_memory_builtin._locking import LockError, exclusive_lock
from hermes_memory_builtin._memory_dir import MemoryDir
from hermes_memory_builtin._reading import read_raw
from hermes_memory_builtin._sidecar import EntryMeta, load_sidecar, reconcile, save_sidecar

__all__ = [
    "FILE_MODE",
    "Mutation",
    "Outcome",
    "clean_temps_if_any",
    "mutate_file",
    "problem_of",
]

logger = logging.getLogger(__name__)

#: Mode of the memory files and their sidecars.
FILE_MODE = 0o600


@dataclass
class Outcome:
    """What a mutation decided: the result dict and, when it writes, the new entries."""

    result: Result
    entries: list[str] | None = None
    metas: dict[str, EntryMeta] | None = None


#: A mutation: given the entries on disk and their metadata, decide the `Outcome`.
Mutation = Callable[[list[str], dict[str, EntryMeta]], Outcome]


def mutate_file(
    path: Path, *, limit: int, drift_check: bool, mutation: Mutation
) -> tuple[Result, list[str] | None]:
    """Run ``mutation`` on the entries of ``path`` under its lock and write what it decides.

    Returns the result and the entries now on disk (``None`` when the file was not read),
    so the caller can refresh its live state. Never raises for an unusable file or lock.
    """
    name = path.name
    try:
        ensure_memory_dir(path.parent)
    except MemoryFileError as exc:
        return {
            "success": False,
            "error": f"Refusing to write {name}: {exc}. Nothing was changed.",
        }, None
    seen: list[str] | None = None
    try:
        # Every file below is created relative to the directory opened here (issue 21).
        with MemoryDir.open(path.parent) as directory, exclusive_lock(path, directory=directory):
            clean_stale_temps(path.parent, STALE_TEMP_AGE_S, opened=directory)
            raw = read_raw(path, directory=directory)
            if not raw.readable:
                return {
                    "success": False,
                    "error": _unreadable_message(name, problem_of(path, raw)),
                }, None
            text = raw.text or ""
            disk = parse_entries(text)
            if drift_check and raw.data is not None:
                report = check_drift(text, disk, limit)
                if report.drifted:
                    logger.warning("%s drifted: %s", path, "; ".join(report.reasons))
                    backup = save_backup(path, raw.data, directory=directory)
                    return _drift_error(name, backup), None
            seen = disk
            metas = reconcile(load_sidecar(path, directory=directory), disk, path)
            outcome = mutation(list(disk), metas)
            if outcome.entries is not None:
                normalised = _normalisation(raw, disk)
                backup = (
                    save_backup(path, raw.data, directory=directory)
                    if normalised and raw.data
                    else ""
                )
                directory.write_atomic(
                    name, serialise(outcome.entries), tmp_prefix=TEMP_PREFIX, mode=FILE_MODE
                )
                seen = outcome.entries
                save_sidecar(path, outcome.entries, outcome.metas or metas, directory=directory)
                if normalised:
                    outcome.result.update(_normalised_fields(name, normalised, backup))
            return outcome.result, seen
    except MemoryFileError as exc:  # the directory became a link or a file meanwhile
        return {
            "success": False,
            "error": f"Refusing to write {name}: {exc}. Nothing was changed.",
        }, seen
    except LockError as exc:
        return {
            "success": False,
            "error": f"Could not lock {name}: {exc}. Nothing was changed.",
        }, seen
    except OSError as exc:
        return {
            "success": False,
            "error": f"Failed to write memory file {path}: {exc}. Nothing was changed.",
        }, seen


def clean_temps_if_any(directory: MemoryDir, lock_path: Path) -> None:
    """Remove stale temp files under ``lock_path``'s lock, without creating a lock file when
    there is nothing to clean (loading stays read-only in the common case). Everything goes
    through ``directory``'s descriptor, the lock file included."""
    try:
        names = [n for n in directory.names() if n.startswith(TEMP_PREFIX)]
    except OSError:
        return
    if not names:
        return
    try:
        with exclusive_lock(lock_path, timeout=0, directory=directory):
            clean_stale_temps(directory.path, STALE_TEMP_AGE_S, opened=directory)
    except (LockError, OSError):
        pass  # a writer is busy (or the lock is unusable); the next write cleans up


def problem_of(path: Path, raw: RawFile) -> MemoryFileError:
    """The `MemoryFileError` of a file `read_raw` found unreadable."""
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
