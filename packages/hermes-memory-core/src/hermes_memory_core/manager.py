"""`MemoryManager`: the local tiers plus at most one external provider, each isolated.

Method names follow Hermes Agent's manager, so an agent written against it ports by changing
an import.

**Two kinds of provider.** The *local tiers* — this project's curated store (``builtin``)
and session archive (``sessions``) — are called on the caller's thread: when `sync_all`
returns, they have stored the turn (a committed SQLite transaction for the archive). Every
other provider is *external*: it gets its own worker thread, every hook is queued there in
order, and the manager waits for a result at most the bound of the hook's class
(``prefetch_timeout``, ``hook_timeout``, ``tool_timeout``, ``shutdown_timeout``). A call still
running after its bound marks the provider *degraded*: until that call returns, calls that
only produce something for this turn (recall, prompt block, compression notes, tools) skip it
at once, and writes are queued without waiting. A provider that hangs for ever therefore
costs one bound, once, and never delays another tier.

Which provider is local is decided by where it comes from — a registration of a reserved
name by one of our distributions (`PluginRegistry`), or a class defined in one of our
packages — never by the provider's own ``name``, which a third party can choose.

**Exceptions.** A hook's exception is logged and costs only that provider's contribution.
On a worker thread that includes ``SystemExit`` and ``KeyboardInterrupt`` (signals are only
delivered to the main thread, so there they can only come from plugin code). On the
caller's thread — the local tiers, our own code — ``SystemExit`` is contained too, but
``KeyboardInterrupt`` always propagates: it is the user's Ctrl-C.

**Scrubbing.** Every string handed to a provider passes `scrub_secrets` first — arguments and
keyword context alike (``session_title``, ``user_id``, …). Identifiers (session ids and
``hermes_home``) are passed unchanged: they address stored data.

**Lifetime.** The manager is a context manager (``with MemoryManager.from_config() as m:``
shuts down on exit); managers still open when the interpreter exits are shut down by an
``atexit`` hook (bounded, and holding them only weakly); after `shutdown_all` every method
that would call a provider raises `ManagerClosedError`.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, cast

import pluggy

from hermes_memory_core import review as _review
from hermes_memory_core.config import HermesConfig, load_config, resolve_home
from hermes_memory_core.fencing import (
    DEFAULT_RECALL_MAX_CHARS,
    DEFAULT_RECALL_MAX_LINES,
    build_memory_context_block,
    cap_recall,
    filter_recall_threats,
    sanitize_context,
)
from hermes_memory_core.hookspecs import PROJECT_NAME, PROVIDER_HOOK_NAMES, ProviderSpec
from hermes_memory_core.plugins import (
    PluginRegistry,
    accepted_kwargs,
    get_registry,
)
from hermes_memory_core.provider import BUILTIN_TIER_NAMES, MemoryProvider, ToolSchema
from hermes_memory_core.redact import scrub_secrets
from hermes_memory_core.toolresult import tool_error
from hermes_memory_core.trivial import is_trivial_prompt
from hermes_memory_core.worker import SerialWorker, TaskHandle, call_bounded

__all__ = ["LOCAL_TIER_PACKAGES", "ManagerClosedError", "MemoryManager"]

logger = logging.getLogger(__name__)

DEFAULT_PREFETCH_TIMEOUT = 8.0
DEFAULT_HOOK_TIMEOUT = 5.0
DEFAULT_TOOL_TIMEOUT = 30.0
DEFAULT_SHUTDOWN_TIMEOUT = 5.0
DEFAULT_MAX_QUEUED = 256
MEMORY_TOOL_NAME = "memory"

#: Import packages whose provider classes are local tiers when added with `add_provider`.
LOCAL_TIER_PACKAGES: frozenset[str] = frozenset(
    {"hermes_memory_builtin", "hermes_memory_sessions", "hermes_memory_postgres"}
)

#: Keyword arguments passed to providers unscrubbed: identifiers, not content.
_IDENTIFIER_KEYS = frozenset(
    {"session_id", "parent_session_id", "child_session_id", "current_session_id", "hermes_home"}
)

Kind = Literal["read", "write"]


class ManagerClosedError(RuntimeError):
    """A `MemoryManager` was used after `MemoryManager.shutdown_all`.

    Nothing was handed to any provider; the call had no effect. Build a new manager (or
    keep the old one open) to go on.
    """


class _ProviderHookValidator(pluggy.PluginManager):
    """Registers provider instances against `ProviderSpec` without needing markers.

    A subclass method that overrides a marked base method loses pluggy's marker; here every
    public method named like a lifecycle hook counts as an implementation, so pluggy can
    still refuse a method whose parameters the spec does not know.
    """

    def parse_hookimpl_opts(self, plugin: object, name: str) -> pluggy.HookimplOpts | None:
        if name in PROVIDER_HOOK_NAMES and callable(getattr(plugin, name, None)):
            return {
                "wrapper": False,
                "hookwrapper": False,
                "optionalhook": False,
                "tryfirst": False,
                "trylast": False,
                "specname": None,
            }
        return None


@dataclass(eq=False)
class _Slot:
    """One registered provider and how it is called."""

    provider: MemoryProvider
    name: str
    local: bool
    worker: SerialWorker | None = None
    stuck: TaskHandle | None = None
    stuck_hook: str = ""
    skipped: int = 0

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


class _Failure:
    """What a provider call that raised returns through a worker."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


_Status = Literal["ok", "failed", "timeout", "skipped", "queued", "absent"]


