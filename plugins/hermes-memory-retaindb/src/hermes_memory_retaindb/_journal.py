"""`JournaledWrites`: the kit's `PendingWrites`, with every write on disk from the moment it
is queued, so that a crash loses nothing.

The kit spools unsent writes at shutdown; a process that is killed (``SIGKILL``, an OOM kill,
a power cut after the fsync) never reaches its shutdown. Here each write is first saved as
its own spool file, named as the kit's `Spool` names a file *being sent* by this process
(``<home>/<name>_pending.<pid>.<time_ns>.sending``, mode 0600). While this process lives no
other process touches it; once it is gone, the next start of any process sharing the home
claims it (`Spool.claim`) and sends it again, in the original order. The file is deleted when
the write is settled (sent, refused by the service, or dropped by the queue bound). A clean
shutdown still spools what is unsent in one file, then deletes the journal files.

Delivery stays at-least-once: a write sent just before a crash, whose file was not yet
deleted, is sent again.

This belongs in the kit (a ``journal=True`` option of `PendingWrites`); until it is there it
lives in this package and touches only the queue's documented bookkeeping.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from hermes_memory_core.kit import PendingWrites, Write, atomic_write_text

__all__ = ["JournaledWrites", "journal_files"]


def journal_files(home: Path, name: str) -> list[Path]:
    """The journal and spool files of provider ``name`` under ``home`` (any process)."""
    return sorted(home.glob(f"{name}_pending.*"))


class JournaledWrites(PendingWrites):
    """`PendingWrites` that saves each write to disk before queueing it.

    Same parameters and behaviour as `PendingWrites`; a write whose journal file cannot be
    written (disk full, read-only home) is still queued, and the failure is logged.
    """

    _last_stamp = 0

    def _journal(self, write: Write) -> Path | None:
        if self.home is None:
            return None
        with self._lock:  # strictly increasing stamps: replay keeps the order of queueing
            stamp = self._last_stamp = max(time.time_ns(), self._last_stamp + 1)
        path = self.home / f"{self.guard.name}_pending.{os.getpid()}.{stamp}.sending"
        try:
            atomic_write_text(path, json.dumps([write], ensure_ascii=False), mode=0o600)
        except (OSError, TypeError, ValueError) as exc:
            self.log.warning(
                "%s: cannot journal a write (%s); it is kept in memory only", self.guard.label, exc
            )
            return None
        return path

    def enqueue(self, write: Write) -> None:
        """Save ``write`` to its journal file, queue it and start a flush (returns at once)."""
        path = self._journal(write)
        if path is not None:
            with self._lock:  # settled like a replayed file: deleted once its write leaves
                self._claimed[path] = 1
        self._add([(write, path)])
        self.worker.submit(self.flush)
