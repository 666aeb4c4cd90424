"""A thread-safe circuit breaker for providers that call a remote service.

After ``threshold`` consecutive failures (or one failure recorded with ``open_now=True``, e.g.
rejected credentials) the breaker *opens*: `CircuitBreaker.allow` refuses calls for
``cooldown`` seconds, so a dead server costs nothing per turn. When the cool-down is over the
breaker is *half-open*: a trial call goes out; its success closes the breaker, its failure
re-opens it for another cool-down.

Which errors count is the caller's decision: record a failure only for errors that say
something about the service (timeouts, 5xx, refused connections), not for a request that was
wrong (unknown id, invalid input).

`CircuitBreaker.state` gives the words used in provider health records
(`hermes_memory_core.health.write_provider_status`): ``"ok"``, ``"degraded"`` (failures
counted, still calling) and ``"circuit_open"`` (opened and not yet closed by a success).

Typical use::

    breaker = CircuitBreaker(threshold=5, cooldown=60.0)
    if not breaker.allow():
        return f"service paused, retry in {breaker.retry_in():.0f} s"
    try:
        result = call_service()
    except ServiceDown:
        if breaker.record_failure():
            log.warning("circuit open")
        raise
    breaker.record_success()
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Final

__all__ = ["CIRCUIT_OPEN", "DEGRADED", "OK", "CircuitBreaker"]

#: Health state: no failure since the last success.
OK: Final = "ok"
#: Health state: failures counted, but fewer than the threshold; calls still go out.
DEGRADED: Final = "degraded"
#: Health state: the breaker opened and no call has succeeded since.
CIRCUIT_OPEN: Final = "circuit_open"


class CircuitBreaker:
    """Consecutive-failure breaker with a cool-down and a half-open trial.

    :param threshold: consecutive failures that open the breaker (at least 1).
    :param cooldown: seconds the breaker stays open before calls are tried again (``>= 0``).
    :param single_trial: when true (the default), only one call may go out once the cool-down
        is over, and further calls are refused until it reports back (`record_success`,
        `record_failure` or `release_trial`). When false, every call is let through after the
        cool-down until one of them fails and re-opens the breaker.
    :param clock: monotonic clock in seconds (injectable for tests).
    :raises ValueError: ``threshold`` below 1 or a negative ``cooldown``.

    All methods may be called from any thread.
    """

    def __init__(
        self,
        threshold: int = 5,
        cooldown: float = 60.0,
        *,
        single_trial: bool = True,
        clock: Callable[[], float] | None = None,
    ) -> None:
        if threshold < 1:
            raise ValueError(f"threshold must be at least 1, got {threshold!r}")
        if not cooldown >= 0:
            raise ValueError(f"cooldown must not be negative, got {cooldown!r}")
        self.threshold = threshold
        self.cooldown = cooldown
        self.single_trial = single_trial
        self._clock = clock or time.monotonic
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None
        self._trial_in_flight = False

    @property
    def failures(self) -> int:
        """Consecutive failures recorded since the last success."""
        with self._lock:
            return self._failures

    @property
    def state(self) -> str:
        """`OK`, `DEGRADED` or `CIRCUIT_OPEN` (which stays until a success, even half-open)."""
        with self._lock:
            if self._opened_at is not None:
                return CIRCUIT_OPEN
            return DEGRADED if self._failures else OK

    @property
    def is_open(self) -> bool:
        """True while calls are refused: cool-down not over, or the single trial in flight."""
        with self._lock:
            return self._refusing()

    def retry_in(self) -> float:
        """Seconds until calls are tried again (``0.0`` when closed or the cool-down is over)."""
        with self._lock:
            if self._opened_at is None:
                return 0.0
            return max(0.0, self.cooldown - (self._clock() - self._opened_at))

    def allow(self) -> bool:
        """Whether a call may go out now; in single-trial mode this claims the trial slot."""
        with self._lock:
            if self._opened_at is None:
                return True
            if self._refusing():
                return False
            if self.single_trial:
                self._trial_in_flight = True
            return True

    def record_success(self) -> bool:
        """A call succeeded: close the breaker. True when it was open (a recovery)."""
        with self._lock:
            was_open = self._opened_at is not None
            self._failures = 0
            self._opened_at = None
            self._trial_in_flight = False
            return was_open

    def record_failure(self, *, open_now: bool = False) -> bool:
        """Count a failure. True when this call opened the breaker or re-opened it.

        The breaker opens when the count reaches ``threshold``, and (re-)opens at once when
        ``open_now`` is true. Once open, a failed trial call re-opens it for a new cool-down
        (with ``single_trial=False``: any failure after the cool-down). Other failures while
        open (calls that started before it opened) are counted but do not extend the
        cool-down.
        """
        with self._lock:
            self._failures += 1
            if open_now:
                opens = True
            elif self._opened_at is None:
                opens = self._failures >= self.threshold
            elif self.single_trial:
                opens = self._trial_in_flight
            else:
                opens = self._clock() - self._opened_at >= self.cooldown
            if opens:
                self._opened_at = self._clock()
                self._trial_in_flight = False
            return opens

    def release_trial(self) -> None:
        """The trial call ended without saying anything about the service: allow another."""
        with self._lock:
            self._trial_in_flight = False

    def _refusing(self) -> bool:
        if self._opened_at is None:
            return False
        return self._trial_in_flight or self._clock() - self._opened_at < self.cooldown
