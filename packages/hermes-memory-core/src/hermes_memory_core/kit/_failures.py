"""One failure taxonomy for every remote adapter.

An adapter maps whatever its SDK or HTTP client raised to a `Failure` (a `FailureKind`, a
one-line message, the HTTP status). The kind decides what the `Guard` does with it: a request
that was wrong (``not_found``, ``invalid``) says nothing about the service and never counts
against the breaker; bad credentials (``auth``) open it at once; everything else counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "CallFailed",
    "Failure",
    "FailureKind",
    "Unavailable",
    "classify_common",
    "kind_for_status",
    "one_line",
]


class FailureKind(StrEnum):
    """Why a remote call failed."""

    NOT_FOUND = "not_found"
    INVALID = "invalid"
    AUTH = "auth"
    RATE_LIMITED = "rate_limited"
    SERVER = "server"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    UNAVAILABLE = "unavailable"
    OTHER = "other"

    @property
    def trips_breaker(self) -> bool:
        """Whether this kind counts towards opening the circuit breaker."""
        return self not in (FailureKind.NOT_FOUND, FailureKind.INVALID)

    @property
    def opens_breaker_now(self) -> bool:
        """Bad credentials do not fix themselves: stop calling at once."""
        return self is FailureKind.AUTH


@dataclass(frozen=True)
class Failure:
    """A classified failure: ``kind``, a one-line ``message`` and the HTTP ``status``."""

    kind: FailureKind
    message: str
    status: int | None = None

    @property
    def trips_breaker(self) -> bool:
        """See `FailureKind.trips_breaker`."""
        return self.kind.trips_breaker


class CallFailed(Exception):
    """A guarded call failed; ``failure`` says how (already counted and reported)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class Unavailable(Exception):
    """The call was not attempted: not connected yet, shut down, or the breaker is open."""


def kind_for_status(status: int) -> FailureKind:
    """The failure kind of an HTTP status code."""
    if status == 404:
        return FailureKind.NOT_FOUND
    if status in (400, 409, 413, 422):
        return FailureKind.INVALID
    if status in (401, 403):
        return FailureKind.AUTH
    if status == 429:
        return FailureKind.RATE_LIMITED
    if status == 408:
        return FailureKind.TIMEOUT
    if status >= 500:
        return FailureKind.SERVER
    return FailureKind.OTHER


def one_line(exc: BaseException | str, limit: int = 300) -> str:
    """``exc`` as one line of at most ``limit`` characters."""
    text = " ".join(str(exc).split()) or (exc if isinstance(exc, str) else type(exc).__name__)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def classify_common(exc: BaseException) -> Failure | None:
    """Failures every transport shares: httpx timeouts, connection errors, HTTP statuses,
    and the built-in ``TimeoutError`` / ``ConnectionError``. None for anything else.

    httpx is recognised by module name, so this never imports it.
    """
    module = type(exc).__module__
    if module.startswith("httpx"):
        import httpx

        if isinstance(exc, httpx.TimeoutException):
            return Failure(FailureKind.TIMEOUT, f"timed out: {one_line(exc)}")
        if isinstance(exc, httpx.ConnectError | httpx.NetworkError):
            return Failure(FailureKind.CONNECTION, f"connection failed: {one_line(exc)}")
        if isinstance(exc, httpx.HTTPStatusError):
            code = exc.response.status_code
            return Failure(kind_for_status(code), one_line(exc), code)
    if isinstance(exc, TimeoutError):
        return Failure(FailureKind.TIMEOUT, one_line(exc))
    if isinstance(exc, ConnectionError):
        return Failure(FailureKind.CONNECTION, one_line(exc))
    return None
