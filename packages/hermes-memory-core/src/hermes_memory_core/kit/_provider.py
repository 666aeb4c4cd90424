"""`RemoteProvider`: the part every remote adapter shares, as a `MemoryProvider` subclass.

It owns the constructor (``hermes_home``, ``config``, ``transport``, ``environ``), the
curated facts handed over by the manager, the agent-context write switch, the `Guard` and the
`PendingWrites` of the provider, and the one session-end and shutdown policy: drain within
``flush_timeout``; at shutdown send what can be sent within ``shutdown_timeout``, spool the
rest, then release the client. An adapter adds its settings, its transport, recall, writes
and tools.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_memory_core._provider import MemoryProvider
from hermes_memory_core._worker import SerialWorker
from hermes_memory_core.kit._failures import Failure
from hermes_memory_core.kit._guard import Guard
from hermes_memory_core.kit._recall import fact_key
from hermes_memory_core.kit._tools import ToolTable
from hermes_memory_core.kit._writes import PendingWrites, Write, close_when_idle

__all__ = ["RemoteProvider"]


class RemoteProvider(MemoryProvider):
    """Base class for a provider that talks to a remote memory service.

    :param hermes_home: the agent's home directory (health record, spooled writes).
    :param config: the whole parsed ``config.yaml`` (None: the adapter may read it itself).
    :param transport: replaces the network under the adapter's HTTP client (tests).
    :param environ: environment mapping to read instead of ``os.environ``.

    Constructing is cheap: no I/O, no network. Subclasses call `_begin` first in
    ``initialize``, then `_make_guard` and `_start_writes`; they override `_flush_timeout`,
    `_shutdown_timeout` and `_release` where the defaults do not fit. An adapter that keeps
    its client in ``_client`` gets `active`, `_inactive` and `_run_tool` for free.
    """

    #: The service's name in messages and the recall status ("OpenViking").
    label = ""
    #: The adapter's client once ``initialize`` made one (None: not connected).
    _client: Any = None
    #: Why ``initialize`` left the provider inactive (``""``: it did not).
    _init_error = ""

    def __init__(
        self,
        *,
        hermes_home: str | Path | None = None,
        config: dict[str, Any] | None = None,
        transport: Any = None,
        environ: dict[str, str] | None = None,
    ) -> None:
        self._home: Path | None = Path(hermes_home) if hermes_home else None
        self._raw_config = config
        self._transport = transport
        self._environ = environ
        self._known_facts: set[str] = set()
        self._writes_enabled = True
        self._guard: Guard | None = None
        self._pending: PendingWrites | None = None
        self._closed = False

    def is_available(self) -> bool:
        """True when `unavailable_reason` finds nothing missing (no network)."""
        return not self.unavailable_reason()

    def _settings_source(self) -> tuple[dict[str, Any] | None, dict[str, str] | None]:
        """Typed settings of a provider built directly (not by core) come from the
        constructor's ``config`` and ``environ``."""
        return self._raw_config, self._environ

    # ----------------------------------------------------------------- for subclasses
    def _begin(self, kwargs: dict[str, Any]) -> None:
        """The common part of ``initialize``: home, write switch, curated facts."""
        if kwargs.get("hermes_home"):
            self._home = Path(str(kwargs["hermes_home"]))
        self._writes_enabled = str(kwargs.get("agent_context") or "primary") == "primary"
        self._known_facts.update(fact_key(str(e)) for e in kwargs.get("curated_entries") or ())
        self._known_facts.discard("")

    def _make_guard(
        self,
        classify: Callable[[BaseException], Failure],
        *,
        label: str,
        logger: logging.Logger,
        threshold: int | None = None,
        cooldown: float | None = None,
        single_trial: bool = True,
    ) -> Guard:
        """Create (and keep) this provider's `Guard`.

        ``threshold``, ``cooldown`` and the guard's ``retries`` default to the provider's
        typed settings (``breaker_threshold``, ``breaker_cooldown``, ``retries``, as in
        `hermes_memory_core.kit.RemoteSettings`), else to 3 failures, 30 s and none.
        """
        s = self.settings if self.settings_class is not None else None
        self._guard = Guard(
            self.name, classify, home=self._home, label=label, single_trial=single_trial,
            threshold=int(getattr(s, "breaker_threshold", 3)) if threshold is None else threshold,
            cooldown=float(getattr(s, "breaker_cooldown", 30.0)) if cooldown is None else cooldown,
            logger=logger,
        )  # fmt: skip
        self._guard.retries = int(getattr(s, "retries", self._guard.retries))
        return self._guard

    def _start_writes(
        self,
        send: Callable[[Write], None],
        *,
        max_pending: int = 256,
        accept: Callable[[Write], bool] = lambda write: True,
    ) -> PendingWrites:
        """Create the `PendingWrites` and replay what earlier shutdowns spooled."""
        assert self._guard is not None, "call _make_guard first"
        self._pending = PendingWrites(
            self._guard, send, home=self._home, max_pending=max_pending, accept=accept
        )
        if self._writes_enabled:
            self._pending.restore()
        return self._pending

    def _enqueue(self, write: Write) -> None:
        """Queue one write (dropped outside the primary agent and after shutdown)."""
        if self._pending is not None and self._writes_enabled and not self._closed:
            self._pending.enqueue(write)

    def _flush_timeout(self) -> float:
        """Seconds `on_session_end` waits for queued writes."""
        return 10.0

    def _shutdown_timeout(self) -> float:
        """Seconds `shutdown` waits for queued writes before spooling them."""
        return 5.0

    def _release(self, drained: bool) -> None:
        """Close clients at shutdown (``drained`` False: a call may still be in flight)."""

    def _settle(self) -> None:
        """Queue what the adapter still holds — buffered turns, the commit of an open
        session — before the session-end drain and before shutdown (both call it first)."""

    @property
    def active(self) -> bool:
        """Initialised with a client and not shut down (the service may still be failing:
        see `guard`)."""
        return self._client is not None and not self._init_error and not self._closed

    @property
    def guard(self) -> Guard | None:
        """The breaker and health record (None before ``initialize``)."""
        return self._guard

    def _inactive(self, reason: str) -> None:
        """``initialize`` found that the provider cannot run: keep ``reason`` for the tools'
        answers, log it once and put it on the health record."""
        self._init_error = reason
        guard = self._guard
        log = guard.log if guard is not None else logging.getLogger(f"hermes_memory.{self.name}")
        log.warning("%s provider inactive: %s", self.label or self.name, reason)
        if guard is not None:
            guard.report("degraded", reason)

    def _close_client(self, drained: bool, *workers: SerialWorker | None, within: float) -> None:
        """`_release` for an adapter with a ``_client``: stop ``workers`` taking new work,
        then close the client at once when nothing is in flight, else once they and the
        write worker are idle — at most ``within`` seconds later (bound it by the request
        timeout)."""
        for worker in workers:
            if worker is not None:
                worker.close(0)
        client = self._client
        if client is not None:
            writer = self._pending.worker if self._pending is not None else None
            close_when_idle(client.close, (*workers, writer), drained=drained, within=within,
                            name=f"{self.name}-close")  # fmt: skip

    def _run_tool(
        self, tools: ToolTable, tool_name: str, args: Any, *, owner: object = None
    ) -> str:
        """Answer ``handle_tool_call`` through ``tools``: each tool is called with
        ``(owner, args, client, guard)`` — ``owner`` a narrow context object, not the
        provider's private state (default: the provider); an inactive provider answers why."""
        ready = (self._client, self._guard) if self.active and self._guard else None
        owner = self if owner is None else owner
        reason, writes = self._init_error, self._writes_enabled
        return tools.dispatch(owner, tool_name, args, context=ready, reason=reason, writes=writes)

    # ----------------------------------------------------------------- the shared policy
    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """Send queued writes, waiting at most `_flush_timeout` seconds."""
        pending = self._pending
        if pending is None or self._closed:
            return
        self._settle()
        timeout = self._flush_timeout()
        if not pending.drain(timeout):
            pending.guard.report(
                pending.guard.state,
                f"session end: {len(pending)} write(s) still pending after {timeout:.0f} s",
                warn=True,
            )

    def shutdown(self) -> None:
        """Send what can be sent within `_shutdown_timeout`, spool the rest, release."""
        if self._closed or self._pending is None:
            return
        self._settle()
        drained = self._pending.close(self._shutdown_timeout())
        self._closed = True
        self._pending.guard.closed = True
        self._release(drained)
