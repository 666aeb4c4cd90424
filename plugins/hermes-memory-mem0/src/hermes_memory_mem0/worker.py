"""A single daemon thread that runs jobs one at a time, in submission order.

Used for writes (turn syncs and mirrored builtin writes must reach mem0 in order) and for
recall searches (kept apart so a slow write never delays recall). Daemon, so a hung server
can never keep the interpreter from exiting; `drain` and `stop` are bounded.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable

__all__ = ["OrderedWorker"]

logger = logging.getLogger(__name__)

_STOP = object()


class OrderedWorker:
    """FIFO job runner on one daemon thread.

    :param name: thread name (shown in thread dumps).
    :param max_pending: jobs queued beyond this are refused (`submit` returns False).
    """

    def __init__(self, name: str, *, max_pending: int = 256) -> None:
        self.name = name
        self._queue: queue.Queue[object] = queue.Queue(maxsize=max_pending)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._stopped = False
        self._unfinished = 0
        self._idle = threading.Condition(self._lock)

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    @property
    def pending(self) -> int:
        """Jobs submitted and not finished yet (including the running one)."""
        with self._lock:
            return self._unfinished

    @property
    def busy(self) -> bool:
        """Whether any job is queued or running."""
        return self.pending > 0

    def submit(self, job: Callable[[], object]) -> bool:
        """Queue ``job``; False when the worker is stopped or its queue is full."""
        with self._lock:
            if self._stopped:
                return False
            try:
                self._queue.put_nowait(job)
            except queue.Full:
                return False
            self._unfinished += 1
            self._ensure_thread()
        return True

    def drain(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for every queued job; True when all finished."""
        with self._idle:
            return self._idle.wait_for(lambda: self._unfinished == 0, timeout=max(0.0, timeout))

    def stop(self, timeout: float) -> bool:
        """Drain (bounded), then stop the thread; True when nothing was left behind."""
        drained = self.drain(timeout)
        with self._lock:
            self._stopped = True
            left = self._unfinished
        if not drained:
            # Drop what never started; the running job ends on its own (daemon thread).
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not _STOP:
                    with self._lock:
                        self._unfinished -= 1
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait(_STOP)
        if left:
            logger.debug("%s stopped with %d job(s) unfinished", self.name, left)
        return drained

    def _run(self) -> None:
        while True:
            job = self._queue.get()
            if job is _STOP:
                return
            try:
                job()  # type: ignore[operator]
            except Exception:  # jobs handle their own errors; this is a last resort
                logger.exception("%s: background job failed", self.name)
            finally:
                with self._idle:
                    self._unfinished -= 1
                    self._idle.notify_all()
