"""Throughput and time left of a long job (``sessions embed``), for a bar or a log line.

The rate is taken over a sliding window of recent updates (the first batches of an embedder
that loads its model, or builds its tables, are slower than the rest), falling back to the
whole run while the window is short.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

__all__ = ["Throughput", "format_duration"]

_WINDOW_SECONDS = 60.0


def format_duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``2 h 07 min`` (units are the same in every language)."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


class Throughput:
    """Items per second and the time left to ``total``, from ``update(done)`` calls."""

    def __init__(self, total: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self.done = 0
        self._clock = clock
        self._started = clock()
        self._samples: deque[tuple[float, int]] = deque([(self._started, 0)])

    def update(self, done: int) -> None:
        now = self._clock()
        self.done = done
        self._samples.append((now, done))
        while len(self._samples) > 2 and now - self._samples[1][0] >= _WINDOW_SECONDS:
            self._samples.popleft()

    @property
    def rate(self) -> float:
        """Items per second (0.0 before anything is done)."""
        first_time, first_done = self._samples[0]
        last_time, last_done = self._samples[-1]
        if last_time - first_time <= 0:
            return 0.0
        return (last_done - first_done) / (last_time - first_time)

    @property
    def seconds_left(self) -> float | None:
        """Estimated seconds to ``total`` (``None`` while the rate is unknown)."""
        rate = self.rate
        if rate <= 0:
            return None
        return max(0, self.total - self.done) / rate

    @property
    def elapsed(self) -> float:
        return self._clock() - self._started
