"""Reaching mem0: the backend is built on a short-lived ``mem0-connect`` thread, and every
call goes through the kit's `Guard` once it is up.

``MemoryClient``'s constructor pings the API and ``mem0.Memory`` opens a local store: neither
may block the agent, so `Connection.start` returns at once. A failed start is retried on
later use after a pause (``min(60 s, breaker_cooldown)``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import httpx

from hermes_memory_core.kit import Guard, Unavailable
from hermes_memory_mem0 import _sdk as sdk
from hermes_memory_mem0._backends import (
    Backend,
    OSSBackend,
    PlatformBackend,
    SelfHostedBackend,
    build_http_client,
)
from hermes_memory_mem0._errors import classify
from hermes_memory_mem0._settings import Mem0Settings

__all__ = ["Connection"]

logger = logging.getLogger("hermes_memory_mem0._provider")
T = TypeVar("T")


class Connection:
    """One mem0 backend for one provider.

    :param transport: an httpx transport for every HTTP request (tests inject one).
    """

    def __init__(
        self,
        settings: Mem0Settings,
        guard: Guard,
        home: Path | None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.settings = settings
        self.guard = guard
        self.home = home
        self._transport = transport
        self._lock = threading.RLock()
        self._ready = threading.Event()
        self._backend: Backend | None = None
        self._thread: threading.Thread | None = None
        self.error = ""
        self._failed_at = 0.0
        self.closed = False

    # ----------------------------------------------------------------- starting
    def start(self) -> None:
        """Start connecting in the background (no-op while connected or connecting)."""
        with self._lock:
            if self._backend is not None or self.closed:
                return
            if self._thread is not None and self._thread.is_alive():
                return
            self._ready.clear()
            self._thread = threading.Thread(target=self._connect, name="mem0-connect", daemon=True)
            self._thread.start()

    def _connect(self) -> None:
        settings = self.settings
        backend: Backend | None = None
        try:
            if settings.mode == "selfhosted":
                backend = SelfHostedBackend.create(settings, self._transport)
            else:
                mem0 = sdk.import_mem0(self.home, telemetry_opt_in=settings.telemetry)
                if settings.mode == "platform":
                    # MemoryClient's constructor does a blocking GET /v1/ping/ with our short
                    # timeouts instead of mem0's 300 s default.
                    http = build_http_client(settings, transport=self._transport)
                    try:
                        backend = PlatformBackend.connect(mem0, settings, http)
                    except BaseException:
                        http.close()
                        raise
                else:
                    backend = OSSBackend.create(
                        mem0, settings, self.home or Path.home() / ".hermes"
                    )
        except Exception as exc:
            failure = classify(exc)
            with self._lock:
                self.error = f"mem0 could not start ({settings.mode} mode): {failure.message}"
                self._failed_at = time.monotonic()
            self.guard.report("degraded", self.error, warn=True, last_error_kind=failure.kind.value)
        else:
            with self._lock:  # reported before it is published: no call can fail first
                closed = self.closed
                if not closed:
                    self.guard.report("ok", f"connected ({settings.mode} mode)")
                    self._backend, self.error = backend, ""
            if closed:
                _close(backend)
        finally:
            self._ready.set()

    def _retry_delay(self) -> float:
        return min(60.0, self.settings.breaker_cooldown)

    def waiting_to_retry(self) -> bool:
        """The last start failed and its retry pause is not over."""
        return (
            self._backend is None
            and bool(self.error)
            and self._ready.is_set()
            and time.monotonic() - self._failed_at < self._retry_delay()
        )

    def connect_wait(self) -> float:
        """How long a tool call waits for a start in progress (about one ping)."""
        return self.settings.connect_timeout + self.settings.timeout

    def background_wait(self) -> float:
        """How long a worker job waits for a start in progress (import + ping, bounded)."""
        return 2 * self.connect_wait() + 30.0

    # ----------------------------------------------------------------- calling
    def backend(self, wait: float) -> Backend:
        """The connected backend, waiting up to ``wait`` s for a start in progress.

        :raises Unavailable: shut down, still connecting, or the start failed.
        """
        if self.closed:
            raise Unavailable("mem0 provider is shut down")
        if self._backend is not None:
            return self._backend
        with self._lock:
            if self.error and self._ready.is_set() and not self.waiting_to_retry():
                self.start()  # retry after a failed start
        self._ready.wait(max(0.0, wait))
        backend = self._current()
        if backend is not None:
            return backend
        if not self._ready.is_set():
            raise Unavailable("mem0 is still connecting; try again in a moment")
        raise Unavailable(self.error or "mem0 is not available")

    def _current(self) -> Backend | None:
        with self._lock:
            return self._backend

    def call(self, what: str, fn: Callable[[Backend], T], *, wait: float) -> T:
        """``fn(backend)`` through the guard (`Unavailable` / `CallFailed` on trouble)."""
        backend = self.backend(wait)
        return self.guard.call(what, lambda: fn(backend))

    def close(self, *, drained: bool) -> None:
        """Release the backend (an OSS store with a write in flight is left to finish)."""
        with self._lock:
            self.closed = True
            backend, self._backend = self._backend, None
        self._ready.set()  # wake jobs still waiting for a start: they end as "shut down"
        if backend is not None and (drained or backend.mode != "oss"):
            _close(backend)


def _close(backend: Backend | None) -> None:
    if backend is None:
        return
    try:
        backend.close()
    except Exception as exc:
        logger.debug("mem0: closing the backend failed: %s", exc)
