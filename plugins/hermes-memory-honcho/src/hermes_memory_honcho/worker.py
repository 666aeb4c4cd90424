"""A single background thread that runs submitted jobs one at a time, in order."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["SerialWorker"]

logger = logging.getLogger(__name__)
T = TypeVar("T")


class SerialWorker:
    """FIFO job runner on one daemon thread, started on first use.

    A daemon thread never keeps the interpreter alive: `stop` bounds how long a caller waits
    for in-flight network work, and the process can exit even if a job still hangs.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._queue: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]] | None] = (
            queue.SimpleQueue()
        )
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._pending = 0
        self._stopped = False

    @property
    def pending(self) -> int:
        """Jobs submitted and not finished yet (including the running one)."""
        return self._pending

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Queue ``fn``; its result or exception lands in the returned future."""
        future: Future[T] = Future()
        with self._lock:
            if self._stopped:
                future.set_exception(RuntimeError(f"{self._name} worker is stopped"))
                return future
            self._pending += 1
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._queue.put((fn, future))
        return future

    def drain(self, timeout: float | None) -> bool:
        """Wait until every job submitted so far has finished; False if ``timeout`` elapsed."""
        marker = self.submit(lambda: None)
        try:
            marker.result(timeout=timeout)
        except TimeoutError:
            return False
        except RuntimeError:
            return self._pending == 0
        return True

    def stop(self, timeout: float | None) -> bool:
        """Drain within ``timeout``, then end the thread; False if work was still running."""
        drained = self.drain(timeout)
        with self._lock:
            self._stopped = True
            self._queue.put(None)
        return drained

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            fn, future = item
            try:
                if future.set_running_or_notify_cancel():
                    try:
                        future.set_result(fn())
                    except BaseException as exc:  # a job must never kill the worker
                        future.set_exception(exc)
            finally:
                with self._lock:
                    self._pending -= 1
