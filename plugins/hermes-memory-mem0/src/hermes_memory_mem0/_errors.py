"""mem0's errors in the kit's one failure taxonomy (`hermes_memory_core.kit.Failure`).

`classify` maps whatever a backend raised (mem0 SDK exceptions, HTTP, local store) to a
`Failure`: a kind, a short user-facing message and whether it counts against the breaker.
"Client" errors (unknown memory id, invalid input) are the caller's problem and never open
the breaker; everything that says "the service is not working" (auth, rate limit, 5xx,
timeouts, refused connections) does.
"""

from __future__ import annotations

from hermes_memory_core.kit import Failure, FailureKind, classify_common, kind_for_status, one_line

__all__ = ["BackendError", "Failure", "FailureKind", "classify", "kind_for_status"]


class BackendError(Exception):
    """A failure raised by our own HTTP backend (self-hosted mode), already classified."""

    def __init__(self, kind: FailureKind, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


def classify(exc: BaseException) -> Failure:
    """Classify an exception raised by any backend."""
    if isinstance(exc, BackendError):
        return Failure(exc.kind, one_line(exc), exc.status)
    if type(exc).__module__.startswith("httpx"):
        common = classify_common(exc)
        if common is not None:
            return common

    # mem0's structured exceptions (platform client); matched by name so that this module
    # does not import mem0.
    name = type(exc).__name__
    debug = getattr(exc, "debug_info", None) or {}
    code_raw = debug.get("status_code") if isinstance(debug, dict) else None
    status: int | None = code_raw if isinstance(code_raw, int) else None
    error_code = str(getattr(exc, "error_code", "") or "")
    if status is None and error_code.startswith("HTTP_") and error_code[5:].isdigit():
        status = int(error_code[5:])
    message = str(getattr(exc, "message", "") or "") or one_line(exc)
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
