"""Isolated dispatch (internal): the one place a provider hook is called.

A local tier's hook runs on the caller's thread (``SystemExit`` contained, Ctrl-C not); an
external provider's runs on its own `SerialWorker` and is waited for at most a bound. A call
that outlives its bound marks the slot *degraded*: reads skip it, writes queue without
waiting, until that call returns. Keyword arguments reach a method only if its signature
accepts them; the signature is read once per function, not on every call.
"""

from __future__ import annotations

import functools
import inspect
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from hermes_memory_core._provider import PROVIDER_HOOK_NAMES, MemoryProvider
from hermes_memory_core._worker import SerialWorker, TaskHandle

logger = logging.getLogger("hermes_memory_core.manager")

Kind = Literal["read", "write"]
Status = Literal["ok", "failed", "timeout", "skipped", "queued", "absent"]


@dataclass(eq=False)
class Slot:
    """One registered provider and how it is called."""

    provider: MemoryProvider
    name: str
    local: bool
    worker: SerialWorker | None = None
    stuck: TaskHandle | None = None
    stuck_hook: str = ""
    skipped: int = 0
    #: The provider's hooks, looked up once when it was added (`resolve_hooks`): a hook
    #: that is a property is never evaluated again, on any thread.
    hooks: dict[str, Callable[..., Any] | None] = field(default_factory=dict)

    def method(self, hook: str) -> Callable[..., Any] | None:
        """The bound hook ``hook`` (``None``: the provider has none). Hooks outside
        `PROVIDER_HOOK_NAMES` are looked up now; one that raises counts as absent."""
        if hook in self.hooks:
            return self.hooks[hook]
        try:
            found = getattr(self.provider, hook, None)
        except (Exception, SystemExit):
            return None
        return found if callable(found) else None

    def degraded(self) -> bool:
        """True while a call that outlived its bound is still running."""
        stuck = self.stuck
        if stuck is None:
            return False
        if stuck.finished:
            self.stuck = None
            logger.warning(
                "memory provider %r answered its late %s call; calling it again "
                "(%d call(s) skipped meanwhile)",
                self.name,
                self.stuck_hook,
                self.skipped,
            )
            self.skipped = 0
            return False
        return True


@dataclass
class Outcome:
    """What one dispatched call came to."""

    status: Status
    value: Any = None
    error: BaseException | None = field(default=None)


class _Failure:
    """What a provider call that raised returns through a worker."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


# ------------------------------------------------------------------- signatures
def _parameters(func: Callable[..., Any]) -> tuple[frozenset[str], bool] | None:
    """(keyword-passable names, takes **kwargs) of ``func``; None if it has no signature."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return None
    names = frozenset(
        p.name
        for p in params
        if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    )
    return names, any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


@functools.lru_cache(maxsize=2048)
def _cached_parameters(func: Callable[..., Any]) -> tuple[frozenset[str], bool] | None:
    return _parameters(func)


