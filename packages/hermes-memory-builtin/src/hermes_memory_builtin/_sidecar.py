"""Per-entry metadata kept beside a memory file, so the Markdown stays byte-compatible.

``MEMORY.md.meta.json`` / ``USER.md.meta.json`` record, for every entry, when it was created,
when it was last updated and which origin wrote it. Entries are matched by content (a
SHA-256 of the entry text), so the sidecar survives hand edits of the Markdown: untouched
entries keep their history, an edited or hand-added entry gets fresh metadata with origin
``"external"``, and a deleted one is dropped. A missing or unreadable sidecar is rebuilt on
the next write (its entries dated by the data file's modification time, origin
``"unknown"``). The sidecar is written under the same lock as the data file, after it,
atomically but without fsync (it is rebuildable; the data file is the one that is fsynced).

Format (version 1)::

    {"version": 1, "file": "MEMORY.md",
     "entries": [{"sha256": "...", "created": "2026-05-01T09:30:00.123456+00:00",
                  "updated": "...", "origin": "assistant", "preview": "first 60 chars"}]}
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from hermes_memory_builtin._memory_dir import MemoryDir
from hermes_memory_core.kit import atomic_write_text

__all__ = [
    "EntryMeta",
    "approved_entries",
    "entry_key",
    "load_sidecar",
    "metadata_rows",
    "now_iso",
    "parse_entry_meta",
    "reconcile",
    "save_sidecar",
    "sidecar_path_for",
]

logger = logging.getLogger(__name__)

SIDECAR_VERSION = 1

# A sidecar holds a few hundred bytes per entry; a larger file is not one of ours.
_MAX_SIDECAR_BYTES = 8 * 1024 * 1024


class EntryMeta(TypedDict):
    """Metadata of one entry: ISO-8601 UTC timestamps and the write origin.

    ``human_approved`` is present (and true) only for an entry a human wrote through an
    explicit override (``MemoryStore.add(..., approved_by_human=True)``): the threat scan
    never blocks it at load. Any change of the entry's text drops it, because metadata is
    keyed by the exact text.
    """

    created: str
    updated: str
    origin: str
    human_approved: NotRequired[bool]


def sidecar_path_for(path: Path) -> Path:
    """The sidecar of data file ``path``: ``<path>.meta.json``."""
    return path.with_name(path.name + ".meta.json")


def entry_key(entry: str) -> str:
    """The content key of an entry (hex SHA-256 of its UTF-8 text)."""
    return hashlib.sha256(entry.encode("utf-8")).hexdigest()


def now_iso() -> str:
    """The current time as an ISO-8601 UTC string with microseconds."""
    return datetime.now(UTC).isoformat()


def _mtime_iso(path: Path) -> str:
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat()
    except OSError:
        return now_iso()


def parse_entry_meta(value: Any) -> EntryMeta | None:
    """One stored metadata record as `EntryMeta`, or ``None`` when it is not one (any backend
    that keeps the sidecar's records elsewhere checks them with this)."""
    if not isinstance(value, dict):
        return None
    created, updated, origin = value.get("created"), value.get("updated"), value.get("origin")
    if not (isinstance(created, str) and isinstance(updated, str) and isinstance(origin, str)):
        return None
    meta = EntryMeta(created=created, updated=updated, origin=origin)
    if value.get("human_approved") is True:
        meta["human_approved"] = True
    return meta


def _read_sidecar_text(path: Path, directory: MemoryDir | None) -> str:
    """The sidecar's text, read through its directory's descriptor and never through a
    symbolic link (a link is an error): its approvals decide what reaches the prompt."""
    if directory is not None:
        return directory.read_bytes(path.name, _MAX_SIDECAR_BYTES).decode("utf-8")
    with MemoryDir.open_if_exists(path.parent) as opened:
        if opened is None:
            raise FileNotFoundError(errno.ENOENT, "no memories directory", str(path.parent))
        return opened.read_bytes(path.name, _MAX_SIDECAR_BYTES).decode("utf-8")


def load_sidecar(
    data_path: Path, *, directory: MemoryDir | None = None
) -> dict[str, EntryMeta] | None:
    """Read the sidecar of ``data_path``; ``None`` when it is missing or unusable.

    With ``directory`` (``data_path``'s directory, held open) it is read from that very
    directory, so a data file and its approvals never come from two places."""
    path = sidecar_path_for(data_path)
    try:
        payload = json.loads(_read_sidecar_text(path, directory))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        logger.warning("ignoring unreadable memory sidecar %s (%s); it will be rebuilt", path, exc)
        return None
    if not isinstance(payload, dict) or not isinstance(payload.get("entries"), list):
        logger.warning("ignoring malformed memory sidecar %s; it will be rebuilt", path)
        return None
    metas: dict[str, EntryMeta] = {}
    for item in payload["entries"]:
        meta = parse_entry_meta(item)
        key = item.get("sha256") if isinstance(item, dict) else None
        if meta is not None and isinstance(key, str):
            metas[key] = meta
    return metas


def reconcile(
    stored: dict[str, EntryMeta] | None, entries: list[str], data_path: Path
) -> dict[str, EntryMeta]:
    """Metadata for every entry now on disk, keeping what ``stored`` knows by content.

    Entries the sidecar does not know are dated now with origin ``"external"`` (a hand edit),
    or — when there is no sidecar at all — by the data file's mtime with origin ``"unknown"``.
    """
    if stored is None:
        stamp, origin = _mtime_iso(data_path), "unknown"
    else:
        stamp, origin = now_iso(), "external"
    result: dict[str, EntryMeta] = {}
    for entry in entries:
        key = entry_key(entry)
        known = stored.get(key) if stored is not None else None
        result[key] = (
            known if known is not None else EntryMeta(created=stamp, updated=stamp, origin=origin)
        )
    return result


def approved_entries(entries: list[str], metas: dict[str, EntryMeta] | None) -> set[str]:
    """The entries of ``entries`` whose metadata records a human approval."""
    if not metas:
        return set()
    approved = set()
    for entry in entries:
        meta = metas.get(entry_key(entry))
        if meta is not None and meta.get("human_approved") is True:
            approved.add(entry)
    return approved


def save_sidecar(
    data_path: Path,
    entries: list[str],
    metas: dict[str, EntryMeta],
    *,
    directory: MemoryDir | None = None,
) -> None:
    """Write the sidecar for ``entries`` (in file order). Failures are logged, not raised:
    the data file is already safely written and metadata is secondary. With ``directory``
    (the data file's directory, held open) it is written through its descriptor."""
    rows = []
    for entry in entries:
        key = entry_key(entry)
        meta = metas.get(key)
        if meta is None:
            stamp = now_iso()
            meta = EntryMeta(created=stamp, updated=stamp, origin="unknown")
        rows.append({"sha256": key, **meta, "preview": entry[:60]})
    # One entry per line: readable and diffable, and serialised by the fast C encoder.
    head = f'{{"version": {SIDECAR_VERSION}, "file": {json.dumps(data_path.name)},\n "entries": ['
    body = ",\n  ".join(json.dumps(row, ensure_ascii=False) for row in rows)
    text = f"{head}\n  {body}\n ]}}\n" if rows else f"{head}]}}\n"
    try:
        # Atomic (readers see the old or the new sidecar) but not fsynced: the sidecar is
        # rebuildable metadata, and skipping two fsyncs halves the cost of every memory write.
        target = sidecar_path_for(data_path)
        if directory is not None:
            directory.write_atomic(target.name, text, tmp_prefix=".mem_", mode=0o600, fsync=False)
        else:
            atomic_write_text(target, text, tmp_prefix=".mem_", mode=0o600, fsync=False)
    except OSError as exc:
        logger.warning("could not write memory sidecar for %s: %s", data_path, exc)


def metadata_rows(entries: list[str], metas: dict[str, EntryMeta]) -> list[dict[str, Any]]:
    """One row per entry: ``entry``, ``created``, ``updated``, ``origin`` and
    ``human_approved`` (a bool); ``metas`` must hold every entry (see `reconcile`)."""
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
