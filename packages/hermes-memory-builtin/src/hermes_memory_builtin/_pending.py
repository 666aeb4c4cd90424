"""Staged memory writes: proposals waiting for a person to apply or reject them.

Two gates in front of the ``memory`` tool (`hermes_memory_builtin._tool`) stage a write
instead of applying it:

* the **background-review gate**: a write whose origin is ``"background_review"`` (an
  unattended review, see `hermes_memory_review`) may add entries, but its replace and
  remove steps — alone or inside a batch — become a proposal;
* the **approval gate** (``memory.write_approval: true``): every write the tool receives is
  staged;
* the **threat hold**: a write whose content the threat scan flags on vocabulary alone (no
  structural signal) is staged with the reason ``threat_review``; applying it is a
  person's approval (the entry is recorded as ``human_approved``).

Proposals live in ``pending.json`` beside ``MEMORY.md`` (mode 0600, replaced atomically,
changed only under its own lock ``pending.json.lock``). A staged replace or remove is
*pinned* to the full text of the entry it matched when it was staged: applying it touches
exactly that entry, and refuses (changing nothing) when that entry is no longer in the
file as it was. People list, apply and reject proposals with ``hermes-memory memory
pending``; the model can only list them (``memory`` tool, ``action: "pending"``).

File format (version 1)::

    {"version": 1, "pending": [
      {"id": "3f9c0a1b", "created": "2026-05-01T09:30:00+00:00", "target": "memory",
       "reason": "background_review", "origin": "background_review", "single": true,
       "operations": [{"action": "remove", "old_text": "Node 18",
                       "matched_entry": "Project pins Node 18"}]}]}
"""

from __future__ import annotations

import json
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hermes_memory_builtin._errors import MemoryFileError
from hermes_memory_builtin._files import ensure_memory_dir
from hermes_memory_builtin._format import TARGET_FILES
from hermes_memory_builtin._locking import LockError, exclusive_lock
from hermes_memory_builtin._memory_dir import MemoryDir
from hermes_memory_builtin._sidecar import now_iso

__all__ = [
    "BACKGROUND_REVIEW",
    "PENDING_FILE",
    "THREAT_REVIEW",
    "WRITE_APPROVAL",
    "PendingError",
    "PendingStore",
]

#: Name of the proposals file, beside MEMORY.md and USER.md.
PENDING_FILE = "pending.json"
#: Write origin of an unattended background review (the reason of its proposals too).
BACKGROUND_REVIEW = "background_review"
#: Reason of proposals staged by the ``memory.write_approval`` gate.
WRITE_APPROVAL = "write_approval"
#: Reason of writes the threat scan held (vocabulary alone): applying one records the
#: person's approval, so the scan never blocks that entry again.
THREAT_REVIEW = "threat_review"
PENDING_VERSION = 1
#: At most this many proposals are kept; staging more fails closed with an error.
MAX_PENDING = 200
_FILE_MODE = 0o600
# 200 proposals of at most a few KB each; a larger file is not one of ours.
_MAX_BYTES = 16 * 1024 * 1024


class PendingError(Exception):
    """The proposals file cannot be used (unreadable, malformed, a link, full, locked).

    The message names the file and what to do; nothing was changed.
    """


