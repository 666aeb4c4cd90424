"""Reading one memory file for the frozen system-prompt snapshot.

`MemoryStore.load_from_disk` freezes the rendered block once per session so the system
prompt stays byte-stable; this module reads a file for it: every entry is threat-scanned
alone and joined with its neighbours, flagged ones are rendered as ``[BLOCKED: …]``
placeholders (entries a human approved are kept; past `MAX_FLAGGED` findings the rest
is withheld behind one placeholder), and a file that exists but cannot be
used is reported as a problem rather than read as empty.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from hermes_memory_builtin._errors import MemoryFileError
from hermes_memory_builtin._file_writes import problem_of
from hermes_memory_builtin._format import char_count, parse_entries, render_block
from hermes_memory_builtin._memory_dir import MemoryDir
from hermes_memory_builtin._reading import read_raw
from hermes_memory_builtin._scan import scan_entries
from hermes_memory_builtin._sidecar import approved_entries, load_sidecar

__all__ = ["LoadedTarget", "load_target"]

logger = logging.getLogger(__name__)

#: At most this many blocked findings are logged one by one per load.
_MAX_LOGGED = 20


@dataclass(frozen=True)
class LoadedTarget:
    """One file as loaded: its entries, its rendered block (``None`` when empty) and the
    problem that kept it from being read (its entries are then empty)."""

    entries: list[str]
    block: str | None
    problem: MemoryFileError | None = None


def load_target(
    target: str, path: Path, limit: int, *, directory: MemoryDir | None = None
) -> LoadedTarget:
    """Read ``path`` (the file of ``target``) and render its snapshot block.

    With ``directory`` (``path``'s directory, held open) the file and its sidecar are read
    through that descriptor, so both come from the directory that was opened."""
    raw = read_raw(path, directory=directory)
    problem: MemoryFileError | None = None
    if not raw.readable:
        problem = problem_of(path, raw)
        logger.warning("memory left untouched: %s", problem)
        entries: list[str] = []
    else:
        entries = parse_entries(raw.text)
    used = char_count(entries)
    if used > limit:
        logger.warning(
            "%s is over its limit (%s/%s chars); it is loaded whole — consolidate it",
            path,
            f"{used:,}",
            f"{limit:,}",
        )
    metas = load_sidecar(path, directory=directory) if entries else None
    approved = approved_entries(entries, metas) if entries else set()
    report = scan_entries(target, entries, approved)
    # A hostile file must not turn one load into thousands of log lines.
    for item in report.blocked[:_MAX_LOGGED]:
        logger.warning(
            "%s: entr%s %s blocked from the system prompt (%s%s)",
            path,
            "y" if len(item.indexes) == 1 else "ies",
            ", ".join(str(i + 1) for i in item.indexes),
            ", ".join(item.ids),
            "; split across adjacent entries" if item.split else "",
        )
    if len(report.blocked) > _MAX_LOGGED:
        logger.warning(
            "%s: %d more blocked entr(ies) not listed", path, len(report.blocked) - _MAX_LOGGED
        )
    if report.withheld:
        logger.warning(
            "%s: %d entries withheld from the system prompt unscanned after %d blocked "
            "findings; review the file (hermes-memory memory show / remove)",
            path,
            len(report.withheld),
            len(report.blocked),
        )
    return LoadedTarget(entries, render_block(target, report.entries, limit), problem)
