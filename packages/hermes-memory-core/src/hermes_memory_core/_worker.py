"""Background threads for provider calls: a serial worker per provider, and one-shot calls.

`SerialWorker` runs submitted callables one after another on a daemon thread: turn N is
written before turn N+1, and a slow provider never blocks the agent. `MemoryManager` gives
every external provider its own worker, so a provider stuck for ever only stalls its own
queue. Threads are daemons: a hung provider cannot keep the process alive at exit.

`call_bounded` runs one callable on a fresh daemon thread and waits for it at most a given
number of seconds; it is used for one-off plugin code (a provider's constructor,
``is_available``) that must not hang a command.

Exceptions raised by a task — including ``SystemExit`` and ``KeyboardInterrupt``, which on a
worker thread can only come from the task's own code (Python delivers signals to the main
thread) — are caught, logged and recorded on the task's `TaskHandle`; they never end the
worker or the process.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Literal

__all__ = ["BoundedOutcome", "SerialWorker", "TaskHandle", "call_bounded"]

logger = logging.getLogger("hermes_memory_core.worker")

Overflow = Literal["refuse", "drop_oldest"]


class TaskHandle:
    """One submitted task: wait for it, then read its `result` or `error`.

    States: ``"queued"`` → ``"running"`` → ``"done"``; or ``"dropped"`` when the task was
    discarded before it started (queue overflow, worker closed, no thread available).
    """

    __slots__ = ("_done", "_fn", "_log", "_state", "error", "label", "result")

    def __init__(self, fn: Callable[[], Any], label: str = "", *, log: bool = True) -> None:
        self._fn = fn
        self._log = log
        self._state = "queued"
        self._done = threading.Event()
        self.label = label
        self.result: Any = None
        """What the task returned (None until it is done, or if it raised)."""
        self.error: BaseException | None = None
        """The exception the task raised, if any."""

    @property
    def state(self) -> str:
        """``"queued"``, ``"running"``, ``"done"`` or ``"dropped"``."""
        return self._state

    @property
    def finished(self) -> bool:
        """True once the task ran to completion (or raised) or was dropped."""
        return self._done.is_set()

    @property
    def ok(self) -> bool:
        """True when the task ran and returned without raising."""
        return self._state == "done" and self.error is None

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until `finished`; False if ``timeout`` seconds ran out first."""
        return self._done.wait(timeout)

    def _run(self) -> None:
        self._state = "running"
        try:
            self.result = self._fn()
        except BaseException as exc:  # a task never ends its worker
            self.error = exc
            if self._log:
                logger.warning(
                    "background memory task %s raised %s: %s",
                    self.label or "?",
                    type(exc).__name__,
                    exc,
                    exc_info=exc,
                )
        finally:
            self._state = "done"
            self._fn = _noop  # drop references held by the closure
            self._done.set()

    def _drop(self) -> None:
        self._state = "dropped"
        self._fn = _noop
        self._done.set()


def _noop() -> None:
    return None