class PendingStore:
    """The proposals file of one memories directory.

    :param memory_dir: the directory holding ``MEMORY.md`` (``<home>/memories``).
    """

    def __init__(self, memory_dir: str | os.PathLike[str]) -> None:
        self.memory_dir = Path(memory_dir)

    @property
    def path(self) -> Path:
        """``<memory_dir>/pending.json``."""
        return self.memory_dir / PENDING_FILE

    # ------------------------------------------------------------------ reading
    def proposals(self, target: str | None = None) -> list[dict[str, Any]]:
        """Proposals, oldest first (all targets, or only ``target``).

        :raises PendingError: the file exists but cannot be used.
        """
        records = self._read()
        return [r for r in records if target is None or r.get("target") == target]

    def get(self, pending_id: str) -> dict[str, Any] | None:
        """The proposal ``pending_id``, or ``None``."""
        return next((r for r in self._read() if r.get("id") == pending_id), None)

    # ------------------------------------------------------------------ writing
    def stage(
        self,
        target: str,
        operations: list[dict[str, Any]],
        *,
        reason: str,
        origin: str,
        single: bool,
    ) -> tuple[str, bool]:
        """Record a proposal; returns ``(pending_id, already_pending)``.

        An identical proposal (same target and operations) that is still pending is not
        recorded twice: its id is returned with ``already_pending=True``.

        :raises PendingError: the file cannot be used or holds `MAX_PENDING` proposals.
        """
        if target not in TARGET_FILES:
            raise PendingError(f"invalid target {target!r}")
        with self._locked() as directory:
            records = self._read(directory)
            for record in records:
                if record.get("target") == target and record.get("operations") == operations:
                    return str(record["id"]), True
            if len(records) >= MAX_PENDING:
                raise PendingError(
                    f"{self.path} already holds {MAX_PENDING} pending proposals; apply or "
                    "reject some with `hermes-memory memory pending` first"
                )
            known = {r.get("id") for r in records}
            pending_id = secrets.token_hex(4)
            while pending_id in known:
                pending_id = secrets.token_hex(4)
            records.append(
                {
                    "id": pending_id,
                    "created": now_iso(),
                    "target": target,
                    "reason": reason,
                    "origin": origin,
                    "single": single,
                    "operations": operations,
                }
            )
            self._write(records, directory)
            return pending_id, False

    def reject(self, pending_id: str) -> dict[str, Any] | None:
        """Drop proposal ``pending_id`` without applying it; returns it (``None``: unknown)."""
        with self._locked() as directory:
            records = self._read(directory)
            found = next((r for r in records if r.get("id") == pending_id), None)
            if found is not None:
                self._write([r for r in records if r is not found], directory)
            return found

    def apply(self, pending_id: str, store: Any, *, origin: str | None = None) -> dict[str, Any]:
        """Apply proposal ``pending_id`` to ``store`` (a `MemoryStore`) and drop it.

        Runs under the proposals lock, so one proposal is never applied twice. The write
        goes through the store's own checks (lock, drift, budget, threat scan); pinned
        steps touch exactly the entry they were reviewed against. On failure (a changed
        entry: ``stale_entry``; or any other refusal) nothing is changed and the proposal
        stays pending, to be rejected or retried. The answer is the store's result dict
        plus ``pending_id``; an unknown id answers ``success: false``.

        :param origin: recorded as the writer in the entry metadata (default: the
            proposal's own origin).
        """
        with self._locked() as directory:
            records = self._read(directory)
            record = next((r for r in records if r.get("id") == pending_id), None)
            if record is None:
                return {
                    "success": False,
                    "error": f"No pending proposal has the id '{pending_id}'.",
                    "pending_id": pending_id,
                }
            result = _apply_record(record, store, origin or str(record.get("origin") or ""))
            result["pending_id"] = pending_id
            if result.get("success") is True:
                self._write([r for r in records if r is not record], directory)
            return result

    # ------------------------------------------------------------------ internals
    @contextmanager
    def _locked(self) -> Iterator[MemoryDir]:
        if not self.memory_dir.is_absolute():
            # A store without a directory of its own (e.g. rows in a database) must provide
            # its own proposals store; never write beside whatever the working directory is.
            raise PendingError(
                f"this memory store has no memories directory ({self.memory_dir} is not an "
                "absolute path), so changes cannot be staged here"
            )
        if self.memory_dir.is_symlink():
            raise PendingError(f"{self.memory_dir} is a symbolic link; refusing to use it")
        try:
            ensure_memory_dir(self.memory_dir)
            # the lock and the new file are created relative to this descriptor (issue 21)
            with (
                MemoryDir.open(self.memory_dir) as directory,
                exclusive_lock(self.path, directory=directory),
            ):
                yield directory
        except MemoryFileError as exc:
            raise PendingError(f"cannot use {self.memory_dir}: {exc}") from None
        except LockError as exc:
            raise PendingError(f"cannot lock {self.path}: {exc}") from None

    def _read(self, directory: MemoryDir | None = None) -> list[dict[str, Any]]:
        """The records, read through the memories directory's descriptor (``directory`` when
        the caller holds it open under the lock), never through a link."""
        if not self.memory_dir.is_absolute():
            return []
        if directory is None:
            try:
                with MemoryDir.open_if_exists(self.memory_dir) as opened:
                    return [] if opened is None else self._read(opened)
            except MemoryFileError as exc:
                raise PendingError(f"cannot use {self.memory_dir}: {exc}") from None
            except OSError as exc:
                raise PendingError(
                    f"cannot read {self.memory_dir}: {exc.strerror or exc}"
                ) from None
        path = self.path
        try:
            info = directory.lstat(path.name)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise PendingError(f"cannot read {path}: {exc.strerror or exc}") from None
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
            raise PendingError(
                f"{path} is not a regular file (a link or a directory); move it away"
            )
        try:
            data = directory.read_bytes(path.name, _MAX_BYTES)
            raw = json.loads(data.decode("utf-8")) if data.strip() else {"pending": []}
        except OSError as exc:
            raise PendingError(f"cannot read {path}: {exc.strerror or exc}") from None
        except (UnicodeDecodeError, ValueError):
            raise PendingError(
                f"{path} is not valid JSON; fix or move it away (nothing was changed)"
            ) from None
        records = raw.get("pending") if isinstance(raw, dict) else None
        if not isinstance(records, list) or not all(_valid(r) for r in records):
            raise PendingError(
                f"{path} is not a proposals file of this version; fix or move it away"
            )
        return records

    def _write(self, records: list[dict[str, Any]], directory: MemoryDir) -> None:
        text = json.dumps(
            {"version": PENDING_VERSION, "pending": records}, ensure_ascii=False, indent=1
        )
        try:
            directory.write_atomic(
                self.path.name, text + "\n", tmp_prefix=".pending_", mode=_FILE_MODE
            )
        except OSError as exc:
            raise PendingError(f"cannot write {self.path}: {exc.strerror or exc}") from None