@dataclass
class _Outcome:
    status: _Status
    value: Any = None
    error: BaseException | None = field(default=None)


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
            exc,
            exc_info=True,
        )
        return _Failure(exc)


_live_managers: weakref.WeakSet[MemoryManager] = weakref.WeakSet()
_atexit_lock = threading.Lock()
_atexit_registered = False


def _shutdown_live_managers() -> None:
    """At interpreter exit: shut down every manager the host left open (each bounded)."""
    for manager in list(_live_managers):
        try:
            manager.shutdown_all()
        except BaseException:  # never turn an exit into a traceback
            logger.debug("memory manager shutdown at exit failed", exc_info=True)


def _register_for_exit(manager: MemoryManager) -> None:
    global _atexit_registered
    with _atexit_lock:
        if not _atexit_registered:
            atexit.register(_shutdown_live_managers)
            _atexit_registered = True
        _live_managers.add(manager)


def _close_workers(workers: list[SerialWorker]) -> None:
    """Finaliser of a manager collected without `shutdown_all`: let its threads end."""
    for worker in workers:
        worker.close(0)


class MemoryManager:
    """Route memory hooks and tools to the local tiers and at most one external provider.

    ``MemoryManager()`` needs no arguments: add providers with `add_provider`. Or build the
    whole stack from ``<home>/config.yaml`` with `MemoryManager.from_config`. Use it as a
    context manager, or call `shutdown_all` when done.

    :param prefetch_timeout: seconds the external provider's `prefetch` may take before the
        turn goes on without it (default 8; ``memory.prefetch_timeout``).
    :param hook_timeout: seconds the manager waits for the external provider's quick hooks:
        ``initialize``, ``system_prompt_block``, ``on_turn_start``, ``on_memory_write``,
        ``on_pre_compress``, ``on_session_switch``, ``on_delegation`` (default 5;
        ``memory.hook_timeout``).
    :param tool_timeout: seconds the manager waits for one of the external provider's tools
        (default 30; ``memory.tool_timeout``).
    :param shutdown_timeout: seconds `shutdown_all`, `on_session_switch` and `on_session_end`
        wait for queued syncs, and the external provider's ``on_session_end`` and
        ``shutdown`` may take (default 5; ``memory.shutdown_timeout``).
    :param max_queued: calls that may wait on one external provider's worker; when full the
        oldest is dropped with a warning (default 256).
    :param recall_max_chars: the external provider's recall (and compression notes) is cut
        to this many characters before it is scanned (default 8000;
        ``memory.recall_max_chars``).
    :param recall_max_lines: … and to this many lines (default 200; ``memory.recall_max_lines``).
    :param hermes_home: passed to providers' `initialize` as ``hermes_home``.
    :param scrub_secrets: mask credentials in everything handed to providers (default on).
    :param nudge_interval: user turns without a ``memory`` call before `review_due` (default
        10, 0 disables; ``memory.nudge_interval``). See `hermes_memory_core.review`.
    :param review_timeout: seconds a `run_review` may take (default 120;
        ``memory.review_timeout``).
    :param review_max_turns: model calls a `run_review` may make (default 8;
        ``memory.review_max_turns``).
    :raises ValueError: a timeout that is not a positive number, or ``max_queued`` < 1.
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
        nudge_interval: int = _review.DEFAULT_NUDGE_INTERVAL,
        review_timeout: float = _review.DEFAULT_REVIEW_TIMEOUT,
        review_max_turns: int = _review.DEFAULT_REVIEW_MAX_TURNS,
    ) -> None:
        for label, value in (
            ("prefetch_timeout", prefetch_timeout),
            ("hook_timeout", hook_timeout),
            ("tool_timeout", tool_timeout),
        ):
            if not _finite_positive(value):
                raise ValueError(f"{label} must be a positive number of seconds, got {value!r}")
        if not (_finite_positive(shutdown_timeout) or shutdown_timeout == 0):
            raise ValueError(f"shutdown_timeout must be >= 0 seconds, got {shutdown_timeout!r}")
        for label, count in (
            ("max_queued", max_queued),
            ("recall_max_chars", recall_max_chars),
            ("recall_max_lines", recall_max_lines),
        ):
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise ValueError(f"{label} must be an integer >= 1, got {count!r}")
        self.prefetch_timeout = float(prefetch_timeout)
        self.hook_timeout = float(hook_timeout)
        self.tool_timeout = float(tool_timeout)
        self.shutdown_timeout = float(shutdown_timeout)
        self.max_queued = max_queued
        self.recall_max_chars = recall_max_chars
        self.recall_max_lines = recall_max_lines
        self.hermes_home = Path(hermes_home).expanduser() if hermes_home is not None else None
        self.scrub = scrub_secrets
        self._review = _review.ReviewCoordinator(
            nudge_interval=nudge_interval,
            review_timeout=review_timeout,
            review_max_turns=review_max_turns,
        )
        self.config: HermesConfig | None = None
        self.session_id = ""
        self._slots: list[_Slot] = []
        self._tool_routes: dict[str, _Slot] = {}
        self._tool_schemas: list[ToolSchema] = []
        self._validator = _ProviderHookValidator(PROJECT_NAME)
        self._validator.add_hookspecs(ProviderSpec)
        # Local tiers' queue_prefetch warm-ups (the only local work not done inline).
        self._local_worker = SerialWorker("hermes-memory-local")
        self._workers: list[SerialWorker] = [self._local_worker]
        self._lock = threading.RLock()
        self._closed = False
        self._active = 0
        self._idle = threading.Condition(self._lock)
        finalizer = weakref.finalize(self, _close_workers, self._workers)
        finalizer.atexit = False
        _register_for_exit(self)

    # ----------------------------------------------------------------- context manager
    def __enter__(self) -> MemoryManager:
        self._check_open("__enter__")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.shutdown_all()

    @property
    def closed(self) -> bool:
        """True once `shutdown_all` ran."""
        return self._closed

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_config(
        cls,
        home: str | Path | None = None,
        *,
        registry: PluginRegistry | None = None,
        **options: Any,
    ) -> MemoryManager:
        """Build builtin + sessions + the configured external provider from ``config.yaml``.

        ``home`` defaults to ``$HERMES_HOME`` or ``~/.hermes``. Providers come from the
        installed plugins (``registry`` defaults to the entry-point registry). A provider that
        is missing, unavailable, hangs or raises while being created is skipped with a
        warning; a malformed config raises `hermes_memory_core.ConfigError` naming the key.
        ``options`` override constructor arguments (e.g. ``prefetch_timeout``).
        """
        config = load_config(home)
        registry = registry if registry is not None else get_registry()
        options.setdefault("prefetch_timeout", config.memory.prefetch_timeout)
        options.setdefault("hook_timeout", config.memory.hook_timeout)
        options.setdefault("tool_timeout", config.memory.tool_timeout)
        options.setdefault("shutdown_timeout", config.memory.shutdown_timeout)
        options.setdefault("recall_max_chars", config.memory.recall_max_chars)
        options.setdefault("recall_max_lines", config.memory.recall_max_lines)
        options.setdefault("nudge_interval", config.memory.nudge_interval)
        options.setdefault("review_timeout", config.memory.review_timeout)
        options.setdefault("review_max_turns", config.memory.review_max_turns)
        manager = cls(hermes_home=config.home, **options)
        manager.config = config
        wanted = []
        if config.memory.memory_enabled or config.memory.user_profile_enabled:
            wanted.append("builtin")
        wanted.append("sessions")
        for name in wanted:
            if name not in registry.providers:
                logger.warning(
                    "memory tier %r is not installed; install hermes-memory-%s", name, name
                )
                continue
            manager._add_from_registry(registry, name, config)
        external = config.memory.provider
        if external and external not in BUILTIN_TIER_NAMES:
            if external not in registry.providers:
                installed = ", ".join(n for n in registry.names() if n not in BUILTIN_TIER_NAMES)
                logger.warning(
                    "memory.provider is %r but no such provider is installed (installed: %s); "
                    "try: pip install hermes-memory-%s",
                    external,
                    installed or "none",
                    external,
                )
            else:
                manager._add_from_registry(registry, external, config)
        return manager

    def _add_from_registry(self, registry: PluginRegistry, name: str, config: HermesConfig) -> None:
        registration = registry.providers[name]
        local = registration.is_local_tier
        source = registration.distribution or registration.plugin

        def build() -> tuple[MemoryProvider, str, bool, str]:
            provider = registry.create(name, hermes_home=config.home, config=config.raw)
            available = bool(provider.is_available())
            reason = "" if available else str(provider.unavailable_reason() or "")
            return provider, str(provider.name), available, reason

        if local:
            try:
                provider, own_name, available, reason = build()
            except (Exception, SystemExit) as exc:
                logger.warning("memory provider %r could not be created: %s", name, exc)
                return
        else:
            outcome = call_bounded(build, self.hook_timeout, name=name)
            if not outcome.finished:
                logger.warning(
                    "memory provider %r (%s) was not created within %.1fs "
                    "(memory.hook_timeout); continuing without it",
                    name,
                    source,
                    self.hook_timeout,
                )
                return
            if outcome.error is not None:
                logger.warning(
                    "memory provider %r (%s) could not be created: %s: %s",
                    name,
                    source,
                    type(outcome.error).__name__,
                    outcome.error,
                )
                return
            provider, own_name, available, reason = outcome.value
        if own_name != name:
            logger.warning(
                "memory provider registered as %r by %s calls itself %r; refused",
                name,
                source,
                own_name,
            )
            return
        if not available:
            logger.warning(
                "memory provider %r is not available: %s", name, reason or "not configured"
            )
            return
        self.add_provider(provider, local=local)

    # ----------------------------------------------------------------- registration
    def add_provider(self, provider: MemoryProvider, *, local: bool | None = None) -> bool:
        """Register ``provider``; returns whether it was accepted.

        :param local: whether ``provider`` is a local tier: called on the caller's thread,
            with no time bound, and its recall not filtered. ``None`` (the default) decides
            from where the provider's class is defined: in one of this project's packages
            (`LOCAL_TIER_PACKAGES`) it is local, anywhere else external. Pass ``True`` only
            for a provider you wrote and trust to be fast; never inferred from the name.

        Refused, with a warning: a non-provider, a duplicate name, a second external
        provider, a provider whose hook signatures do not match the specs, or one whose
        ``name`` or `get_tool_schemas` raises or hangs (it then does not take the external
        slot). Names ``builtin`` and ``sessions`` never take the external slot.
        :raises ManagerClosedError: after `shutdown_all`.
        """
        self._check_open("add_provider")
        if not isinstance(cast(object, provider), MemoryProvider):  # untyped callers
            logger.warning("Rejected %r: memory providers must subclass MemoryProvider", provider)
            return False
        if local is None:
            local = type(provider).__module__.split(".")[0] in LOCAL_TIER_PACKAGES

        def describe() -> tuple[str, list[ToolSchema]]:
            name = provider.name
            if not isinstance(name, str) or not name:
                raise TypeError(f"name must be a non-empty string, got {name!r}")
            schemas = provider.get_tool_schemas()
            return name, [s for s in (_normalise_schema(s) for s in schemas) if s]

        if local:
            try:
                name, schemas = describe()
            except (Exception, SystemExit) as exc:
                logger.warning("Rejected memory provider %r: %s", provider, exc)
                return False
        else:
            outcome = call_bounded(describe, self.hook_timeout, name="describe")
            if not outcome.finished or outcome.error is not None:
                why = (
                    f"name/get_tool_schemas() did not answer within {self.hook_timeout:.1f}s"
                    if not outcome.finished
                    else f"get_tool_schemas() failed: {outcome.error}"
                )
                logger.warning("Rejected memory provider %s: %s", type(provider).__name__, why)
                return False
            name, schemas = outcome.value
        with self._lock:
            if self.get_provider(name) is not None:
                logger.warning(
                    "Rejected memory provider %r: a provider of that name is registered", name
                )
                return False
            if not local and name not in BUILTIN_TIER_NAMES:
                current = self.external_provider
                if current is not None:
                    logger.warning(
                        "Rejected memory provider '%s' — external provider '%s' is already "
                        "registered. Only one external memory provider is allowed at a time. "
                        "Configure which one via memory.provider in config.yaml.",
                        name,
                        _name(current),
                    )
                    return False
            try:
                self._validator.register(provider, name=f"{name}-{id(provider)}")
            except (pluggy.PluginValidationError, ValueError) as exc:
                logger.warning("Rejected memory provider %r: %s", name, exc)
                return False
            slot = _Slot(provider, name, bool(local))
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
            self._slots.append(slot)
            for schema in schemas:
                tool = schema["name"]
                owner = self._tool_routes.get(tool)
                if owner is not None:
                    logger.warning(
                        "Memory tool %r of provider %r is ignored: provider %r already provides it",
                        tool,
                        name,
                        owner.name,
                    )
                    continue
                self._tool_routes[tool] = slot
                self._tool_schemas.append(schema)
        return True

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

    def _external_slot(self) -> _Slot | None:
        with self._lock:
            return next(
                (s for s in self._slots if not s.local and s.name not in BUILTIN_TIER_NAMES), None
            )

    def _snapshot(self) -> list[_Slot]:
        with self._lock:
            return list(self._slots)

    # ----------------------------------------------------------------- session lifecycle
    def initialize_all(self, session_id: str, **kwargs: Any) -> None:
        """Initialise every provider for ``session_id``.

        Keyword context is passed to each provider whose `initialize` accepts it:
        ``hermes_home`` (injected if missing), ``platform`` (default ``"cli"``),
        ``agent_context`` (``"primary"``, or ``"subagent"`` etc. for agents whose turns
        must not be recorded), ``model`` (the chat model's name, e.g. ``"gpt-4o"``; the
        archive stores it on the session row), ``session_title``, ``user_id``,
        ``parent_session_id``. Strings other than identifiers are scrubbed of secrets.
        ``prior_user_turns`` (an int, for a resumed session: the user turns it already had)
        is not passed on; it resumes the review nudge count (`review_due`).
        """
        with self._using("initialize_all"):
            self._review.nudge.hydrate(kwargs.pop("prior_user_turns", 0))
            self.session_id = session_id
            home = self.hermes_home if self.hermes_home is not None else resolve_home()
            kwargs.setdefault("hermes_home", str(home))
            kwargs.setdefault("platform", "cli")
            kwargs = self._scrub_kwargs(kwargs)
            for slot in self._snapshot():
                self._call(
                    slot,
                    "initialize",
                    session_id,
                    kind="write",
                    bound=self.hook_timeout,
                    level=logging.WARNING,
                    **kwargs,
                )

    def build_system_prompt(self) -> str:
        """Non-empty `system_prompt_block`s joined by a blank line."""
        with self._using("build_system_prompt"):
            blocks = []
            for slot in self._snapshot():
                block = self._call(
                    slot,
                    "system_prompt_block",
                    default="",
                    kind="read",
                    bound=self.hook_timeout,
                    level=logging.WARNING,
                )
                if isinstance(block, str) and block.strip():
                    blocks.append(block)
            return "\n\n".join(blocks)

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """Tell providers a user turn begins (extras passed where accepted).

        Also cancels a background review still running (`run_review`; without waiting) and
        counts the turn for `review_due`.
        """
        with self._using("on_turn_start"):
            self._review.on_turn_start(memory_tool=self.has_tool(MEMORY_TOOL_NAME))
            message = self._scrub(message)
            kwargs = self._scrub_kwargs(kwargs)
            for slot in self._snapshot():
                self._call(
                    slot,
                    "on_turn_start",
                    turn_number,
                    message,
                    kind="write",
                    bound=self.hook_timeout,
                    **kwargs,
                )

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """A real session boundary: wait (bounded) for queued syncs, then tell every provider.

        ``messages`` is the session's transcript in the message format of `sync_all`.
        """
        with self._using("on_session_end"):
            if not self._drain(self.shutdown_timeout):
                logger.warning(
                    "session end: queued memory syncs still running after %.1fs",
                    self.shutdown_timeout,
                )
            messages = self._scrub(messages)
            for slot in self._snapshot():
                self._call(
                    slot,
                    "on_session_end",
                    messages,
                    kind="write",
                    bound=self.shutdown_timeout,
                    level=logging.WARNING,
                )

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        """The agent continues under ``new_session_id`` (no-op for an empty id).

        ``prior_user_turns`` (int) resumes the review nudge count as `initialize_all` does;
        without it a ``reset`` starts the count at 0 and a continuation keeps it.
        """
        with self._using("on_session_switch"):
            if not new_session_id:
                return
            prior = kwargs.pop("prior_user_turns", None)
            if prior is not None or reset:
                self._review.nudge.hydrate(prior or 0)
            # Turns queued for the old session must land before providers close or end it.
            if not self._drain(self.shutdown_timeout):
                logger.warning(
                    "session switch: queued memory syncs still running after %.1fs",
                    self.shutdown_timeout,
                )
            self.session_id = new_session_id
            extra: dict[str, Any] = {
                "parent_session_id": parent_session_id,
                "reset": reset,
                **self._scrub_kwargs(kwargs),
            }
            if rewound:
                extra["rewound"] = True
            for slot in self._snapshot():
                self._call(
                    slot,
                    "on_session_switch",
                    new_session_id,
                    kind="write",
                    bound=self.hook_timeout,
                    **extra,
                )

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Text providers want kept through compression, joined by a blank line.

        ``messages`` are the turns about to be compressed (message format of `sync_all`).
        The external provider's text passes the same threat filter as its recall.
        """
        with self._using("on_pre_compress"):
            messages = self._scrub(messages)
            parts = []
            for slot in self._snapshot():
                text = self._call(
                    slot,
                    "on_pre_compress",
                    messages,
                    default="",
                    kind="read",
                    bound=self.hook_timeout,
                )
                if not isinstance(text, str):
                    continue
                if not slot.local:
                    text = _filter_untrusted(
                        text, slot.name, self.recall_max_chars, self.recall_max_lines
                    )
                if text.strip():
                    parts.append(text)
            return "\n\n".join(parts)

    def on_delegation(
        self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any
    ) -> None:
        """A subagent finished a delegated task."""
        with self._using("on_delegation"):
            task, result = self._scrub((task, result))
            kwargs = self._scrub_kwargs(kwargs)
            for slot in self._snapshot():
                self._call(
                    slot,
                    "on_delegation",
                    task,
                    result,
                    kind="write",
                    bound=self.hook_timeout,
                    child_session_id=child_session_id,
                    **kwargs,
                )

    def shutdown_all(self) -> None:
        """Drain queued syncs (bounded), then shut providers down in reverse order.

        Idempotent: a second call does nothing. Afterwards every method that would call a
        provider raises `ManagerClosedError`. Bounded by about twice ``shutdown_timeout``
        whatever the external provider does.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._review.cancel()
            # Calls that passed the closed check before us finish first (bounded).
            deadline = time.monotonic() + self.shutdown_timeout
            while self._active:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._idle.wait(remaining)
        _live_managers.discard(self)
        if not self._drain(self.shutdown_timeout):
            logger.warning(
                "memory shutdown: %d queued call(s) abandoned after %.1fs",
                sum(w.pending for w in self._workers),
                self.shutdown_timeout,
            )
        for slot in reversed(self._snapshot()):
            self._call(
                slot,
                "shutdown",
                kind="write",
                bound=self.shutdown_timeout,
                level=logging.WARNING,
            )
        for worker in self._workers:
            worker.close(0)

    # ----------------------------------------------------------------- recall
    def prefetch_all(self, query: str, *, session_id: str = "") -> str:
        """Recall for the coming turn, fenced in a ``<memory-context>`` block (``""`` if none).

        Local tiers run inline. The external provider runs on its worker and is waited for
        at most ``prefetch_timeout``; while a previous call of it is still stuck it is
        skipped. Its recall is untrusted text: capped in size first, then dropped where the
        threat scanner flags it (scope ``context``). Trivial prompts ("ok", "thanks", slash
        commands) recall nothing.
        """
        with self._using("prefetch_all"):
            if is_trivial_prompt(query):
                return ""
            query = self._scrub(query)
            session_id = session_id or self.session_id
            parts: list[str] = []
            for slot in self._snapshot():
                text = self._call(
                    slot,
                    "prefetch",
                    query,
                    default="",
                    kind="read",
                    bound=self.prefetch_timeout,
                    session_id=session_id,
                )
                if not isinstance(text, str):
                    continue
                if not slot.local:
                    text = _filter_untrusted(
                        text, slot.name, self.recall_max_chars, self.recall_max_lines
                    )
                if text.strip():
                    parts.append(text.strip())
            return build_memory_context_block("\n\n".join(parts))

    def queue_prefetch_all(self, query: str, *, session_id: str = "") -> None:
        """Warm every provider's next recall in the background (never waits)."""
        with self._using("queue_prefetch_all"):
            if not self._slots or not query or not query.strip():
                return
            query = self._scrub(query)
            session_id = session_id or self.session_id
            local = [s for s in self._snapshot() if s.local]
            for slot in self._snapshot():
                if not slot.local:
                    self._call(
                        slot,
                        "queue_prefetch",
                        query,
                        kind="read",
                        bound=None,
                        session_id=session_id,
                    )

            if local:

                def task() -> None:
                    for slot in local:
                        self._call_inline(
                            slot, "queue_prefetch", (query,), {"session_id": session_id}
                        )

                self._local_worker.submit(task)

    def sync_all(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> None:
        """Persist a finished turn in every provider.

        The local tiers store it on the caller's thread: when this returns, the session
        archive has committed the turn. The external provider gets it on its own worker
        (never waited for; see `flush_pending`). ``messages`` — the turn's messages in the
        OpenAI chat format, tool calls and results included (see the message format in
        ``docs/reference/messages.md``) — and any extra keyword reach only providers whose
        ``sync_turn`` accepts them. Skipped when there is no provider or the user content is
        blank. Recall blocks (``<memory-context>``) are stripped first.
        :raises ManagerClosedError: after `shutdown_all` (the turn is not stored anywhere).
        """
        with self._using("sync_all"):
            if not self._slots or not user_content or not user_content.strip():
                return
            # A host may pass the API copy of the user message, recall block included:
            # storing it would feed recalled text back into memory as if the user said it.
            user_content = _strip_recall(user_content)
            if messages is not None:
                messages = [_strip_recall_message(m) for m in messages]
            user_content, assistant_content, messages = self._scrub(
                (user_content, assistant_content, messages)
            )
            extra: dict[str, Any] = {
                "session_id": session_id or self.session_id,
                **self._scrub_kwargs(kwargs),
            }
            if messages is not None:
                extra["messages"] = messages
            for slot in self._snapshot():
                self._call(
                    slot,
                    "sync_turn",
                    user_content,
                    assistant_content,
                    kind="write",
                    bound=None,
                    level=logging.WARNING,
                    **extra,
                )

    def flush_pending(self, timeout: float | None = None) -> bool:
        """Block until queued syncs and warm-ups finished; False on timeout.

        ``timeout`` (seconds) is shared by all providers; ``None`` waits without a bound.
        """
        with self._using("flush_pending"):
            return self._drain(timeout)

    # ----------------------------------------------------------------- tools
    def get_all_tool_schemas(self) -> list[ToolSchema]:
        """Every provider's tool schemas, first registration winning a name.

        Bare function schemas (``name``, ``description``, ``parameters``); convert them with
        `hermes_memory_core.to_openai_tools` or `hermes_memory_core.to_anthropic_tools`.
        """
        with self._lock:
            return [dict(s) for s in self._tool_schemas]

    def get_all_tool_names(self) -> list[str]:
        """Names of every routed tool."""
        with self._lock:
            return list(self._tool_routes)

    def has_tool(self, name: str) -> bool:
        """Whether some provider handles tool ``name``."""
        with self._lock:
            return name in self._tool_routes

    def handle_tool_call(
        self, name: str, args: Mapping[str, Any] | str | None, **kwargs: Any
    ) -> str:
        """Run tool ``name`` and return its JSON string.

        ``args`` is the model's argument object (or its raw JSON string). An unknown tool,
        arguments that are not an object, a provider that raises, or an external provider
        that does not answer within ``tool_timeout`` all come back as ``{"error": ...}``.
        Successful builtin ``memory`` writes are mirrored to the external provider through
        `on_memory_write`.
        """
        with self._using("handle_tool_call"):
            with self._lock:
                slot = self._tool_routes.get(name)
            if slot is None:
                return tool_error(f"No memory provider handles tool '{name}'")
            if name == MEMORY_TOOL_NAME:
                self._review.on_memory_call()
            if args is None:
                args = {}
            if isinstance(args, str):
                try:
                    args = json.loads(args) if args.strip() else {}
                except ValueError:
                    return tool_error(f"Arguments for tool '{name}' are not valid JSON")
            if not isinstance(cast(object, args), Mapping):
                return tool_error(f"Arguments for tool '{name}' must be a JSON object")
            clean_args = self._scrub_tool_args(slot, dict(args))
            outcome = self._invoke(
                slot,
                "handle_tool_call",
                (name, clean_args),
                self._scrub_kwargs(kwargs),
                kind="read",
                bound=self.tool_timeout,
                level=logging.WARNING,
                pass_all_kwargs=True,
            )
            if outcome.status == "failed":
                return tool_error(f"Memory tool '{name}' failed: {outcome.error}")
            if outcome.status == "timeout":
                return tool_error(
                    f"Memory tool '{name}' did not answer within {self.tool_timeout:g}s "
                    f"(memory.tool_timeout); provider '{slot.name}' is skipped until it does"
                )
            if outcome.status != "ok":
                return tool_error(
                    f"Memory tool '{name}' is unavailable: provider '{slot.name}' is not "
                    "responding (a previous call is still running)"
                )
            result = outcome.value
            if not isinstance(result, str):  # a provider may break its contract
                try:
                    result = json.dumps(result, ensure_ascii=False, default=str)
                except (TypeError, ValueError):
                    return tool_error(f"Memory tool '{name}' returned a non-JSON result")
            if name == MEMORY_TOOL_NAME and slot.name == "builtin":
                if clean_args != args:
                    result = _note_redaction(result)
                self.notify_memory_tool_write(result, clean_args)
            return result

    def notify_memory_tool_write(self, tool_result: str, tool_args: Mapping[str, Any]) -> None:
        """Mirror a builtin ``memory`` tool result to the external provider, if it succeeded."""
        with self._using("notify_memory_tool_write"):
            if self._external_slot() is None:
                return
            try:
                payload = json.loads(tool_result)
            except ValueError:
                return
            if (
                not isinstance(payload, dict)
                or payload.get("success") is not True
                or payload.get("staged")
            ):
                return
            target = str(payload.get("target") or tool_args.get("target") or "memory")
            for action, content, metadata in _memory_writes(payload, tool_args):
                self.on_memory_write(action, target, content, metadata)

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        """Tell external providers about a builtin memory write (bounded by ``hook_timeout``)."""
        with self._using("on_memory_write"):
            action, target, content, metadata = self._scrub((action, target, content, metadata))
            meta = dict(metadata or {})
            meta.setdefault("session_id", self.session_id)
            for slot in self._snapshot():
                if slot.local or slot.name in BUILTIN_TIER_NAMES:
                    continue
                self._call(
                    slot,
                    "on_memory_write",
                    action,
                    target,
                    content,
                    kind="write",
                    bound=self.hook_timeout,
                    metadata=meta,
                )

    # ----------------------------------------------------------------- review nudge
    @property
    def review_due(self) -> bool:
        """True once ``nudge_interval`` user turns (`on_turn_start` calls) passed without a
        ``memory`` tool call; cleared by a memory call or by `run_review`. Logic and
        details: `hermes_memory_core.review`."""
        return self._review.nudge.due

    def review_prompt(self) -> str:
        """The request a review appends to the conversation (`review.REVIEW_PROMPT`)."""
        return _review.REVIEW_PROMPT

    def review_messages(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``messages`` (recall blocks stripped) plus the review prompt, for a host that
        runs the review with its own model loop; it should pass ``origin=
        "background_review"`` to `handle_tool_call` for the memory calls that come back."""
        return _review.review_messages(messages)

    def run_review(
        self,
        llm: _review.ReviewModel | Callable[..., Any],
        messages: list[dict[str, Any]],
        *,
        background: bool = True,
    ) -> _review.ReviewHandle:
        """Run the background memory review with the host's model callable.

        Call it after the reply was delivered (typically when `review_due`). ``llm(messages,
        tools)`` is a `hermes_memory_core.review.ReviewModel`; its ``memory`` calls run
        through `handle_tool_call` with ``origin="background_review"`` (the builtin store
        applies adds and stages replace/remove for a person). Bounded by
        ``review_max_turns`` model calls and ``review_timeout`` seconds; the next
        `on_turn_start` (or `shutdown_all`) cancels it. ``background=False`` runs it on the
        calling thread. Returns a `ReviewHandle` (``wait()``, ``cancel()``, ``result``).
        :raises ManagerClosedError: after `shutdown_all`.
        """
        with self._using("run_review"):
            schemas = [s for s in self.get_all_tool_schemas() if s.get("name") == MEMORY_TOOL_NAME]
        from hermes_memory_core.toolformats import to_openai_tools

        def execute(name: str, args: dict[str, Any]) -> str:
            return self.handle_tool_call(name, args, origin=_review.BACKGROUND_REVIEW_ORIGIN)

        return self._review.start(
            llm, messages, tools=to_openai_tools(schemas), execute=execute, background=background
        )

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
        """Wait for every worker with one shared deadline; a stuck one is marked degraded."""
        deadline = None if timeout is None else time.monotonic() + timeout
        drained = True
        external = {id(s.worker): s for s in self._snapshot() if s.worker is not None}
        for worker in list(self._workers):
            slot = external.get(id(worker))
            if slot is not None and slot.degraded():
                drained = drained and worker.pending == 0
                continue
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
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

    def _scrub(self, value: Any) -> Any:
        return scrub_secrets(value) if self.scrub else value

    def _scrub_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Scrub every keyword value except identifiers (session ids, ``hermes_home``)."""
        if not self.scrub or not kwargs:
            return dict(kwargs)
        keep = {k: v for k, v in kwargs.items() if k in _IDENTIFIER_KEYS}
        rest = {k: v for k, v in kwargs.items() if k not in _IDENTIFIER_KEYS}
        return {**scrub_secrets(rest), **keep}

    def _scrub_tool_args(self, slot: _Slot, args: dict[str, Any]) -> dict[str, Any]:
        """Scrub tool arguments, except the local builtin tier's ``old_text`` locators.

        A locator only finds an entry and is never stored; scrubbing it would make an entry
        that already holds a credential (a hand edit) impossible to replace or remove.
        """
        clean: dict[str, Any] = self._scrub(args)
        if not self.scrub or not slot.local or slot.name != "builtin":
            return clean
        if "old_text" in args:
            clean["old_text"] = args["old_text"]
        ops, clean_ops = args.get("operations"), clean.get("operations")
        if isinstance(ops, list) and isinstance(clean_ops, list):
            for op, clean_op in zip(ops, clean_ops, strict=True):
                if isinstance(op, Mapping) and isinstance(clean_op, dict) and "old_text" in op:
                    clean_op["old_text"] = op["old_text"]
        return clean

    def _call(
        self,
        slot: _Slot,
        hook: str,
        *args: Any,
        default: Any = None,
        kind: Kind,
        bound: float | None,
        level: int = logging.DEBUG,
        **kwargs: Any,
    ) -> Any:
        """Call one hook of one provider; anything but a result gives ``default``."""
        outcome = self._invoke(slot, hook, args, kwargs, kind=kind, bound=bound, level=level)
        return outcome.value if outcome.status == "ok" else default

    def _invoke(
        self,
        slot: _Slot,
        hook: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        kind: Kind,
        bound: float | None,
        level: int = logging.DEBUG,
        pass_all_kwargs: bool = False,
    ) -> _Outcome:
        """Call ``hook`` on one provider: inline for a local tier, else on its worker.

        ``bound`` is how long to wait for an external provider (``None``: queue and return).
        While the provider is degraded, ``kind="read"`` calls are skipped and ``"write"``
        calls are queued without waiting.
        """
        if slot.local:
            return self._call_inline(
                slot, hook, args, kwargs, level=level, pass_all=pass_all_kwargs
            )
        worker = slot.worker
        assert worker is not None
        with self._lock:
            degraded = slot.degraded()
            if degraded:
                slot.skipped += 1
        if degraded and kind == "read":
            logger.debug("memory provider %r skipped for %s: still stuck", slot.name, hook)
            return _Outcome("skipped")
        method: Callable[..., Any] | None = getattr(slot.provider, hook, None)
        if method is None:
            return _Outcome("absent")
        call_kwargs = dict(kwargs) if pass_all_kwargs else accepted_kwargs(method, kwargs)
        handle = worker.call(
            lambda: _run_hook(method, args, call_kwargs, slot.name, hook, level),
            label=f"{slot.name}.{hook}",
        )
        if handle is None:
            logger.warning(
                "memory provider %r: %s not queued (its worker is closed)", slot.name, hook
            )
            return _Outcome("skipped")
        if bound is None or degraded:
            return _Outcome("queued")
        if not handle.wait(bound):
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
            return _Outcome("timeout")
        if handle.state == "dropped":
            return _Outcome("skipped")
        result = handle.result
        if isinstance(result, _Failure):
            return _Outcome("failed", error=result.error)
        return _Outcome("ok", result)

    def _call_inline(
        self,
        slot: _Slot,
        hook: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        level: int = logging.DEBUG,
        pass_all: bool = False,
    ) -> _Outcome:
        """A local tier's hook on the caller's thread (SystemExit contained, Ctrl-C not)."""
        method: Callable[..., Any] | None = getattr(slot.provider, hook, None)
        if method is None:
            return _Outcome("absent")
        try:
            call_kwargs = dict(kwargs) if pass_all else accepted_kwargs(method, kwargs)
            return _Outcome("ok", method(*args, **call_kwargs))
        except (Exception, SystemExit) as exc:
            logger.log(
                level,
                "memory provider %r failed in %s: %s: %s",
                slot.name,
                hook,
                type(exc).__name__,
                exc,
                exc_info=True,
            )
            return _Outcome("failed", error=exc)


def _finite_positive(value: Any) -> bool:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return False
    return 0 < number < float("inf")


_REDACTION_NOTE = (
    "Credentials in the content were replaced by [redacted] before saving: memory is shown "
    "in every future prompt, so secrets are never stored there."
)


def _note_redaction(result: str) -> str:
    """Tell the model that the saved text differs from what it sent (secrets masked)."""
    try:
        payload = json.loads(result)
    except ValueError:
        return result
    if not isinstance(payload, dict) or payload.get("success") is not True:
        return result
    payload["redacted"] = _REDACTION_NOTE
    return json.dumps(payload, ensure_ascii=False)


def _filter_untrusted(text: str, provider_name: str, max_chars: int, max_lines: int) -> str:
    """An external provider's text, capped in size first, then threat-filtered as a whole.

    The cap comes first so that the scanner never works on more text than can reach the
    prompt; the filter judges the whole text, so a payload split across lines is caught.
    """
    if not text:
        return text
    capped = cap_recall(text, max_chars=max_chars, max_lines=max_lines)
    kept, threats = filter_recall_threats(capped)
    if threats:
        logger.warning(
            "memory provider %r recalled text flagged as %s; %s not injected",
            provider_name,
            ", ".join(threats),
            "it was" if not kept else "those lines were",
        )
    return kept


def _strip_recall(text: str) -> str:
    return sanitize_context(text) if "<memory-context" in text.lower() else text


def _strip_recall_message(message: Any) -> Any:
    if isinstance(message, Mapping) and isinstance(message.get("content"), str):
        content = message["content"]
        cleaned = _strip_recall(content)
        if cleaned != content:
            return {**message, "content": cleaned}
    return message


def _memory_writes(
    payload: Mapping[str, Any], args: Mapping[str, Any]
) -> list[tuple[str, str, dict[str, Any]]]:
    """The (action, content, metadata) writes a successful memory tool result stands for."""
    operations = args.get("operations")
    if isinstance(operations, list) and operations:
        replaced = _index_map(payload.get("replaced_entries"))
        removed = _index_map(payload.get("removed_entries"))
        writes = []
        for index, op in enumerate(operations, start=1):
            if isinstance(op, Mapping):
                previous = replaced.get(index) or removed.get(index)
                writes.extend(_one_write(op, previous))
        return writes
    previous = payload.get("replaced_entry") or payload.get("removed_entry")
    return _one_write(args, previous if isinstance(previous, str) else None)


def _one_write(
    op: Mapping[str, Any], previous: str | None
) -> list[tuple[str, str, dict[str, Any]]]:
    action = op.get("action")
    if action not in ("add", "replace", "remove"):
        return []
    content = op.get("content")
    if content is None:
        content = op.get("new_text")
    metadata: dict[str, Any] = {}
    if op.get("old_text") is not None:
        metadata["old_text"] = op.get("old_text")
    if previous is not None:
        metadata["previous_content"] = previous
    if action == "remove":
        content = previous if previous is not None else op.get("old_text")
    if not isinstance(content, str):
        return []
    return [(action, content.strip(), metadata)]


def _index_map(value: Any) -> dict[int, str]:
    if not isinstance(value, Mapping):
        return {}
    result = {}
    for key, text in value.items():
        try:
            result[int(key)] = str(text)
        except (TypeError, ValueError):
            continue
    return result


def _normalise_schema(schema: Any) -> ToolSchema | None:
    if not isinstance(schema, Mapping):
        return None
    if schema.get("type") == "function" and isinstance(schema.get("function"), Mapping):
        schema = schema["function"]
    name = schema.get("name")
    if not isinstance(name, str) or not name:
        return None
    return dict(schema)


def _name(provider: MemoryProvider) -> str:
    try:
        return str(provider.name)
    except Exception:
        return "?"
