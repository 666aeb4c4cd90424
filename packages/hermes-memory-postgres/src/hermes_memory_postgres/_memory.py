"""`PostgresMemoryStore`: the curated MEMORY.md / USER.md store with its text in PostgreSQL.

It is `hermes_memory_builtin._store.MemoryStore` with the storage swapped: every rule of the
builtin store — entries joined by ``"\\n§\\n"``, character limits, the delimiter and threat
rules, near-duplicate detection, the result messages, the frozen snapshot taken at session
start — is the builtin's own code. What changes:

* each target is one row ``hm_memory(owner, target)`` holding the file's exact text and the
  entries' metadata (what the builtin keeps in its ``.meta.json`` sidecar);
* every write runs in one transaction holding that row's lock (``SELECT … FOR UPDATE``): a
  writer on another host waits, then applies its change to what the first one committed,
  so concurrent adds to one owner never lose an entry;
* `export` writes Hermes-compatible ``MEMORY.md`` / ``USER.md`` (plus sidecars) to a
  directory, `import_files` loads them.

A write that cannot reach the server within its budget fails with a message and changes
nothing (the model is told; it is never acknowledged and then lost).
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import psycopg

from hermes_memory_builtin import (
    FILE_MODE,
    TARGET_FILES,
    TARGETS,
    EntryMeta,
    MemoryStore,
    Result,
    approved_entries,
    char_count,
    ensure_memory_dir,
    entry_key,
    load_sidecar,
    parse_entries,
    parse_entry_meta,
    read_raw,
    reconcile,
    render_block,
    save_sidecar,
    scan_entries,
    serialise,
)
from hermes_memory_core.kit import atomic_write_text
from hermes_memory_postgres._connection import ArchiveUnavailable, Database, check_owner

__all__ = ["PostgresMemoryStore"]

logger = logging.getLogger(__name__)


def _metas_from_text(text: str) -> dict[str, EntryMeta]:
    try:
        raw = json.loads(text or "{}")
    except ValueError:
        return {}
    out: dict[str, EntryMeta] = {}
    if isinstance(raw, dict):
        for key, value in raw.items():
            meta = parse_entry_meta(value)
            if meta is not None and isinstance(key, str):
                out[key] = meta
    return out


def _metas_text(entries: list[str], metas: dict[str, EntryMeta]) -> str:
    kept = {entry_key(e): metas[entry_key(e)] for e in entries if entry_key(e) in metas}
    return json.dumps(kept, ensure_ascii=False, sort_keys=True)


class PostgresMemoryStore(MemoryStore):
    """The curated memory of one owner in PostgreSQL (see the module docstring).

    :param dsn: libpq connection string or URL (or pass ``database``).
    :param owner: the tenant key whose memory this is.
    :param database: a shared `Database` (pool) instead of ``dsn``.
    :param write_budget_s: how long a write retries an unreachable server before failing.

    Other keyword arguments are `MemoryStore`'s (limits, enabled flags, origin).
    """

    def __init__(
        self,
        dsn: str | None = None,
        *,
        owner: str,
        database: Database | None = None,
        write_budget_s: float = 5.0,
        **kwargs: Any,
    ) -> None:
        self.owner = check_owner(owner)
        super().__init__(Path("postgres") / "owners" / self.owner, **kwargs)
        self.db = database if database is not None else Database(dsn or "")
        self._owns_db = database is None
        self._budget = write_budget_s

    def __repr__(self) -> str:
        return f"PostgresMemoryStore(owner={self.owner!r}, {self.db.masked_dsn})"

    def close(self) -> None:
        """Release the pool (when this store opened it)."""
        if self._owns_db:
            self.db.close()

    # ------------------------------------------------------------------ rows

    def _rows(self) -> dict[str, tuple[str, dict[str, EntryMeta]]]:
        def run(conn: psycopg.Connection[Any]) -> dict[str, tuple[str, dict[str, EntryMeta]]]:
            rows = conn.execute(
                "SELECT target, content, metadata FROM hm_memory WHERE owner = %s",
                (self.owner,),
            ).fetchall()
            return {
                str(r["target"]): (str(r["content"]), _metas_from_text(str(r["metadata"])))
                for r in rows
            }

        result: dict[str, tuple[str, dict[str, EntryMeta]]] = self.db.run(run, budget=self._budget)
        return result

    # ------------------------------------------------------------------ reading

    def load_from_disk(self, *, strict: bool = False) -> None:
        """Read both targets and freeze the system-prompt snapshot (as `MemoryStore`).

        An unreachable server leaves both targets empty with the reason in `load_errors`
        (``strict=True`` raises `ArchiveUnavailable`).
        """
        with self._mutex:
            self._load_errors = {}
            self._load_problems = {}
            try:
                rows = self._rows()
            except ArchiveUnavailable as exc:
                for target in TARGETS:
                    self._live[target] = []
                    self._snapshot[target] = None
                    self._load_errors[target] = str(exc)
                if strict:
                    raise
                logger.warning("curated memory not loaded: %s", exc)
                return
            for target in TARGETS:
                text, metas = rows.get(target, ("", {}))
                entries = parse_entries(text)
                limit = self.limit(target)
                if char_count(entries) > limit:
                    logger.warning(
                        "%s of owner %s is over its limit (%s/%s chars); loaded whole",
                        TARGET_FILES[target],
                        self.owner,
                        f"{char_count(entries):,}",
                        f"{limit:,}",
                    )
                report = scan_entries(target, entries, approved_entries(entries, metas))
                self._live[target] = entries
                self._snapshot[target] = render_block(target, report.entries, limit)

    def refresh(self, target: str) -> list[str]:
        """Re-read ``target`` into the live state (not the snapshot) and return it."""
        target = self._check_target(target)
        rows = self._rows()
        with self._mutex:
            self._live[target] = parse_entries(rows.get(target, ("", {}))[0])
            return list(self._live[target])

    def visible_entries(self, target: str) -> list[str]:
        """The entries as they may be shown to the model (flagged ones as placeholders)."""
        target = self._check_target(target)
        text, metas = self._rows().get(target, ("", {}))
        entries = parse_entries(text)
        with self._mutex:
            self._live[target] = entries
        return scan_entries(target, entries, approved_entries(entries, metas)).entries

    def entry_metadata(self, target: str) -> list[dict[str, Any]]:
        """Entries with ``created``, ``updated``, ``origin`` and ``human_approved``."""
        target = self._check_target(target)
        text, stored = self._rows().get(target, ("", {}))
        entries = parse_entries(text)
        metas = reconcile(stored, entries, self.path(target))
        return [
            {
                "entry": e,
                "created": metas[entry_key(e)]["created"],
                "updated": metas[entry_key(e)]["updated"],
                "origin": metas[entry_key(e)]["origin"],
                "human_approved": metas[entry_key(e)].get("human_approved") is True,
            }
            for e in entries
        ]

    # ------------------------------------------------------------------ the write protocol

    def _mutate(self, target: str, *, drift_check: bool, mutation: Any) -> Result:
        """Apply ``mutation`` to the committed entries under the row lock, in one transaction."""
        name = TARGET_FILES[target]

        def run(conn: psycopg.Connection[Any]) -> Result:
            conn.execute(
                "INSERT INTO hm_memory(owner, target) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (self.owner, target),
            )
            row = conn.execute(
                "SELECT content, metadata FROM hm_memory WHERE owner = %s AND target = %s"
                " FOR UPDATE",
                (self.owner, target),
            ).fetchone()
            text = str(row["content"]) if row else ""
            disk = parse_entries(text)
            metas = reconcile(
                _metas_from_text(str(row["metadata"]) if row else "{}"), disk, self.path(target)
            )
            self._live[target] = disk
            outcome = mutation(list(disk), metas)
            if outcome.entries is not None:
                conn.execute(
                    "UPDATE hm_memory SET content = %s, metadata = %s, revision = revision + 1,"
                    " updated_at = %s WHERE owner = %s AND target = %s",
                    (
                        serialise(outcome.entries),
                        _metas_text(outcome.entries, outcome.metas or metas),
                        time.time(),
                        self.owner,
                        target,
                    ),
                )
            result: Result = outcome.result
            if outcome.entries is not None:
                result["_entries"] = list(outcome.entries)
            return result

        with self._mutex:
            try:
                result = self.db.run(run, budget=self._budget)
            except ArchiveUnavailable as exc:
                return {
                    "success": False,
                    "error": f"Could not write {name}: {exc}. Nothing was changed; try again"
                    " in a moment.",
                }
            written = result.pop("_entries", None)
            if written is not None:
                self._live[target] = written
            return result

    # ------------------------------------------------------------------ files

    def export(self, directory: str | Path) -> list[Path]:
        """Write ``MEMORY.md`` and ``USER.md`` (and metadata sidecars) into ``directory``,
        byte-compatible with Hermes; returns the files written."""
        out = Path(directory).expanduser()
        ensure_memory_dir(out)
        rows = self._rows()
        written = []
        for target in TARGETS:
            text, metas = rows.get(target, ("", {}))
            entries = parse_entries(text)
            path = out / TARGET_FILES[target]
            atomic_write_text(path, serialise(entries), tmp_prefix=".mem_", mode=FILE_MODE)
            save_sidecar(path, entries, reconcile(metas, entries, path))
            written.append(path)
        return written

    def import_files(self, directory: str | Path) -> dict[str, int]:
        """Replace this owner's entries with ``MEMORY.md`` / ``USER.md`` from ``directory``
        (a missing file leaves its target as it is); returns entries imported per target.

        Raises ValueError naming the file when one exists but cannot be read.
        """
        src = Path(directory).expanduser()
        loaded: dict[str, tuple[list[str], dict[str, EntryMeta]]] = {}
        for target in TARGETS:
            path = src / TARGET_FILES[target]
            raw = read_raw(path)
            if not raw.readable:
                raise ValueError(str(raw.problem or f"cannot read {path}: {raw.error}"))
            if not raw.exists:
                continue  # no such file: that target is left as it is
            entries = parse_entries(raw.text)
            loaded[target] = (entries, reconcile(load_sidecar(path), entries, path))

        def run(conn: psycopg.Connection[Any]) -> None:
            for target, (entries, metas) in loaded.items():
                conn.execute(
                    "INSERT INTO hm_memory(owner, target, content, metadata, revision,"
                    " updated_at) VALUES (%s, %s, %s, %s, 1, %s) ON CONFLICT (owner, target)"
                    " DO UPDATE SET content = excluded.content, metadata = excluded.metadata,"
                    " revision = hm_memory.revision + 1, updated_at = excluded.updated_at",
                    (
                        self.owner,
                        target,
                        serialise(entries),
                        _metas_text(entries, metas),
                        time.time(),
                    ),
                )

        self.db.run(run, budget=self._budget)
        return {t: len(e) for t, (e, _) in loaded.items()}
