"""Long work started from a page (embedding the archive, importing Hermes' state.db).

One job of each kind at a time, in a thread of its own; the page polls its progress
(``/archive/progress``) and shows a live bar. A finished job keeps its outcome until the
next one of its kind starts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Job", "Jobs"]


@dataclass
class Job:
    """Progress and outcome of one background job."""

    kind: str
    done: int = 0
    total: int = 0
    running: bool = True
    error: str | None = None
    result: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.time)

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "done": self.done,
            "total": self.total,
            "running": self.running,
            "error": self.error,
            "result": self.result,
        }


class Jobs:
    """The jobs of one dashboard."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def get(self, kind: str) -> Job | None:
        with self._lock:
            return self._jobs.get(kind)

    def start(self, kind: str, work: Callable[[Job], dict[str, Any]]) -> bool:
        """Run ``work(job)`` in the background; False when a job of ``kind`` is running."""
        with self._lock:
            current = self._jobs.get(kind)
            if current is not None and current.running:
                return False
            job = Job(kind)
            self._jobs[kind] = job

        def run() -> None:
            try:
                job.result = work(job)
            except Exception as exc:  # shown on the page; what was done is kept
                job.error = " ".join(str(exc).split()) or type(exc).__name__
            finally:
                job.running = False

        thread = threading.Thread(target=run, name=f"dashboard-{kind}", daemon=True)
        self._threads.append(thread)
        thread.start()
        return True

    def wait(self, timeout: float) -> None:
        """Wait (bounded) for running jobs, e.g. before the server exits."""
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
