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
import time
from dataclasses import dataclass
from pathlib import Path

from hermes_memory_builtin._format import dedupe, split_pieces
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


def _same_backup(path: Path, data: bytes, directory: MemoryDir) -> str | None:
    """An existing ``<file>.bak.*`` holding exactly ``data`` (newest first), read through
    the directory's descriptor and never through a link."""
    prefix = path.name + ".bak."
    try:
        names = [name for name in directory.names() if name.startswith(prefix)]
    except OSError:
        return None

    def mtime(name: str) -> float:
        try:
            return directory.lstat(name).st_mtime
        except OSError:
            return 0.0

    for name in sorted(names, key=mtime, reverse=True):
        try:
            if directory.read_bytes(name, len(data) + 1) == data:
                return str(path.with_name(name))
        except OSError:
            continue
    return None


def save_backup(path: Path, data: bytes, *, directory: MemoryDir | None = None) -> str:
    """Copy ``data`` (the drifted file's bytes) next to ``path`` and return the backup path.

    Existing backups are read and the new one created through the descriptor of ``path``'s
    directory: ``directory`` when the caller holds it open, else it is opened here.

    An existing ``<file>.bak.*`` with identical bytes is reused. If no backup can be
    written the returned string says so (``" (BACKUP FAILED — file unchanged on disk)"``).
    """
    if directory is None:
        try:
            with MemoryDir.open(path.parent) as opened:
                return save_backup(path, data, directory=opened)
        except OSError as exc:  # a link or a file where the directory was
            logger.warning("could not write a drift backup beside %s: %s", path, exc)
            return f"{path}.bak (BACKUP FAILED — file unchanged on disk)"
    same = _same_backup(path, data, directory)
    if same is not None:
        return same
    stamp = int(time.time())
    backup = path.with_name(f"{path.name}.bak.{stamp}")
    serial = 1
    while directory.exists(backup.name):
        backup = path.with_name(f"{path.name}.bak.{stamp}-{serial}")
        serial += 1
    try:
        text = data.decode("utf-8")  # callers only back up files that decoded
        directory.write_atomic(backup.name, text, tmp_prefix=".mem_")
    except (OSError, UnicodeError) as exc:
        logger.warning("could not write drift backup %s: %s", backup, exc)
        return f"{backup} (BACKUP FAILED — file unchanged on disk)"
    return str(backup)
