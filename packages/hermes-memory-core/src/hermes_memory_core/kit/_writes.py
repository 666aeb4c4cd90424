"""The one shutdown policy for remote writes: ordered, bounded, spooled, replayed.

`PendingWrites` keeps a provider's writes (JSON-able dicts) in order and sends them on the
provider's own `SerialWorker`, oldest first. A transient failure (the service is down, the
breaker is open) stops the flush and keeps the write for the next one; a write the service
rejects is dropped with a warning. At shutdown whatever is still unsent is saved to the
`Spool` and the next start replays it: delivery is at-least-once, the same for every adapter
built on the kit. When more than ``max_pending`` writes wait, the oldest is dropped and
reported.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_memory_core._worker import SerialWorker
from hermes_memory_core.kit._failures import CallFailed, Unavailable
from hermes_memory_core.kit._guard import Guard
from hermes_memory_core.kit._spool import Spool

__all__ = ["PendingWrites", "TurnBuffer", "Write", "close_when_idle"]

#: One write: a JSON-able mapping the adapter's ``send`` understands.
Write = dict[str, Any]


class PendingWrites:
    """Ordered, bounded writes of one provider, with spool-at-shutdown and replay-at-start.

    :param guard: the provider's `Guard` (reports drops and saves in its health record).
    :param send: performs one write (through ``guard.call``); it may record progress in the
        write dict (e.g. ``write["sent"]``) so a partial write resumes where it stopped.
    :param home: where unsent writes are spooled (None: they are reported as lost).
    :param max_pending: writes kept while the service is unreachable.
    :param accept: validates a replayed write (a corrupt spool row is skipped).
    """

    def __init__(
        self,
        guard: Guard,
        send: Callable[[Write], None],
        *,
        home: Path | None,
        max_pending: int = 256,
        accept: Callable[[Write], bool] = lambda write: True,
    ) -> None:
        self.guard = guard
        self.send = send
        self.home = home
        self.max_pending = max(1, max_pending)
        self.accept = accept
        self.worker = SerialWorker(f"{guard.name}-write")
        self.dropped = 0
        self._pending: deque[tuple[Write, Path | None]] = deque()
        self._claimed: dict[Path, int] = {}  # claimed spool file -> its writes not settled
        self._lock = threading.Lock()
        self._closed = False

    @property
    def log(self) -> logging.Logger:
        """The provider's logger."""
        return self.guard.log

    def __len__(self) -> int:
        with self._lock:
            return len(self._pending)

    def snapshot(self) -> list[Write]:
        """The writes still waiting, oldest first (copies)."""
        with self._lock:
            return [dict(w) for w, _ in self._pending]

    # ----------------------------------------------------------------- queueing
    def enqueue(self, write: Write) -> None:
        """Keep ``write`` and start a flush on the worker (returns at once)."""
        self._add([(write, None)])
        self.worker.submit(self.flush)

    def _add(self, rows: list[tuple[Write, Path | None]], *, front: bool = False) -> None:
        with self._lock:
            if front:  # replayed writes are older than anything queued since the start
                self._pending.extendleft(reversed(rows))
            else:
                self._pending.extend(rows)
            overflow = len(self._pending) - self.max_pending
            dropped = [self._pending.popleft() for _ in range(max(0, overflow))]
            self.dropped += len(dropped)
        self._settle(dropped)
        if dropped:
            self.guard.report(
                self.guard.state,
                f"{self.dropped} write(s) dropped: {self.guard.label} unreachable and more "
                f"than {self.max_pending} pending",
                warn=True,
            )

    def flush(self) -> None:
        """Send pending writes oldest first; stop at the first transient failure."""
        while True:
            with self._lock:
                if not self._pending or self._closed:
                    return
                row = self._pending[0]
            try:
                self.send(row[0])
            except Unavailable:
                return
            except CallFailed as exc:
                if exc.failure.trips_breaker:
                    return  # kept: retried on the next write, session end or next start
                self.log.warning(
                    "%s rejected a write; dropped: %s", self.guard.label, exc.failure.message
                )
            except Exception:  # a bug must not wedge the queue
                self.log.warning(
                    "%s: unexpected error sending a write; dropped", self.guard.label,
                    exc_info=True,
                )  # fmt: skip
            with self._lock:
                done = bool(self._pending) and self._pending[0] is row
                if done:
                    self._pending.popleft()
            if done:
                self._settle([row])

    def drain(self, timeout: float) -> bool:
        """Flush now and wait at most ``timeout`` seconds; False if writes remain queued."""
        self.worker.submit(self.flush)
        return self.worker.drain(timeout)

    # ----------------------------------------------------------------- shutdown
    def close(self, timeout: float) -> bool:
        """Last flush within ``timeout``, stop the worker, spool what is still unsent.

        Returns whether the worker finished in time (False: a call is still in flight).
        """
        self.worker.submit(self.flush)
        drained = self.worker.close(timeout)
        with self._lock:
            self._closed = True
            rows = [w for w, _ in self._pending]
            self._pending.clear()
            claimed = list(self._claimed)
            self._claimed.clear()
        self._save(rows, claimed)
        return drained

    def _save(self, rows: list[Write], claimed: list[Path]) -> None:
        """Spool ``rows``; the claimed files they came from go only once they are saved."""
        if rows and self.home is None:
            self.log.warning(
                "%s: %d write(s) not sent before shutdown are lost", self.guard.label, len(rows)
            )
            return
        if rows:
            assert self.home is not None
            try:
                path = Spool(self.home, self.guard.name).save(rows)
            except OSError as exc:
                self.log.warning(
                    "%s: %d unsent write(s) lost (%s)", self.guard.label, len(rows), exc
                )
                return
            detail = f"{len(rows)} write(s) not sent before shutdown; saved to {path}"
            self.guard.report(self.guard.state, detail, warn=True)
        for old in claimed:
            Spool.release(old)

    def restore(self) -> int:
        """Queue the writes spooled by earlier shutdowns (of any process sharing the home).

        Each file is claimed first and deleted only when its writes are settled, so a crash
        before the resend leaves it for the next start. Returns how many writes were queued.
        """
        if self.home is None:
            return 0
        spool = Spool(self.home, self.guard.name)
        try:
            paths = spool.claim()
        except OSError as exc:
            self.log.warning("%s: cannot list saved writes (%s)", self.guard.label, exc)
            return 0
        restored: list[tuple[Write, Path | None]] = []
        for path in paths:
            try:
                rows = [w for w in spool.read(path) if self.accept(w)]
            except (OSError, ValueError) as exc:
                self.log.warning("%s: cannot read %s (%s); left in place", self.guard.label,
                                 path, exc)  # fmt: skip
                continue
            if not rows:
                Spool.release(path)
                continue
            with self._lock:
                self._claimed[path] = len(rows)
            restored += [(w, path) for w in rows]
        if restored:
            self._add(restored, front=True)
            self.log.info("%s: %d saved write(s) queued for sending", self.guard.label,
                          len(restored))  # fmt: skip
            self.worker.submit(self.flush)
        return len(restored)

    def _settle(self, rows: list[tuple[Write, Path | None]]) -> None:
        """Writes left the queue: delete each claimed file none of whose writes remain."""
        finished: list[Path] = []
        with self._lock:
            for _, origin in rows:
                if origin is None or origin not in self._claimed:
                    continue
                self._claimed[origin] -= 1
                if self._claimed[origin] <= 0:
                    del self._claimed[origin]
                    finished.append(origin)
        for path in finished:
            Spool.release(path)