def accepted(method: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The subset of ``kwargs`` that ``method`` accepts (read once per underlying function)."""
    if not kwargs:
        return {}
    func = getattr(method, "__func__", method)
    try:
        shape = _cached_parameters(func)
    except TypeError:  # an unhashable callable
        shape = _parameters(method)
    if shape is None or shape[1]:
        return dict(kwargs)
    names = shape[0]
    return {k: v for k, v in kwargs.items() if k in names}


def resolve_hooks(provider: MemoryProvider) -> dict[str, Callable[..., Any] | None] | str:
    """Every hook of ``provider`` as a bound method (``None`` where it has none), or why
    it cannot be used: a hook whose lookup raises (a property raising ``SystemExit``) or
    that is not callable. Done once, when the provider is added."""
    hooks: dict[str, Callable[..., Any] | None] = {}
    for hook in PROVIDER_HOOK_NAMES:
        try:
            found = getattr(provider, hook, None)
        except (Exception, SystemExit) as exc:
            return f"its {hook} cannot be read ({type(exc).__name__})"
        if found is not None and not callable(found):
            return f"{hook} is not callable"
        hooks[hook] = found
    return hooks


def check_hook_signatures(
    provider: MemoryProvider, hooks: dict[str, Callable[..., Any] | None] | None = None
) -> str | None:
    """Why ``provider`` cannot be called, or None: a hook naming an unknown argument.

    Every argument an overriding method names must exist in the `MemoryProvider` method it
    overrides (a typo such as ``prefetch(self, qeury)`` would otherwise never be passed).
    ``hooks``: the hooks `resolve_hooks` found (looked up again when not given).
    """
    for hook in PROVIDER_HOOK_NAMES:
        impl = hooks.get(hook) if hooks is not None else getattr(provider, hook, None)
        base = getattr(MemoryProvider, hook)
        if impl is None or getattr(impl, "__func__", None) is base:
            continue
        if not callable(impl):
            return f"{hook} is not callable"
        mine, theirs = _parameters(impl), _parameters(base)
        if mine is None or theirs is None:
            continue
        unknown = sorted(mine[0] - theirs[0] - {"self"})
        if unknown:
            return (
                f"{type(provider).__name__}.{hook}() takes argument(s) {', '.join(unknown)} "
                f"that the MemoryProvider contract does not define "
                f"(known: {', '.join(sorted(theirs[0] - {'self'}))})"
            )
    return None


# ------------------------------------------------------------------- calling
def _run_hook(
    method: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    provider_name: str,
    hook: str,
    level: int,
) -> Any:
    """Body of a queued call: the provider's exception is logged and returned, never raised."""
    try:
        return method(*args, **kwargs)
    except BaseException as exc:  # worker thread: never a real Ctrl-C
        logger.log(
            level,
            "memory provider %r failed in %s: %s: %s",
            provider_name,
            hook,
            type(exc).__name__,
            describe(exc),
            exc_info=True,
        )
        return _Failure(exc)


def describe(exc: BaseException) -> str:
    """``str(exc)``, or ``""`` when the exception cannot be printed (its ``__str__``
    raises): a provider's broken exception never breaks the logging of its failure."""
    try:
        return str(exc)
    except (Exception, SystemExit):
        return ""


class Dispatcher:
    """Calls one hook of one provider, inline or on its worker, within a bound.

    :param lock: the manager's lock, guarding each slot's degraded state.
    """

    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock

    def call_inline(
        self,
        slot: Slot,
        hook: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        level: int = logging.DEBUG,
        pass_all: bool = False,
    ) -> Outcome:
        """A local tier's hook on the caller's thread (SystemExit contained, Ctrl-C not)."""
        method = slot.method(hook)
        if method is None:
            return Outcome("absent")
        try:
            call_kwargs = dict(kwargs) if pass_all else accepted(method, kwargs)
            return Outcome("ok", method(*args, **call_kwargs))
        except (Exception, SystemExit) as exc:
            logger.log(
                level,
                "memory provider %r failed in %s: %s: %s",
                slot.name,
                hook,
                type(exc).__name__,
                describe(exc),
                exc_info=True,
            )
            return Outcome("failed", error=exc)

    def invoke(
        self,
        slot: Slot,
        hook: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        kind: Kind,
        bound: float | None,
        level: int = logging.DEBUG,
        pass_all: bool = False,
    ) -> Outcome:
        """Call ``hook`` on one provider: inline for a local tier, else on its worker.

        ``bound`` is how long to wait for an external provider (``None``: queue and return).
        While the provider is degraded, ``kind="read"`` calls are skipped and ``"write"``
        calls are queued without waiting.
        """
        if slot.local:
            return self.call_inline(slot, hook, args, kwargs, level=level, pass_all=pass_all)
        worker = slot.worker
        assert worker is not None
        with self._lock:
            degraded = slot.degraded()
            if degraded:
                slot.skipped += 1
        if degraded and kind == "read":
            logger.debug("memory provider %r skipped for %s: still stuck", slot.name, hook)
            return Outcome("skipped")
        method = slot.method(hook)
        if method is None:
            return Outcome("absent")
        call_kwargs = dict(kwargs) if pass_all else accepted(method, kwargs)
        handle = worker.call(
            lambda: _run_hook(method, args, call_kwargs, slot.name, hook, level),
            label=f"{slot.name}.{hook}",
        )
        if handle is None:
            logger.warning(
                "memory provider %r: %s not queued (its worker is closed)", slot.name, hook
            )
            return Outcome("skipped")
        if bound is None or degraded:
            return Outcome("queued")
        if not handle.wait(bound):
            return self._timed_out(slot, worker, handle, hook, kind, bound)
        if handle.state == "dropped":
            return Outcome("skipped")
        result = handle.result
        if isinstance(result, _Failure):
            return Outcome("failed", error=result.error)
        return Outcome("ok", result)

    def _timed_out(
        self,
        slot: Slot,
        worker: SerialWorker,
        handle: TaskHandle,
        hook: str,
        kind: Kind,
        bound: float,
    ) -> Outcome:
        # The call that holds the worker is the stuck one: ours, or one queued before.
        running = worker.current or handle
        if kind == "read" and running is not handle:
            worker.cancel(handle)  # nobody wants this result any more
        busy = running.label.rpartition(".")[2] or hook
        with self._lock:
            if slot.stuck is None or slot.stuck.finished:
                slot.stuck, slot.stuck_hook, slot.skipped = running, busy, 0
        logger.warning(
            "memory provider %r did not answer %s within %.1fs%s; continuing without it "
            "and skipping it until that call returns",
            slot.name,
            hook,
            bound,
            "" if busy == hook else f" (still busy in {busy})",
        )
        return Outcome("timeout")

    def drain(self, slots: list[Slot], workers: list[SerialWorker], timeout: float | None) -> bool:
        """Wait for every worker with one shared deadline; a stuck one is marked degraded."""
        deadline = None if timeout is None else time.monotonic() + timeout
        drained = True
        external = {id(s.worker): s for s in slots if s.worker is not None}
        for worker in list(workers):
            slot = external.get(id(worker))
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if slot is not None and slot.degraded():
                # Still stuck from an earlier call: wait for it within this timeout too (it
                # may finish in milliseconds), but do not mark it again.
                drained = worker.drain(remaining) and drained
                continue
            if worker.drain(remaining):
                continue
            drained = False
            current = worker.current
            if slot is not None and current is not None:
                slot.stuck, slot.stuck_hook = current, current.label.rpartition(".")[2]
                logger.warning(
                    "memory provider %r is still busy in %s; it is skipped until that returns",
                    slot.name,
                    slot.stuck_hook,
                )
        return drained