def _valid(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    ops = record.get("operations")
    return (
        isinstance(record.get("id"), str)
        and record.get("target") in TARGET_FILES
        and isinstance(ops, list)
        and bool(ops)
        and all(isinstance(op, dict) and op.get("action") in _ACTIONS for op in ops)
    )


_ACTIONS = ("add", "replace", "remove")


def _apply_record(record: dict[str, Any], store: Any, origin: str) -> dict[str, Any]:
    target = str(record["target"])
    ops: list[dict[str, Any]] = record["operations"]
    pinned: dict[int, str] = {}
    for index, op in enumerate(ops, start=1):
        if op["action"] in ("replace", "remove"):
            entry = op.get("matched_entry")
            if not isinstance(entry, str) or not entry:
                # A destructive change that was not pinned to an entry is never applied.
                return {
                    "success": False,
                    "error": (
                        f"Operation {index} ({op['action']}) of this proposal is not pinned "
                        "to the entry it was reviewed against, so it is refused; reject it."
                    ),
                }
            pinned[index] = entry
    clean = [{k: v for k, v in op.items() if k != "matched_entry"} for op in ops]
    single = bool(record.get("single")) and len(clean) == 1
    # A held write reaches the file only through a person applying it: that is the approval.
    extra = {"approved_by_human": True} if record.get("reason") == THREAT_REVIEW else {}
    if single and clean[0]["action"] == "add":
        content = str(clean[0].get("content") or "")
        added: dict[str, Any] = store.add(target, content, origin=origin, **extra)
        return added
    applied: dict[str, Any] = store.apply_pinned(
        target, clean, pinned, origin=origin, allow_empty=single, **extra
    )
    return applied
