"""The state of a `MemoryManager`, provider registration and the fan-out glue (internal).

Split from `hermes_memory_core._manager` by concern: this module owns who is registered and how
one hook reaches every provider; `_manager_tools` routes tools and curated-write events; the
manager itself holds the session lifecycle and recall.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, cast

from hermes_memory_core import _assembly, _lifetime
from hermes_memory_core._dispatch import (
    Dispatcher,
    Kind,
    Slot,
    check_hook_signatures,
    resolve_hooks,
)
from hermes_memory_core._egress import EgressPolicy, plain_str
from hermes_memory_core._project_context import ProjectContext
from hermes_memory_core._provider import MemoryProvider, ToolSchema
from hermes_memory_core._routing import ToolRoutes, normalize_schema
from hermes_memory_core._worker import SerialWorker, call_bounded

if TYPE_CHECKING:
    from hermes_memory_core._events import MemoryWrite
    from hermes_memory_core.config import HermesConfig
    from hermes_memory_review import ReviewCoordinator

logger = logging.getLogger("hermes_memory_core.manager")

DEFAULT_PREFETCH_TIMEOUT = 8.0
DEFAULT_HOOK_TIMEOUT = 5.0
DEFAULT_TOOL_TIMEOUT = 30.0
DEFAULT_SHUTDOWN_TIMEOUT = 5.0
DEFAULT_MAX_QUEUED = 256
#: Same values as `hermes_memory_guard` (not imported: it loads the threat scanner).
DEFAULT_RECALL_MAX_CHARS = 8000
DEFAULT_RECALL_MAX_LINES = 200
#: Same values as `hermes_memory_review`, which loads when a review is first needed.
DEFAULT_NUDGE_INTERVAL = 10
DEFAULT_REVIEW_TIMEOUT = 120.0
DEFAULT_REVIEW_MAX_TURNS = 8


class ManagerClosedError(RuntimeError):
    """A `MemoryManager` was used after `MemoryManager.shutdown_all`.

    Nothing was handed to any provider; the call had no effect. Build a new manager (or
    keep the old one open) to go on.
    """


class ManagerBase:
    """State, registration and the dispatch glue of `MemoryManager` (internal).

    The parameters are documented on `MemoryManager`.
    """

    def __init__(
        self,
        *,
        prefetch_timeout: float = DEFAULT_PREFETCH_TIMEOUT,
        shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT,
        hook_timeout: float = DEFAULT_HOOK_TIMEOUT,
        tool_timeout: float = DEFAULT_TOOL_TIMEOUT,
        max_queued: int = DEFAULT_MAX_QUEUED,
        recall_max_chars: int = DEFAULT_RECALL_MAX_CHARS,
        recall_max_lines: int = DEFAULT_RECALL_MAX_LINES,
        hermes_home: str | Path | None = None,
        scrub_secrets: bool = True,
        nudge_interval: int = DEFAULT_NUDGE_INTERVAL,
        review_timeout: float = DEFAULT_REVIEW_TIMEOUT,
        review_max_turns: int = DEFAULT_REVIEW_MAX_TURNS,
    ) -> None:
        _check_options(
            prefetch_timeout, hook_timeout, tool_timeout, shutdown_timeout,
            max_queued=max_queued, recall_max_chars=recall_max_chars,
            recall_max_lines=recall_max_lines,
        )  # fmt: skip
        self.prefetch_timeout = float(prefetch_timeout)
        self.hook_timeout = float(hook_timeout)
        self.tool_timeout = float(tool_timeout)
        self.shutdown_timeout = float(shutdown_timeout)
        self.max_queued = max_queued
        self.recall_max_chars = recall_max_chars
        self.recall_max_lines = recall_max_lines
        self.hermes_home = Path(hermes_home).expanduser() if hermes_home is not None else None
        self.scrub = scrub_secrets
        self._egress = EgressPolicy(
            scrub=scrub_secrets, max_chars=recall_max_chars, max_lines=recall_max_lines
        )
        self._review_options: dict[str, Any] = {
            "nudge_interval": nudge_interval,
            "review_timeout": review_timeout,
            "review_max_turns": review_max_turns,
        }
        self._review_state: ReviewCoordinator | None = None
        self._project_context = ProjectContext()
        self.config: HermesConfig | None = None
        self.session_id = ""
        self._slots: list[Slot] = []
        self._tools = ToolRoutes()
        # Local tiers' queue_prefetch warm-ups (the only local work not done inline).
        self._local_worker = SerialWorker("hermes-memory-local")
        self._workers: list[SerialWorker] = [self._local_worker]
        self._lock = threading.RLock()
        self._dispatch = Dispatcher(self._lock)
        self._closed = False
        self._active = 0
        self._idle = threading.Condition(self._lock)
        if (nudge_interval, review_timeout, review_max_turns) != (
            DEFAULT_NUDGE_INTERVAL, DEFAULT_REVIEW_TIMEOUT, DEFAULT_REVIEW_MAX_TURNS,
        ):  # fmt: skip
            self._review  # noqa: B018 - other values are checked now, defaults need no check
        _lifetime.register_for_exit(self, self._workers)

    # ----------------------------------------------------------------- context manager
    def __enter__(self) -> Self:
        self._check_open("__enter__")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.shutdown_all()

    def shutdown_all(self) -> None:
        """Drain and shut providers down (defined by `MemoryManager`)."""
        raise NotImplementedError

    @property
    def _review(self) -> ReviewCoordinator:
        """The review nudge and loop (`hermes_memory_review`, imported on first use)."""
        with self._lock:
            if self._review_state is None:
                from hermes_memory_review import ReviewCoordinator

                self._review_state = ReviewCoordinator(**self._review_options)
            return self._review_state

    def _cancel_review(self) -> None:
        state = self._review_state
        if state is not None:
            state.cancel()

    @property
    def closed(self) -> bool:
        """True once `shutdown_all` ran."""
        return self._closed

    # ----------------------------------------------------------------- registration
    def add_provider(self, provider: MemoryProvider, *, local: bool | None = None) -> bool:
        """Register ``provider``; returns whether it was accepted.

        :param local: whether ``provider`` is a local tier: called on the caller's thread,
            with no time bound, and its recall not filtered. ``None`` (the default) trusts
            the class's declared `MemoryProvider.tier` only for a class defined in one of
            this project's packages (`LOCAL_TIER_PACKAGES`); anything else is external.
            Pass ``True`` only for a provider you wrote and trust to be fast.

        Refused, with a warning: a non-provider, a duplicate name, a second external
        provider, a provider whose hook signatures do not match the contract, or one whose
        ``name`` or `get_tool_schemas` raises or hangs (it then does not take the external
        slot).
        :raises ManagerClosedError: after `shutdown_all`.
        """
        self._check_open("add_provider")
        if not isinstance(cast(object, provider), MemoryProvider):  # untyped callers
            logger.warning("Rejected %r: memory providers must subclass MemoryProvider", provider)
            return False
        local = _assembly.trusted_local(provider, local)
        described = self._describe(provider, local)
        if described is None:
            return False
        name, schemas = described
        with self._lock:
            if self.get_provider(name) is not None:
                logger.warning(
                    "Rejected memory provider %r: a provider of that name is registered", name
                )
                return False
            current = self.external_provider
            if not local and current is not None:
                logger.warning(
                    "Rejected memory provider '%s' — external provider '%s' is already "
                    "registered. Only one external memory provider is allowed at a time. "
                    "Configure which one via memory.provider in config.yaml.",
                    name,
                    _name(current),
                )
                return False
            hooks = resolve_hooks(provider)
            problem = hooks if isinstance(hooks, str) else check_hook_signatures(provider, hooks)
            if problem is not None:
                logger.warning("Rejected memory provider %r: %s", name, problem)
                return False
            assert not isinstance(hooks, str)
            slot = Slot(provider, name, local, hooks=hooks)
            if not local:
                slot.worker = SerialWorker(
                    f"hermes-memory-{name}",
                    max_queued=self.max_queued,
                    overflow="drop_oldest",
                    inline_fallback=False,
                )
                if not slot.worker.start():
                    logger.warning("Rejected memory provider %r: no thread can be started", name)
                    return False
                self._workers.append(slot.worker)
            else:
                provider.bind_write_listener(self._forward_write)
            self._slots.append(slot)
            self._tools.claim(slot, schemas)
        return True

    def _describe(
        self, provider: MemoryProvider, local: bool
    ) -> tuple[str, list[ToolSchema]] | None:
        def describe() -> tuple[str, list[ToolSchema]]:
            name = provider.name
            if not isinstance(name, str) or not name:
                raise TypeError(f"name must be a non-empty string, got {name!r}")
            schemas = provider.get_tool_schemas()
            return name, [s for s in (normalize_schema(s) for s in schemas) if s]

        if local:
            try:
                return describe()
            except (Exception, SystemExit) as exc:
                logger.warning("Rejected memory provider %r: %s", provider, exc)
                return None
        outcome = call_bounded(describe, self.hook_timeout, name="describe")
        if outcome.finished and outcome.error is None:
            return cast(tuple[str, list[ToolSchema]], outcome.value)
        why = (
            f"name/get_tool_schemas() did not answer within {self.hook_timeout:.1f}s"
            if not outcome.finished
            else f"get_tool_schemas() failed: {outcome.error}"
        )
        logger.warning("Rejected memory provider %s: %s", type(provider).__name__, why)
        return None

    @property
    def providers(self) -> list[MemoryProvider]:
        """Registered providers in registration order (a copy)."""
        with self._lock:
            return [slot.provider for slot in self._slots]

    @property
    def external_provider(self) -> MemoryProvider | None:
        """The one external provider, if any."""
        slot = self._external_slot()
        return slot.provider if slot is not None else None

    def get_provider(self, name: str) -> MemoryProvider | None:
        """The provider called ``name``, or None."""
        with self._lock:
            return next((s.provider for s in self._slots if s.name == name), None)

    def is_local(self, name: str) -> bool:
        """Whether provider ``name`` is a local tier (called inline, never time-bounded)."""
        with self._lock:
            return any(s.name == name and s.local for s in self._slots)

    def is_degraded(self, name: str) -> bool:
        """Whether provider ``name`` is being skipped because a call of it is still stuck."""
        with self._lock:
            return any(s.name == name and s.degraded() for s in self._slots)

    def _external_slot(self) -> Slot | None:
        with self._lock:
            return next((s for s in self._slots if not s.local), None)

    def _snapshot(self) -> list[Slot]:
        with self._lock:
            return list(self._slots)

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        """Tell the external provider about a curated-memory write (bounded by
        ``hook_timeout``). Local tiers report their own writes as events; call this for a
        write made outside the manager (an editor, an import)."""
        with self._using("on_memory_write"):
            action, target, content, metadata = self._egress.scrub(
                (action, target, content, metadata)
            )
            meta = dict(metadata or {})
            meta.setdefault("session_id", self.session_id)
            slot = self._external_slot()
            if slot is not None:
                self._dispatch.invoke(
                    slot, "on_memory_write", (action, target, content), {"metadata": meta},
                    kind="write", bound=self.hook_timeout,
                )  # fmt: skip

    def _forward_write(self, event: MemoryWrite) -> None:
        """Listener bound to each local tier: its `MemoryWrite` events go to the external."""
        if self._closed or self._external_slot() is None:
            return
        self.on_memory_write(event.action, event.target, event.content, dict(event.metadata))

    # ----------------------------------------------------------------- internals
    def _check_open(self, operation: str) -> None:
        if self._closed:
            raise ManagerClosedError(
                f"MemoryManager.{operation}() called after shutdown_all(); nothing was "
                "handed to any provider (build a new manager to go on)"
            )

    @contextmanager
    def _using(self, operation: str) -> Iterator[None]:
        with self._lock:
            self._check_open(operation)
            self._active += 1
        try:
            yield
        finally:
            with self._lock:
                self._active -= 1
                if not self._active:
                    self._idle.notify_all()

    def _drain(self, timeout: float | None) -> bool:
        return self._dispatch.drain(self._snapshot(), self._workers, timeout)

    def _drain_or_warn(self, moment: str) -> None:
        if not self._drain(self.shutdown_timeout):
            logger.warning(
                "%s: queued memory syncs still running after %.1fs", moment, self.shutdown_timeout
            )

    def _fan_out(
        self,
        hook: str,
        *args: Any,
        kind: Kind,
        bound: float | None = -1.0,
        level: int = logging.DEBUG,
        local: bool | None = None,
        **kwargs: Any,
    ) -> list[tuple[Slot, Any]]:
        """Call ``hook`` on every provider in order; (slot, value) for each that answered.

        ``bound`` defaults to ``hook_timeout``; ``None`` queues without waiting. ``local``
        limits the call to the local tiers (True) or the external provider (False).
        """
        wait = self.hook_timeout if bound == -1.0 else bound
        answers = []
        for slot in self._snapshot():
            if local is not None and slot.local != local:
                continue
            outcome = self._dispatch.invoke(
                slot, hook, args, kwargs, kind=kind, bound=wait, level=level
            )
            if outcome.status == "ok":
                answers.append((slot, outcome.value))
        return answers

    def _trusted(
        self, answers: list[tuple[Slot, Any]], *, deadline: float | None = None
    ) -> Iterator[str]:
        """String answers, an external provider's capped and threat-filtered (by
        ``deadline``, a `time.monotonic` instant, when one is given)."""
        for slot, text in answers:
            if isinstance(text, str):
                text = plain_str(text)  # a provider's str subclass never runs past here
                yield (
                    text
                    if slot.local
                    else self._egress.filter_untrusted(text, slot.name, deadline=deadline)
                )


def _check_options(
    prefetch: float, hook: float, tool: float, shutdown: float, **counts: int
) -> None:
    """:raises ValueError: a bound that is not a positive number, or a count below 1."""
    for label, value in (("prefetch_timeout", prefetch), ("hook_timeout", hook),
                         ("tool_timeout", tool)):  # fmt: skip
        if not _finite_positive(value):
            raise ValueError(f"{label} must be a positive number of seconds, got {value!r}")
    if not (_finite_positive(shutdown) or shutdown == 0):
        raise ValueError(f"shutdown_timeout must be >= 0 seconds, got {shutdown!r}")
    for label, count in counts.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"{label} must be an integer >= 1, got {count!r}")


def _finite_positive(value: Any) -> bool:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return False
    return 0 < number < float("inf")


def _name(provider: MemoryProvider) -> str:
    try:
        return str(provider.name)
    except Exception:
        return "?"
