"""The one `httpx.Client` the adapter hands to the Honcho SDK.

The SDK passes a single float timeout on every request (its own ``timeout`` setting), which
would also become the connect timeout, and it sleeps for whatever ``Retry-After`` a server
sends. `BoundedTransport` caps both so that a dead or rate-limiting server costs a bounded
time per call; everything else passes through unchanged.
"""

from __future__ import annotations

from typing import Any

import httpx

from hermes_memory_honcho._config import HonchoConfig

__all__ = ["BoundedTransport", "build_http_client"]


class BoundedTransport(httpx.BaseTransport):
    """Wrap a transport: cap the connect timeout and any ``Retry-After`` the server sends.

    :param inner: the real transport (``httpx.HTTPTransport``, or a ``MockTransport`` in tests).
    :param connect_timeout: longest wait for a TCP/TLS connection, seconds.
    :param max_retry_after: longest ``Retry-After`` passed on to the SDK, seconds.
    """

    def __init__(
        self, inner: httpx.BaseTransport, *, connect_timeout: float, max_retry_after: float
    ) -> None:
        self._inner = inner
        self._connect_timeout = connect_timeout
        self._max_retry_after = max_retry_after

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` with a capped connect timeout; clamp ``Retry-After`` on the answer."""
        timeouts: dict[str, Any] = dict(request.extensions.get("timeout") or {})
        given = timeouts.get("connect")
        timeouts["connect"] = (
            self._connect_timeout if given is None else min(given, self._connect_timeout)
        )
        request.extensions["timeout"] = timeouts
        response = self._inner.handle_request(request)
        retry_after = response.headers.get("Retry-After")
        if retry_after is not None:
            try:
                seconds = float(retry_after)
            except ValueError:
                seconds = self._max_retry_after  # an HTTP date: do not trust it
            response.headers["Retry-After"] = f"{max(0.0, min(seconds, self._max_retry_after))}"
        return response

    def close(self) -> None:
        """Close the wrapped transport."""
        self._inner.close()


def build_http_client(
    cfg: HonchoConfig, *, transport: httpx.BaseTransport | None = None
) -> httpx.Client:
    """The shared client: short timeouts, no transport-level retries (the SDK retries).

    :param transport: replaces the network (tests pass an ``httpx.MockTransport``).
    """
    inner = transport if transport is not None else httpx.HTTPTransport(retries=0)
    return httpx.Client(
        base_url=cfg.resolved_base_url,
        timeout=httpx.Timeout(cfg.timeout, connect=cfg.connect_timeout),
        transport=BoundedTransport(
            inner, connect_timeout=cfg.connect_timeout, max_retry_after=cfg.max_retry_after
        ),
        limits=httpx.Limits(max_connections=8, max_keepalive_connections=4),
        follow_redirects=False,
    )