class TurnBuffer:
    """Finished turns kept until the adapter sends them together (every N turns, at session
    end, before compression): each turn as ``"User: …\\nAssistant: …"``. Thread-safe."""

    def __init__(self) -> None:
        self._turns: list[str] = []
        self._lock = threading.Lock()

    def add(self, user: str, assistant: str) -> int:
        """Keep one turn (blank sides left out); how many turns are kept (0: nothing kept)."""
        sides = (("User", user), ("Assistant", assistant))
        parts = [f"{who}: {text.strip()}" for who, text in sides if text.strip()]
        with self._lock:
            if parts:
                self._turns.append("\n".join(parts))
            return len(self._turns) if parts else 0

    def take(self) -> list[str]:
        """The kept turns, oldest first; the buffer is empty afterwards."""
        with self._lock:
            turns, self._turns = self._turns, []
        return turns


def close_when_idle(
    close: Callable[[], None],
    workers: tuple[SerialWorker | None, ...],
    *,
    drained: bool,
    within: float,
    name: str,
) -> None:
    """Close a client at shutdown without cutting off a call still in flight.

    When the writes were drained and no worker has work, ``close`` runs now; otherwise a
    daemon thread runs it once the workers are idle, or after ``within`` seconds (bound it
    by the request timeout).
    """

    def idle() -> bool:
        return not any(w is not None and w.pending for w in workers)

    if drained and idle():
        close()
        return
    deadline = time.monotonic() + within

    def later() -> None:
        while time.monotonic() < deadline and not idle():
            time.sleep(0.05)
        close()

    threading.Thread(target=later, name=name, daemon=True).start()
