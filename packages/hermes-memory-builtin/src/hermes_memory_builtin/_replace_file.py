"""Replacing all entries of one curated file at once, by the store's own write rules.

`replace_entries` is what a human edit (``hermes-memory memory edit``) or an import uses: the
file's lock, an optimistic check that nobody changed the file meanwhile, the metadata sidecar
(history of untouched entries kept, new ones recorded with their origin, approvals marked),
and an atomic replace. Validation (budget, threat scan) is the caller's.
"""

from __future__ import annotations

from pathlib import Path

from hermes_memory_builtin._files import ensure_memory_dir
from hermes_memory_builtin._format import serialise
from hermes_memory_builtin._locking import exclusive_lock
from hermes_memory_builtin._memory_dir import MemoryDir
from hermes_memory_builtin._reading import read_raw
from hermes_memory_builtin._sidecar import (
    EntryMeta,
    entry_key,
    load_sidecar,
    now_iso,
    reconcile,
    save_sidecar,
)

__all__ = ["ConcurrentChange", "replace_entries"]


class ConcurrentChange(Exception):
    """The file changed on disk while it was being edited."""


def replace_entries(
    path: Path,
    entries: list[str],
    *,
    expected: bytes | None,
    approved: set[str] | None = None,
    origin: str = "cli-edit",
) -> None:
    """Write ``entries`` to ``path`` under its lock if it still holds ``expected`` bytes.

    :param expected: what the file held when editing started (``None``: it did not exist).
    :param approved: entries to mark ``human_approved`` in the sidecar.
    :param origin: recorded for entries that are new.
    :raises ConcurrentChange: the file differs from ``expected`` (nothing written).
    """
    ensure_memory_dir(path.parent)
    with MemoryDir.open(path.parent) as directory, exclusive_lock(path, directory=directory):
        raw = read_raw(path, directory=directory)
        current = raw.data if raw.exists else None
        if raw.exists and current is None:
            raise ConcurrentChange(f"{path.name} cannot be read now: {raw.error}")
        if current != expected:
            raise ConcurrentChange(f"{path.name} was changed by someone else during the edit")
        stored = load_sidecar(path, directory=directory)
        metas = reconcile(stored, entries, path)
        known = stored or {}
        stamp = now_iso()
        for entry in entries:
            key = entry_key(entry)
            if key not in known:
                metas[key] = EntryMeta(created=stamp, updated=stamp, origin=origin)
            if approved and entry in approved:
                metas[key]["human_approved"] = True
        directory.write_atomic(path.name, serialise(entries), tmp_prefix=".mem_")
        save_sidecar(path, entries, metas, directory=directory)
