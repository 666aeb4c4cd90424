"""Circuit breaker and health reporting for the Honcho adapter."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from hermes_memory_core.health import write_provider_status

from hermes_memory_honcho.errors import Failure

__all__ = ["CircuitBreaker"]

logger = logging.getLogger("hermes_memory_honcho")


class CircuitBreaker:
    """Stop calling Honcho after repeated failures; try again after a cool-down.

    States: ``ok``; ``degraded`` (recent failures, still calling); ``circuit_open`` (calls
    skipped until ``cooldown`` seconds passed, then one trial call is let through). Each
    state change writes the provider health record (read by ``hermes-memory provider
    status``) and logs a warning; going back to ``ok`` logs at info level.
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
        self.threshold = threshold
        self.cooldown = cooldown
        self.home = home
        self._name = provider_name
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None
        self._state = "ok"
        self._detail = ""

    @property
    def state(self) -> str:
        """``ok``, ``degraded`` or ``circuit_open``."""
        return self._state

    @property
    def failures(self) -> int:
        """Consecutive failures counted so far."""
        return self._failures

    @property
    def detail(self) -> str:
        """The message of the last failure (``""`` when healthy)."""
        return self._detail

    def allow(self) -> bool:
        """Whether a call may go out now (always, unless open and still cooling down)."""
        with self._lock:
            if self._opened_at is None:
                return True
            return self._clock() - self._opened_at >= self.cooldown

    def seconds_until_retry(self) -> float:
        """Remaining cool-down, seconds (0 when calls are allowed)."""
        with self._lock:
            if self._opened_at is None:
                return 0.0
            return max(0.0, self.cooldown - (self._clock() - self._opened_at))

    def record_success(self) -> None:
        """A call succeeded: close the breaker and report ``ok`` if it was not."""
        with self._lock:
            changed = self._state != "ok"
            self._failures = 0
            self._opened_at = None
            self._state = "ok"
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
                self._failures += 1
                if failure.opens_breaker_now or self._failures >= self.threshold:
                    self._opened_at = self._clock()
                    self._state = "circuit_open"
                elif self._state == "ok":
                    self._state = "degraded"
            state = self._state
        if state != previous or failure.kind in ("auth", "client"):
            if state == "circuit_open":
                logger.warning(
                    "Honcho circuit open after %d failure(s); pausing calls for %.0fs. %s",
                    self._failures,
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
            failures=self._failures,
            retry_in=round(self.seconds_until_retry(), 1),
        )
