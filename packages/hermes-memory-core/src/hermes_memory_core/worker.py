"""A single background thread that runs submitted tasks in order.

Used by `MemoryManager` for ``sync_turn`` and ``queue_prefetch``: turn N is written before
turn N+1, and a slow provider never blocks the agent's turn. The thread is a daemon so a
provider stuck for ever cannot keep the process alive at exit.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

__all__ = ["SerialWorker"]

logger = logging.getLogger(__name__)


class SerialWorker:
    """Run callables one after another on a lazily started daemon thread.

    :param name: the thread's name (shown in thread dumps and debuggers).
    :param max_queued: refuse new tasks (`submit` returns False) while this many are waiting
        to start; the running task does not count. ``None`` (the default) never refuses.
        Use it where dropping work is better than piling it up behind a hung server, e.g.
        recall searches.
    :raises ValueError: ``max_queued`` below 1.
    """

    def __init__(
        self, name: str = "hermes-memory-worker", *, max_queued: int | None = None
    ) -> None:
        if max_queued is not None and max_queued < 1:
            raise ValueError(f"max_queued must be at least 1 or None, got {max_queued!r}")
        self._name = name
        self._max_queued = max_queued
        self._queued = 0
        self._tasks: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._pending = 0
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def name(self) -> str:
        """The worker thread's name."""
        return self._name

    @property
    def pending(self) -> int:
        """Tasks submitted and not yet finished (including the one running)."""
        with self._cond:
            return self._pending

    def submit(self, task: Callable[[], None]) -> bool:
        """Queue ``task``; it runs after everything submitted before it.

        Returns False (and runs nothing) once the worker is closed, or while ``max_queued``
        tasks are waiting to start. If no thread can be started, the task runs inline so that
        no write is ever dropped.
        """
        with self._cond:
            if self._closed:
                return False
            if self._max_queued is not None and self._queued >= self._max_queued:
                return False
            self._pending += 1
            started = self._ensure_thread()
            if started:
                self._queued += 1
        if not started:
            self._run(task)
            return True
        self._tasks.put(task)
        return True

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every queued task finished; False if ``timeout`` ran out first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._pending:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(remaining)
        return True

    def close(self, timeout: float | None = None) -> bool:
        """Refuse new tasks, wait (bounded) for the queued ones, and stop the thread."""
        with self._cond:
            self._closed = True
        drained = self.drain(timeout)
        self._tasks.put(None)
        return drained

    def _ensure_thread(self) -> bool:
        if self._thread is not None and self._thread.is_alive():
            return True
        thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
        try:
            thread.start()
        except RuntimeError:  # interpreter shutting down, or no threads left
            return False
        self._thread = thread
        return True

    def _loop(self) -> None:
        while True:
            task = self._tasks.get()
            if task is None:
                return
            with self._cond:
                self._queued -= 1
            self._run(task)

    def _run(self, task: Callable[[], None]) -> None:
        try:
            task()
        except Exception:  # tasks isolate their own failures; this is the last guard
            logger.exception("background memory task failed")
        finally:
            with self._cond:
                self._pending -= 1
                self._cond.notify_all()
