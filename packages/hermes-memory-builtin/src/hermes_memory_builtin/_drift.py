"""External-drift detection and drift backups.

A file has *drifted* when text on disk would not survive a rewrite by the memory tool, so a
replace, remove or batch could silently lose it. Unlike the reference, differences that lose
nothing are not drift: CRLF line endings, blank lines or spaces around ``§``, whitespace
around an entry and exact duplicate entries are all normalised away. What remains is

* a piece of the file that the parser would change beyond whitespace (kept as a general
  guard: the parser is meant to be lossless), and
* a single entry longer than the target's whole character limit — text pasted or appended
  into the file without a delimiter, which the tool could never have written.

On drift the raw bytes are copied to ``<file>.bak.<unix-seconds>``; if a backup with
exactly these bytes already exists it is reused, so refusing the same unchanged file over
and over does not pile up backups.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_memory_builtin._format import dedupe, split_pieces
from hermes_memory_core.kit import atomic_write_text

if TYPE_CHECKING:
    from hermes_memory_builtin._memory_dir import MemoryDir

__all__ = ["DriftReport", "check_drift", "save_backup"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DriftReport:
    """Why a file counts as drifted (empty ``reasons`` means it does not)."""

    reasons: tuple[str, ...]

    @property
    def drifted(self) -> bool:
        """True when at least one drift signal fired."""
        return bool(self.reasons)


def _canonical(piece: str) -> str:
    # Trailing spaces on a line are invisible and never meaningful in a memory entry.
    return "\n".join(line.rstrip() for line in piece.split("\n")).strip()


def check_drift(text: str, entries: list[str], limit: int) -> DriftReport:
    """Decide whether file ``text`` (LF-normalised) drifted from its parsed ``entries``."""
    reasons: list[str] = []
    if not text.strip():
        return DriftReport(())
    canonical_pieces = dedupe([_canonical(piece) for piece in split_pieces(text)])
    canonical_entries = dedupe([_canonical(entry) for entry in entries])
    if canonical_pieces != canonical_entries:
        reasons.append("content does not round-trip through the entry parser")
    oversized = [entry for entry in entries if len(entry) > limit]
    if oversized:
        reasons.append(
            f"{len(oversized)} entry(ies) longer than the whole {limit:,}-char limit "
            "(text added without a § delimiter)"
        )
    return DriftReport(tuple(reasons))


def _existing_backups(path: Path) -> list[Path]:
    prefix = path.name + ".bak."
    try:
        candidates = [p for p in path.parent.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return []

    def mtime(p: Path) -> float:
        try:
            return p.stat().st_mtime
        except OSError:
            return 0.0

    return sorted(candidates, key=mtime, reverse=True)


def save_backup(path: Path, data: bytes, *, directory: MemoryDir | None = None) -> str:
    """Copy ``data`` (the drifted file's bytes) next to ``path`` and return the backup path.

    With ``directory`` (``path``'s directory, held open) the backup is created through its
    descriptor.

    An existing ``<file>.bak.*`` with identical bytes is reused. If no backup can be
    written the returned string says so (``" (BACKUP FAILED — file unchanged on disk)"``).
    """
    for candidate in _existing_backups(path):
        try:
            if candidate.is_file() and candidate.read_bytes() == data:
                return str(candidate)
        except OSError:
            continue
    stamp = int(time.time())
    backup = path.with_name(f"{path.name}.bak.{stamp}")
    serial = 1
    while directory.exists(backup.name) if directory is not None else os.path.lexists(backup):
        backup = path.with_name(f"{path.name}.bak.{stamp}-{serial}")
        serial += 1
    try:
        text = data.decode("utf-8")  # callers only back up files that decoded
        if directory is not None:
            directory.write_atomic(backup.name, text, tmp_prefix=".mem_")
        else:
            atomic_write_text(backup, text, tmp_prefix=".mem_")
    except (OSError, UnicodeError) as exc:
        logger.warning("could not write drift backup %s: %s", backup, exc)
        return f"{backup} (BACKUP FAILED — file unchanged on disk)"
    return str(backup)
