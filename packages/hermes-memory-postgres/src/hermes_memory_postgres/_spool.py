"""A local, append-only spool of writes made while PostgreSQL was unreachable.

Each line is one JSON record ``{"key", "kind", "payload"}``, appended and fsynced before the
write is acknowledged. `Spool.replay` applies the records in order through a callback that
applies each exactly once (the key is recorded in the same transaction as the write), then
removes them. Several processes of one host may share a spool: appends and replays hold an
exclusive lock on a sibling ``.lock`` file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hermes_memory_core.kit import make_private_dirs

__all__ = ["Spool"]

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _lock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_LOCK, 1)

    def _unlock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


class Spool:
    """The spool file ``<directory>/<name>.jsonl`` (created 0600 on first append).

    ``name`` may hold any text (an owner key): it is reduced to a safe file name.
    """

    def __init__(self, directory: Path, name: str) -> None:
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:60]
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:12]
        self.directory = directory
        self.path = directory / f"{safe}-{digest}.jsonl"
        self._lock_path = directory / f"{safe}-{digest}.lock"

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        make_private_dirs(self.directory)  # <home>/hermes-memory too, not only the leaf
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            _lock(fd)
            try:
                yield
            finally:
                _unlock(fd)
        finally:
            os.close(fd)

    def pending(self) -> int:
        """How many records wait to be replayed (0 when the file does not exist)."""
        try:
            with self.path.open("rb") as fh:
                return sum(1 for line in fh if line.strip())
        except FileNotFoundError:
            return 0

    def append(self, key: str, kind: str, payload: dict[str, Any]) -> None:
        """Append one record and fsync it (the write is durable when this returns)."""
        line = json.dumps({"key": key, "kind": kind, "payload": payload}, ensure_ascii=False)
        with self._locked():
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, (line + "\n").encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)

    def replay(self, apply: Callable[[str, str, dict[str, Any]], Any]) -> int:
        """Apply every record in order; returns how many were applied.

        A record that fails leaves it and every later record in the file, and the
        exception propagates. A torn last line (a crash while appending) is skipped.
        """
        with self._locked():
            try:
                lines = self.path.read_bytes().splitlines()
            except FileNotFoundError:
                return 0
            records = []
            for raw in lines:
                if not raw.strip():
                    continue
                try:
                    records.append(json.loads(raw))
                except ValueError:
                    continue
            done = 0
            try:
                for rec in records:
                    apply(str(rec["key"]), str(rec["kind"]), dict(rec["payload"]))
                    done += 1
            finally:
                rest = records[done:]
                if not rest:
                    self.path.unlink(missing_ok=True)
                else:
                    tmp = self.path.with_suffix(".tmp")
                    tmp.write_text(
                        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rest),
                        encoding="utf-8",
                    )
                    os.chmod(tmp, 0o600)
                    os.replace(tmp, self.path)
            return done
