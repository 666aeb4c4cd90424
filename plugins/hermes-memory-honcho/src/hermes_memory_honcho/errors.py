"""Turn Honcho SDK exceptions into a failure kind and a one-line message for users."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Failure", "classify"]


@dataclass(frozen=True)
class Failure:
    """What went wrong with one Honcho call.

    :param kind: ``auth`` (401/403), ``client`` (400/404/409/422: this request was wrong),
        ``rate`` (429), ``server`` (5xx), ``timeout``, ``connection`` or ``other``.
    :param message: one line for a log, a status record or a tool error.
    :param status: the HTTP status when the server answered, else 0.
    """

    kind: str
    message: str
    status: int = 0

    @property
    def trips_breaker(self) -> bool:
        """Whether this failure says something about the server rather than the request."""
        return self.kind != "client"

    @property
    def opens_breaker_now(self) -> bool:
        """Bad credentials will not fix themselves: stop calling at once."""
        return self.kind == "auth"


def classify(exc: BaseException, *, base_url: str = "") -> Failure:
    """Map an exception raised by an SDK call to a `Failure`."""
    from honcho.http import exceptions as hx  # type: ignore[import-untyped]

    where = f" ({base_url})" if base_url else ""
    detail = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    detail = " ".join(str(detail).split())[:300]
    status = int(getattr(exc, "status", 0) or 0)
    if isinstance(exc, hx.AuthenticationError | hx.PermissionDeniedError):
        return Failure(
            "auth",
            f"Honcho rejected the credentials{where}: HTTP {status} {detail}. "
            "Check HONCHO_API_KEY (or honcho.api_key).",
            status,
        )
    if isinstance(exc, hx.RateLimitError):
        return Failure("rate", f"Honcho is rate limiting{where}: HTTP 429 {detail}", status)
    if isinstance(exc, hx.ServerError):
        return Failure("server", f"Honcho server error{where}: HTTP {status} {detail}", status)
    if isinstance(exc, hx.TimeoutError):
        return Failure("timeout", f"Honcho did not answer in time{where}: {detail}")
    if isinstance(exc, hx.ConnectionError):
        return Failure("connection", f"Cannot reach Honcho{where}: {detail}")
    if isinstance(exc, hx.APIError):
        return Failure("client", f"Honcho refused the request: HTTP {status} {detail}", status)
    if isinstance(exc, ValueError):  # SDK-side validation (pydantic) of our arguments
        return Failure("client", f"Invalid request for Honcho: {detail}")
    return Failure("other", f"Honcho call failed{where}: {type(exc).__name__}: {detail}")
