"""A small circuit breaker: N consecutive failures open it for a cool-down period.

While open, calls are refused at once (no network). After the cool-down one trial call is
let through ("half-open"); success closes the breaker, failure re-opens it for another
cool-down.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["CircuitBreaker"]


class CircuitBreaker:
    """Thread-safe consecutive-failure breaker.

    :param threshold: consecutive failures that open the breaker.
    :param cooldown: seconds it stays open before a trial call is allowed.
    :param clock: monotonic clock (injectable for tests).
    """

    def __init__(
        self, threshold: int = 5, cooldown: float = 120.0, clock: Callable[[], float] | None = None
    ) -> None:
        self.threshold = max(1, threshold)
        self.cooldown = cooldown
        self._clock = clock or time.monotonic
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None
        self._trial_in_flight = False

    @property
    def failures(self) -> int:
        """Consecutive failures recorded so far."""
        return self._failures

    @property
    def is_open(self) -> bool:
        """True while calls are being refused (cool-down not over, or a trial in flight)."""
        with self._lock:
            if self._opened_at is None:
                return False
            return self._trial_in_flight or self._clock() - self._opened_at < self.cooldown

    def retry_in(self) -> float:
        """Seconds until a trial call is allowed (0 when closed or due)."""
        with self._lock:
            if self._opened_at is None:
                return 0.0
            return max(0.0, self.cooldown - (self._clock() - self._opened_at))

    def allow(self) -> bool:
        """Whether a call may go ahead now; claims the single half-open trial slot."""
        with self._lock:
            if self._opened_at is None:
                return True
            if self._trial_in_flight or self._clock() - self._opened_at < self.cooldown:
                return False
            self._trial_in_flight = True
            return True

    def record_success(self) -> bool:
        """Note a success; returns True when this closed a previously open breaker."""
        with self._lock:
            was_open = self._opened_at is not None
            self._failures = 0
            self._opened_at = None
            self._trial_in_flight = False
            return was_open

    def record_failure(self) -> bool:
        """Note a failure; returns True when this call opened (or re-opened) the breaker."""
        with self._lock:
            self._failures += 1
            if self._trial_in_flight or (
                self._opened_at is None and self._failures >= self.threshold
            ):
                self._opened_at = self._clock()
                self._trial_in_flight = False
                return True
            return False

    def release_trial(self) -> None:
        """A trial call ended without a verdict (client error): allow another trial."""
        with self._lock:
            self._trial_in_flight = False
