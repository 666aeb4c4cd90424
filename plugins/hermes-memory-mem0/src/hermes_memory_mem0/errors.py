"""One error vocabulary for the three backends (mem0 SDK exceptions, HTTP, local store).

`classify` maps whatever a backend raised to a `Failure`: a kind, a short user-facing
message and whether it should count against the circuit breaker. "Client" errors (unknown
memory id, invalid input) are the caller's problem and never open the breaker; everything
that says "the service is not working" (auth, rate limit, 5xx, timeouts, refused
connections) does.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import httpx

__all__ = ["BackendError", "Failure", "FailureKind", "classify"]


class FailureKind(StrEnum):
    """Why a backend call failed."""

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
        """Whether this kind of failure counts towards opening the circuit breaker."""
        return self not in (FailureKind.NOT_FOUND, FailureKind.INVALID)


class BackendError(Exception):
    """A failure raised by our own HTTP backend (self-hosted mode), already classified."""

    def __init__(self, kind: FailureKind, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


@dataclass(frozen=True)
class Failure:
    """A classified failure: ``kind``, a one-line ``message`` and the HTTP ``status``."""

    kind: FailureKind
    message: str
    status: int | None = None


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


def _one_line(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


def classify(exc: BaseException) -> Failure:
    """Classify an exception raised by any backend."""
    if isinstance(exc, BackendError):
        return Failure(exc.kind, _one_line(exc), exc.status)
    if isinstance(exc, httpx.TimeoutException):
        return Failure(FailureKind.TIMEOUT, f"timed out: {_one_line(exc)}")
    if isinstance(exc, httpx.ConnectError | httpx.NetworkError):
        return Failure(FailureKind.CONNECTION, f"connection failed: {_one_line(exc)}")
    if isinstance(exc, httpx.HTTPStatusError):
        code = exc.response.status_code
        return Failure(kind_for_status(code), _one_line(exc), code)

    # mem0's structured exceptions (platform client); matched by name so that this module
    # does not import mem0.
    name = type(exc).__name__
    debug = getattr(exc, "debug_info", None) or {}
    code_raw = debug.get("status_code") if isinstance(debug, dict) else None
    status: int | None = code_raw if isinstance(code_raw, int) else None
    error_code = str(getattr(exc, "error_code", "") or "")
    if status is None and error_code.startswith("HTTP_") and error_code[5:].isdigit():
        status = int(error_code[5:])
    message = str(getattr(exc, "message", "") or "") or _one_line(exc)
    message = " ".join(message.split())
    by_name = {
        "MemoryNotFoundError": FailureKind.NOT_FOUND,
        "ValidationError": FailureKind.INVALID,
        "AuthenticationError": FailureKind.AUTH,
        "RateLimitError": FailureKind.RATE_LIMITED,
        "MemoryQuotaExceededError": FailureKind.INVALID,
    }
    if name in by_name and type(exc).__module__.startswith("mem0"):
        return Failure(by_name[name], message, status)
    if name == "NetworkError" and type(exc).__module__.startswith("mem0"):
        net_code = str(getattr(exc, "error_code", ""))
        if net_code == "NET_TIMEOUT" or status in (408, 504):
            return Failure(FailureKind.TIMEOUT, message, status)
        if net_code == "NET_CONNECT":
            return Failure(FailureKind.CONNECTION, message, status)
        return Failure(FailureKind.SERVER if status else FailureKind.CONNECTION, message, status)
    if status is not None:
        return Failure(kind_for_status(status), message, status)
    lowered = message.lower()
    if "not found" in lowered or "valid uuid" in lowered:
        return Failure(FailureKind.NOT_FOUND, message)
    if isinstance(exc, TimeoutError):
        return Failure(FailureKind.TIMEOUT, message)
    if isinstance(exc, ConnectionError):
        return Failure(FailureKind.CONNECTION, message)
    if "invalid api key" in lowered or "unauthorized" in lowered:
        return Failure(FailureKind.AUTH, message)
    return Failure(FailureKind.OTHER, f"{type(exc).__name__}: {message}")