class SerialWorker:
    """Run callables one after another on a daemon thread.

    :param name: the thread's name (shown in thread dumps and debuggers).
    :param max_queued: bound on tasks waiting to start (the running task does not count).
        ``None`` (the default) never bounds the queue.
    :param overflow: what a full queue does with a new task: ``"refuse"`` (the default;
        `submit` returns False, e.g. for recall searches where dropping work beats piling it
        up behind a hung server) or ``"drop_oldest"`` (the oldest waiting task is discarded
        with a logged warning, and the new one is queued: the caller is never blocked).
    :param inline_fallback: if no thread can be started (interpreter shutting down, thread
        limit reached), run the task on the caller's thread so that no write is dropped
        (default). With False the task is dropped instead, with a warning — for code that
        must never run on the caller's thread.
    :raises ValueError: ``max_queued`` below 1 or an unknown ``overflow``.
    """

    def __init__(
        self,
        name: str = "hermes-memory-worker",
        *,
        max_queued: int | None = None,
        overflow: Overflow = "refuse",
        inline_fallback: bool = True,
    ) -> None:
        if max_queued is not None and max_queued < 1:
            raise ValueError(f"max_queued must be at least 1 or None, got {max_queued!r}")
        if overflow not in ("refuse", "drop_oldest"):
            raise ValueError(f"overflow must be 'refuse' or 'drop_oldest', got {overflow!r}")
        self._name = name
        self._max_queued = max_queued
        self._overflow: Overflow = overflow
        self._inline_fallback = inline_fallback
        self._queue: deque[TaskHandle | None] = deque()
        self._pending = 0
        self._dropped = 0
        self._current: TaskHandle | None = None
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

    @property
    def dropped(self) -> int:
        """Tasks discarded so far because the queue was full (``"drop_oldest"``)."""
        with self._cond:
            return self._dropped

    @property
    def current(self) -> TaskHandle | None:
        """The task running right now, if any."""
        with self._cond:
            return self._current

    @property
    def closed(self) -> bool:
        """True once `close` was called."""
        with self._cond:
            return self._closed

    def start(self) -> bool:
        """Start the thread now rather than on the first `submit`; False if it cannot start."""
        with self._cond:
            return self._ensure_thread()

    def submit(self, task: Callable[[], Any]) -> bool:
        """Queue ``task``; it runs after everything submitted before it.

        Returns False (and runs nothing) once the worker is closed, or when the queue is
        full and ``overflow`` is ``"refuse"``. See `call` for a handle to wait on.
        """
        handle = self.call(task)
        return handle is not None and handle.state != "dropped"

    def call(self, task: Callable[[], Any], *, label: str = "") -> TaskHandle | None:
        """Queue ``task`` and return its `TaskHandle` (None when refused or closed).

        ``label`` names the task in log messages (e.g. ``"mem0.sync_turn"``).
        """
        handle = TaskHandle(task, label)
        evicted: TaskHandle | None = None
        with self._cond:
            if self._closed:
                return None
            waiting = len(self._queue)
            if self._max_queued is not None and waiting >= self._max_queued:
                if self._overflow == "refuse":
                    return None
                evicted = self._queue.popleft()
                if evicted is not None:
                    self._pending -= 1
                    self._dropped += 1
            started = self._ensure_thread()
            self._pending += 1
            if started:
                self._queue.append(handle)
                self._cond.notify_all()
        if evicted is not None:
            evicted._drop()
            logger.warning(
                "memory worker %s is full (%d waiting): dropped the oldest queued task %s",
                self._name,
                self._max_queued,
                evicted.label or "?",
            )
        if not started:
            if self._inline_fallback:
                self._execute(handle)
            else:
                logger.warning("memory worker %s has no thread: task %s dropped", self._name, label)
                with self._cond:
                    self._pending -= 1
                    self._cond.notify_all()
                handle._drop()
        return handle

    def cancel(self, handle: TaskHandle) -> bool:
        """Drop ``handle`` if it is still waiting to start; True if it was dropped."""
        with self._cond:
            if handle.state != "queued" or handle not in self._queue:
                return False
            self._queue.remove(handle)
            self._pending -= 1
            self._cond.notify_all()
        handle._drop()
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
        """Refuse new tasks, wait (bounded) for the queued ones, and stop the thread.

        Tasks still waiting when ``timeout`` runs out stay queued and run if the thread
        ever gets to them; the thread then ends.
        """
        with self._cond:
            self._closed = True
        drained = self.drain(timeout)
        with self._cond:
            self._queue.append(None)
            self._cond.notify_all()
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
            with self._cond:
                while not self._queue:
                    self._cond.wait()
                task = self._queue.popleft()
                if task is None:
                    return
                self._current = task
            self._execute(task)

    def _execute(self, task: TaskHandle) -> None:
        try:
            task._run()
        finally:
            with self._cond:
                if self._current is task:
                    self._current = None
                self._pending -= 1
                self._cond.notify_all()


class BoundedOutcome:
    """What `call_bounded` saw: whether the call finished, its value or its exception."""

    __slots__ = ("error", "finished", "value")

    def __init__(
        self, finished: bool, value: Any = None, error: BaseException | None = None
    ) -> None:
        self.finished = finished
        """False when the call was still running when the time ran out."""
        self.value = value
        self.error = error


def call_bounded(fn: Callable[[], Any], timeout: float, *, name: str = "") -> BoundedOutcome:
    """Run ``fn`` on a fresh daemon thread and wait at most ``timeout`` seconds.

    Never raises for what ``fn`` does: its exception (any `BaseException`) is returned in
    the outcome. A call still running after ``timeout`` is abandoned (it goes on in the
    background; its thread is a daemon). If no thread can be started, ``fn`` is not run and
    the outcome carries the ``RuntimeError``.
    """
    handle = TaskHandle(fn, name, log=False)
    thread = threading.Thread(
        target=handle._run, name=f"hermes-memory-call-{name or 'plugin'}", daemon=True
    )
    try:
        thread.start()
    except RuntimeError as exc:
        return BoundedOutcome(True, error=exc)
    if not handle.wait(timeout):
        return BoundedOutcome(False)
    return BoundedOutcome(True, handle.result, handle.error)
