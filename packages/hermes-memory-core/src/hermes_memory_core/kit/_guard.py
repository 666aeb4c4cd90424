"""Guarded calls: one circuit breaker and one health record per remote provider.

Every call to the service goes through `Guard.call`: refused at once while the breaker is
open (`Unavailable`), classified on failure (`CallFailed`), and every change of state is
logged once and written to the provider's health record
(``<home>/memory_providers/<name>.status.json``, read by ``hermes-memory provider status``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from hermes_memory_core._breaker import CIRCUIT_OPEN, OK, CircuitBreaker
from hermes_memory_core.health import write_provider_status
from hermes_memory_core.kit._failures import CallFailed, Failure, FailureKind, Unavailable

__all__ = ["Guard"]

T = TypeVar("T")

#: Failures worth another attempt: the service may answer the next one.
_TRANSIENT = frozenset(
    {FailureKind.TIMEOUT, FailureKind.CONNECTION, FailureKind.SERVER, FailureKind.RATE_LIMITED}
)


class Guard:
    """Breaker + health record + logging for one provider.

    :param name: the provider name (health record file, log prefix).
    :param classify: maps an exception raised by the service call to a `Failure`.
    :param threshold: consecutive failures that open the breaker.
    :param cooldown: seconds the breaker stays open before calls are tried again.
    :param home: where the health record is written (None: no record).
    :param label: the service's name in messages ("mem0", "Honcho").
    :param single_trial: one trial call after the cool-down (see `CircuitBreaker`).
    :param logger: where state changes are logged.
    :param retries: extra attempts of a call that failed transiently (timeout, connection,
        server error, rate limit), after ``backoff``, ``2 * backoff``, … seconds; only the
        last failure is counted. A retried write may reach the service twice: the kit's
        delivery is at-least-once.
    """

    def __init__(
        self,
        name: str,
        classify: Callable[[BaseException], Failure],
        *,
        threshold: int = 5,
        cooldown: float = 60.0,
        home: Path | None = None,
        label: str = "",
        single_trial: bool = True,
        logger: logging.Logger | None = None,
        clock: Callable[[], float] | None = None,
        retries: int = 0,
        backoff: float = 0.5,
    ) -> None:
        self.name = name
        self.label = label or name
        self.home = home
        self.classify = classify
        self.breaker = CircuitBreaker(threshold, cooldown, single_trial=single_trial, clock=clock)
        self.log = logger or logging.getLogger(f"hermes_memory.{name}")
        self.retries = max(0, retries)
        self.backoff = max(0.0, backoff)
        self.closed = False  # after shutdown the health record is final
        self.extra: dict[str, Any] = {}  # fields added to every health record
        # Counting a result and writing the state it leads to happen under one lock, so
        # two calls failing at once cannot leave the older state on the record.
        self._lock = threading.RLock()
        self._state = ""
        self._detail = ""
        self._last_kind: FailureKind | None = None

    # ----------------------------------------------------------------- reading
    @property
    def state(self) -> str:
        """``ok``, ``degraded`` or ``circuit_open`` (``ok`` before anything happened)."""
        return self._state or OK

    @property
    def detail(self) -> str:
        """The message of the last report (``""`` when healthy)."""
        return self._detail

    @property
    def failures(self) -> int:
        """Consecutive failures counted so far."""
        return self.breaker.failures

    @property
    def is_open(self) -> bool:
        """True while calls are refused."""
        return self.breaker.is_open

    def retry_in(self) -> float:
        """Seconds until calls are tried again (0 when they are allowed)."""
        return self.breaker.retry_in()

    def unavailable_message(self) -> str:
        """The user-facing sentence for a call refused by the open breaker."""
        return (
            f"{self.label} is temporarily unavailable after repeated failures "
            f"(retrying in {self.retry_in():.0f} s)"
        )

    # ----------------------------------------------------------------- calling
    def call(self, operation: str, fn: Callable[[], T], *, informative: bool = True) -> T:
        """Run ``fn`` through the breaker.

        ``informative=False`` marks a call whose success proves nothing about the service
        (answered from a client-side cache): its failure counts, its success does not.

        :raises Unavailable: the breaker is open or the guard is closed (not attempted).
        :raises CallFailed: ``fn`` raised; the failure is counted and reported.
        """
        if self.closed:
            raise Unavailable(f"{self.label} provider is shut down")
        if not self.breaker.allow():
            raise Unavailable(self.unavailable_message())
        attempt = 0
        while True:
            try:
                result = fn()
            except Exception as exc:
                failure = self.classify(exc)
                if attempt < self.retries and failure.kind in _TRANSIENT and not self.closed:
                    time.sleep(self.backoff * 2**attempt)
                    attempt += 1
                    continue
                self.record_failure(failure, operation=operation)
                raise CallFailed(failure) from exc
            if informative:
                self.record_success()
            else:
                self.breaker.release_trial()
            return result

    def record_success(self) -> None:
        """A call succeeded: close the breaker; report ``ok`` if the state was not."""
        with self._lock:
            recovered = self.breaker.record_success()
            if self.closed:
                return
            if recovered or self._state not in (OK, ""):
                self.report(OK, "recovered" if recovered else "")

    def record_failure(self, failure: Failure, *, operation: str) -> None:
        """Count ``failure`` of ``operation`` and report the new state.

        A request error (``not_found``, ``invalid``) counts as the service answering: it
        closes the breaker; an ``invalid`` one is still logged and recorded as the detail.
        """
        if not failure.trips_breaker:
            self.record_success()
            if failure.kind is FailureKind.INVALID and not self.closed:
                # The service answered but refused this request: healthy, yet worth a line.
                self.report(OK, f"{operation} refused: {failure.message}", warn=True)
            return
        with self._lock:
            opened = self.breaker.record_failure(open_now=failure.kind.opens_breaker_now)
            if self.closed:
                return
            self._last_kind = failure.kind
            detail = f"{operation} failed: {failure.message}"
            if opened:
                detail = (
                    f"circuit open after {self.failures} consecutive failure(s); pausing calls "
                    f"for {self.breaker.cooldown:.0f} s (last: {detail})"
                )
            state = CIRCUIT_OPEN if (opened or self.breaker.is_open) else self.breaker.state
            self.report(state, detail, warn=True)

    def report(self, state: str, detail: str, *, warn: bool = False, **extra: Any) -> None:
        """Log ``detail`` and write the health record with an explicit ``state``."""
        with self._lock:
            previous, self._state, self._detail = self._state, state, detail
            if warn:
                self.log.warning("%s: %s", self.label, detail)
            elif state == OK and previous not in (OK, ""):
                self.log.info("%s is reachable again", self.label)
            if self.home is None:
                return
            fields = {**self.extra, **extra}
            if state != OK and self._last_kind is not None:
                fields.setdefault("last_error_kind", self._last_kind.value)
            write_provider_status(
                self.home,
                self.name,
                state=state,
                detail=detail,
                failures=self.failures,
                retry_in=round(self.retry_in(), 1),
                **fields,
            )
