"""`EmbeddingWorker`: the daemon thread that embeds new messages off the writer's thread.

New message ids go on a bounded queue (`notify` never blocks and never raises); when it is
full the rest stay pending for a backfill. Embedder failures never reach the writer: the
worker records the error, waits `FAILURE_BACKOFF` seconds, and the messages stay pending.
With an ``idle`` task (the quality tier's backfill), the worker runs it whenever the queue
is empty: new messages always go first, and the backlog is caught up in between.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence

__all__ = ["FAILURE_BACKOFF", "IDLE_RECHECK", "EmbeddingWorker"]

logger = logging.getLogger(__name__)

#: Seconds the worker waits after an embedder failure before it tries again.
FAILURE_BACKOFF = 30.0
#: Seconds before an idle task that found nothing to do is tried again (messages that
#: arrive meanwhile come through the queue; this only picks up what a queue overflow or
#: another process left).
IDLE_RECHECK = 60.0


class EmbeddingWorker:
    """One background embedding thread and its bounded queue.

    :param embed: embeds and stores a batch of message ids (raises when the embedder fails).
    :param warm_up: run once when the thread starts (load caches, queue missed messages);
        its errors are ignored.
    :param closed: whether the archive was closed under the worker (it then exits).
    :param queue_size: ids the queue holds at most.
    :param batch_size: ids handed to ``embed`` at once.
    :param idle: run while the queue is empty; returns how much it did (0: nothing left,
        tried again after `IDLE_RECHECK` seconds). Its errors count as embedder failures.
    """

    def __init__(
        self,
        *,
        embed: Callable[[Sequence[int]], int],
        warm_up: Callable[[], None],
        closed: Callable[[], bool],
        queue_size: int,
        batch_size: int,
        idle: Callable[[], int] | None = None,
    ) -> None:
        self._embed = embed
        self._idle = idle
        self._idle_after = 0.0
        self._warm_up = warm_up
        self._closed = closed
        self._batch_size = batch_size
        self._queue: queue.Queue[int | None] = queue.Queue(maxsize=queue_size)
        self._stop = threading.Event()
        self._overflow_logged = False
        self._failed_until = 0.0
        #: The last embedder failure (``"Type: message"``), None after a success.
        self.last_error: str | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        """Whether the thread was started, is alive and was not closed."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def closed(self) -> bool:
        """Whether the worker was told to stop or the archive was closed under it."""
        return self._stop.is_set() or self._closed()

    def start(self) -> None:
        """Start the daemon thread."""
        self._thread = threading.Thread(
            target=self._run, name="hermes-memory-embedder", daemon=True
        )
        self._thread.start()

    def queued(self) -> int:
        """Ids waiting in the queue."""
        return self._queue.qsize()

    def notify(self, ids: Sequence[int]) -> None:
        """Queue new messages (never blocks, never raises; no-op when not running)."""
        if self._thread is None:
            return
        for mid in ids:
            try:
                self._queue.put_nowait(int(mid))
            except queue.Full:
                if not self._overflow_logged:
                    self._overflow_logged = True
                    logger.warning(
                        "session archive: more new messages than the embedding queue holds"
                        " (%d); the rest stay pending: run `hermes-memory sessions embed`",
                        self._queue.maxsize,
                    )
                return

    def succeeded(self) -> None:
        """An embedding pass worked: clear the error and the backoff."""
        self._failed_until = 0.0
        self.last_error = None

    def close(self, timeout: float = 1.0) -> None:
        """Stop the thread (what it has not embedded stays pending); safe to call twice."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            with contextlib.suppress(queue.Full):
                self._queue.put_nowait(None)
            thread.join(timeout)

    def _run(self) -> None:
        with contextlib.suppress(Exception):
            self._warm_up()
        while not self._stop.is_set():
            try:
                first = self._queue.get(timeout=0.5 if self._idle_after else 0.05)
            except queue.Empty:
                if self._closed():
                    return  # the store was closed without closing the index
                self._run_idle()
                continue
            if first is None:
                return
            batch = [first]
            while len(batch) < self._batch_size:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    self._stop.set()
                    break
                batch.append(more)
            wait = self._failed_until - time.monotonic()
            if wait > 0 and self._stop.wait(wait):
                return
            try:
                self._embed(batch)
            except Exception as exc:  # fail open: the messages stay pending
                if self._stop.is_set() or self._closed():
                    return  # closed under us (a short process ending): nothing failed
                self._failed(exc)

    def _run_idle(self) -> None:
        """One step of the idle task, unless none is set, it is resting or failing."""
        now = time.monotonic()
        if self._idle is None or now < max(self._idle_after, self._failed_until):
            return
        try:
            done = self._idle()
        except Exception as exc:  # fail open, like a batch of new messages
            if not (self._stop.is_set() or self._closed()):
                self._failed(exc)
            return
        self._idle_after = 0.0 if done else time.monotonic() + IDLE_RECHECK

    def _failed(self, exc: BaseException) -> None:
        self.last_error = f"{type(exc).__name__}: {exc}"
        self._failed_until = time.monotonic() + FAILURE_BACKOFF
        logger.warning(
            "session archive: embedding failed (%s); lexical search keeps working, the"
            " messages stay pending (retry in %.0f s, or run `hermes-memory sessions embed`)",
            self.last_error,
            FAILURE_BACKOFF,
        )
