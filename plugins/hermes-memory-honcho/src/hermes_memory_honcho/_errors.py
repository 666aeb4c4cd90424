"""Honcho SDK exceptions in the kit's one failure taxonomy (`hermes_memory_core.kit`)."""

from __future__ import annotations

from hermes_memory_core.kit import Failure, FailureKind, one_line

__all__ = ["classify"]


def classify(exc: BaseException, *, base_url: str = "") -> Failure:
    """Map an exception raised by an SDK call to a `Failure` with a user-facing message."""
    from honcho.http import exceptions as hx  # type: ignore[import-untyped]

    where = f" ({base_url})" if base_url else ""
    detail = one_line(getattr(exc, "message", None) or str(exc) or type(exc).__name__)
    status = int(getattr(exc, "status", 0) or 0) or None
    code = status or ""
    if isinstance(exc, hx.AuthenticationError | hx.PermissionDeniedError):
        return Failure(
            FailureKind.AUTH,
            f"Honcho rejected the credentials{where}: HTTP {code} {detail}. "
            "Check HONCHO_API_KEY (or honcho.api_key).",
            status,
        )
    if isinstance(exc, hx.RateLimitError):
        return Failure(
            FailureKind.RATE_LIMITED, f"Honcho is rate limiting{where}: HTTP 429 {detail}", status
        )
    if isinstance(exc, hx.ServerError):
        return Failure(
            FailureKind.SERVER, f"Honcho server error{where}: HTTP {code} {detail}", status
        )
    if isinstance(exc, hx.TimeoutError):
        return Failure(FailureKind.TIMEOUT, f"Honcho did not answer in time{where}: {detail}")
    if isinstance(exc, hx.ConnectionError):
        return Failure(FailureKind.CONNECTION, f"Cannot reach Honcho{where}: {detail}")
    if isinstance(exc, hx.APIError):
        kind = FailureKind.NOT_FOUND if status == 404 else FailureKind.INVALID
        return Failure(kind, f"Honcho refused the request: HTTP {code} {detail}", status)
    if isinstance(exc, ValueError):  # SDK-side validation (pydantic) of our arguments
        return Failure(FailureKind.INVALID, f"Invalid request for Honcho: {detail}")
    return Failure(FailureKind.OTHER, f"Honcho call failed{where}: {type(exc).__name__}: {detail}")
