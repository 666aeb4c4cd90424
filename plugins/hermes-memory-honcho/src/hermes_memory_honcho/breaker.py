"""Health reporting for the Honcho adapter on top of core's `CircuitBreaker`.

The counting (threshold, cool-down, re-opening) is `hermes_memory_core.breaker.CircuitBreaker`;
this module adds what is Honcho's own: which failures count (`Failure.trips_breaker`, auth
errors open at once), the last error as ``detail``, explicit states for configuration
problems, warnings in the log and the provider health record on every change.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from hermes_memory_core import breaker as core_breaker
from hermes_memory_core.health import write_provider_status
from hermes_memory_honcho.errors import Failure

__all__ = ["CircuitBreaker"]

logger = logging.getLogger("hermes_memory_honcho")


class CircuitBreaker:
    """Stop calling Honcho after repeated failures; try again after a cool-down.

    States: ``ok``; ``degraded`` (recent failures, still calling); ``circuit_open`` (calls
    skipped until ``cooldown`` seconds passed, then calls are tried again). Each state change
    writes the provider health record (read by ``hermes-memory provider status``) and logs a
    warning; going back to ``ok`` logs at info level.
    """

    def __init__(
        self,
        *,
        threshold: int,
        cooldown: float,
        home: Path | None = None,
        provider_name: str = "honcho",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._breaker = core_breaker.CircuitBreaker(
            threshold, cooldown, single_trial=False, clock=clock
        )
        self.home = home
        self._name = provider_name
        self._lock = threading.Lock()
        self._state: str = core_breaker.OK
        self._detail = ""

    @property
    def threshold(self) -> int:
        """Consecutive failures that open the breaker."""
        return self._breaker.threshold

    @property
    def cooldown(self) -> float:
        """Seconds the breaker stays open before calls are tried again."""
        return self._breaker.cooldown

    @property
    def state(self) -> str:
        """``ok``, ``degraded`` or ``circuit_open``."""
        return self._state

    @property
    def failures(self) -> int:
        """Consecutive failures counted so far."""
        return self._breaker.failures

    @property
    def detail(self) -> str:
        """The message of the last failure (``""`` when healthy)."""
        return self._detail

    def allow(self) -> bool:
        """Whether a call may go out now (always, unless open and still cooling down)."""
        return self._breaker.allow()

    def seconds_until_retry(self) -> float:
        """Remaining cool-down, seconds (0 when calls are allowed)."""
        return self._breaker.retry_in()

    def record_success(self) -> None:
        """A call succeeded: close the breaker and report ``ok`` if it was not."""
        with self._lock:
            self._breaker.record_success()
            changed = self._state != core_breaker.OK
            self._state = core_breaker.OK
            self._detail = ""
        if changed:
            logger.info("Honcho is reachable again")
            self._report()

    def record_failure(self, failure: Failure, *, operation: str) -> None:
        """Count ``failure`` of ``operation``; open the breaker when it is time."""
        with self._lock:
            previous = self._state
            self._detail = f"{operation}: {failure.message}"
            if failure.trips_breaker:
                self._breaker.record_failure(open_now=failure.opens_breaker_now)
                self._state = self._breaker.state
            state = self._state
        if state != previous or failure.kind in ("auth", "client"):
            if state == core_breaker.CIRCUIT_OPEN:
                logger.warning(
                    "Honcho circuit open after %d failure(s); pausing calls for %.0fs. %s",
                    self.failures,
                    self.cooldown,
                    self._detail,
                )
            else:
                logger.warning("Honcho %s", self._detail)
        else:
            logger.debug("Honcho %s", self._detail)
        self._report()

    def report(self, state: str, detail: str) -> None:
        """Write a health record with an explicit ``state`` (e.g. configuration problems)."""
        with self._lock:
            self._state = state
            self._detail = detail
        self._report()

    def _report(self) -> None:
        if self.home is None:
            return
        write_provider_status(
            self.home,
            self._name,
            state=self._state,
            detail=self._detail,
            failures=self.failures,
            retry_in=round(self.seconds_until_retry(), 1),
        )
