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

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

from hermes_memory_core import _assembly, _lifetime
from hermes_memory_core import review as _review
from hermes_memory_core._dispatch import Dispatcher, Kind, Outcome, Slot, check_hook_signatures
from hermes_memory_core._egress import (
    EgressPolicy,
    fence,
    note_redaction,
    strip_recall,
    strip_recall_message,
)
from hermes_memory_core._routing import ToolRoutes, normalise_schema
from hermes_memory_core.config import load_config, resolve_home
from hermes_memory_core.provider import MemoryProvider, ToolSchema
from hermes_memory_core.toolresult import tool_error
from hermes_memory_core.trivial import is_trivial_prompt
from hermes_memory_core.worker import SerialWorker, call_bounded

if TYPE_CHECKING:
    from hermes_memory_core.config import HermesConfig
    from hermes_memory_core.events import MemoryWrite
    from hermes_memory_core.plugins import PluginRegistry

__all__ = ["LOCAL_TIER_PACKAGES", "ManagerClosedError", "MemoryManager"]

logger = logging.getLogger(__name__)

DEFAULT_PREFETCH_TIMEOUT = 8.0
DEFAULT_HOOK_TIMEOUT = 5.0
DEFAULT_TOOL_TIMEOUT = 30.0
DEFAULT_SHUTDOWN_TIMEOUT = 5.0
DEFAULT_MAX_QUEUED = 256
#: Same values as `hermes_memory_core.fencing` (not imported: it loads the threat scanner).
DEFAULT_RECALL_MAX_CHARS = 8000
DEFAULT_RECALL_MAX_LINES = 200
MEMORY_TOOL_NAME = "memory"
LOCAL_TIER_PACKAGES = _assembly.LOCAL_TIER_PACKAGES


class ManagerClosedError(RuntimeError):
    """A `MemoryManager` was used after `MemoryManager.shutdown_all`.

    Nothing was handed to any provider; the call had no effect. Build a new manager (or
    keep the old one open) to go on.
    """


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
        self._review = _review.ReviewCoordinator(
            nudge_interval=nudge_interval,
            review_timeout=review_timeout,
            review_max_turns=review_max_turns,
        )
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
        _lifetime.register_for_exit(self, self._workers)

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
        from hermes_memory_core.plugins import get_registry

        config = load_config(home)
        for key in (
            "prefetch_timeout", "hook_timeout", "tool_timeout", "shutdown_timeout",
            "recall_max_chars", "recall_max_lines", "nudge_interval", "review_timeout",
            "review_max_turns",
        ):  # fmt: skip
            options.setdefault(key, getattr(config.memory, key))
        manager = cls(hermes_home=config.home, **options)
        manager.config = config
        _assembly.populate(manager, registry if registry is not None else get_registry(), config)
        return manager

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
            problem = check_hook_signatures(provider)
            if problem is not None:
                logger.warning("Rejected memory provider %r: %s", name, problem)
                return False
            slot = Slot(provider, name, local)
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
            return name, [s for s in (normalise_schema(s) for s in schemas) if s]

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
            kwargs = self._egress.scrub_kwargs(kwargs)
            self._fan_out("initialize", session_id, kind="write", level=logging.WARNING,
                          local=True, **kwargs)  # fmt: skip
            curated = [
                entry
                for _, entries in self._fan_out("curated_entries", kind="read", local=True)
                if isinstance(entries, list)
                for entry in entries
                if isinstance(entry, str)
            ]
            kwargs["curated_entries"] = tuple(self._egress.scrub(curated))
            self._fan_out("initialize", session_id, kind="write", level=logging.WARNING,
                          local=False, **kwargs)  # fmt: skip

    def build_system_prompt(self) -> str:
        """Non-empty `system_prompt_block`s joined by a blank line."""
        with self._using("build_system_prompt"):
            blocks = self._fan_out("system_prompt_block", kind="read", level=logging.WARNING)
            return "\n\n".join(b for _, b in blocks if isinstance(b, str) and b.strip())

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """Tell providers a user turn begins (extras passed where accepted).

        Also cancels a background review still running (`run_review`; without waiting) and
        counts the turn for `review_due`.
        """
        with self._using("on_turn_start"):
            self._review.on_turn_start(memory_tool=self.has_tool(MEMORY_TOOL_NAME))
            message = self._egress.scrub(message)
            kwargs = self._egress.scrub_kwargs(kwargs)
            self._fan_out("on_turn_start", turn_number, message, kind="write", **kwargs)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """A real session boundary: wait (bounded) for queued syncs, then tell every provider.

        ``messages`` is the session's transcript in the message format of `sync_all`.
        """
        with self._using("on_session_end"):
            self._drain_or_warn("session end")
            messages = self._egress.scrub(messages)
            self._fan_out(
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
            self._drain_or_warn("session switch")
            self.session_id = new_session_id
            extra: dict[str, Any] = {"parent_session_id": parent_session_id, "reset": reset}
            extra.update(self._egress.scrub_kwargs(kwargs))
            if rewound:
                extra["rewound"] = True
            self._fan_out("on_session_switch", new_session_id, kind="write", **extra)

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Text providers want kept through compression, joined by a blank line.

        ``messages`` are the turns about to be compressed (message format of `sync_all`).
        The external provider's text passes the same threat filter as its recall.
        """
        with self._using("on_pre_compress"):
            messages = self._egress.scrub(messages)
            texts = self._fan_out("on_pre_compress", messages, kind="read")
            return "\n\n".join(t for t in self._trusted(texts) if t.strip())

    def on_delegation(
        self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any
    ) -> None:
        """A subagent finished a delegated task."""
        with self._using("on_delegation"):
            task, result = self._egress.scrub((task, result))
            kwargs = self._egress.scrub_kwargs(kwargs)
            kwargs["child_session_id"] = child_session_id
            self._fan_out("on_delegation", task, result, kind="write", **kwargs)

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
        _lifetime.forget(self)
        if not self._drain(self.shutdown_timeout):
            logger.warning(
                "memory shutdown: %d queued call(s) abandoned after %.1fs",
                sum(w.pending for w in self._workers),
                self.shutdown_timeout,
            )
        for slot in reversed(self._snapshot()):
            self._dispatch.invoke(
                slot, "shutdown", (), {}, kind="write", bound=self.shutdown_timeout,
                level=logging.WARNING,
            )  # fmt: skip
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
            texts = self._fan_out(
                "prefetch",
                self._egress.scrub(query),
                kind="read",
                bound=self.prefetch_timeout,
                session_id=session_id or self.session_id,
            )
            parts = [t.strip() for t in self._trusted(texts) if t.strip()]
            return fence("\n\n".join(parts))

    def queue_prefetch_all(self, query: str, *, session_id: str = "") -> None:
        """Warm every provider's next recall in the background (never waits)."""
        with self._using("queue_prefetch_all"):
            if not self._slots or not query or not query.strip():
                return
            query = self._egress.scrub(query)
            kwargs = {"session_id": session_id or self.session_id}
            slots = self._snapshot()
            for slot in slots:
                if not slot.local:
                    self._dispatch.invoke(
                        slot, "queue_prefetch", (query,), kwargs, kind="read", bound=None
                    )
            local = [s for s in slots if s.local]
            if local:

                def task() -> None:
                    for slot in local:
                        self._dispatch.call_inline(slot, "queue_prefetch", (query,), kwargs)

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
            user_content = strip_recall(user_content)
            if messages is not None:
                messages = [strip_recall_message(m) for m in messages]
            user_content, assistant_content, messages = self._egress.scrub(
                (user_content, assistant_content, messages)
            )
            extra: dict[str, Any] = {"session_id": session_id or self.session_id}
            extra.update(self._egress.scrub_kwargs(kwargs))
            if messages is not None:
                extra["messages"] = messages
            self._fan_out(
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
            return self._tools.schemas()

    def get_all_tool_names(self) -> list[str]:
        """Names of every routed tool."""
        with self._lock:
            return self._tools.names()

    def has_tool(self, name: str) -> bool:
        """Whether some provider handles tool ``name``."""
        with self._lock:
            return self._tools.route(name) is not None

    def handle_tool_call(
        self, name: str, args: Mapping[str, Any] | str | None, **kwargs: Any
    ) -> str:
        """Run tool ``name`` and return its JSON string.

        ``args`` is the model's argument object (or its raw JSON string). An unknown tool,
        arguments that are not an object, a provider that raises, or an external provider
        that does not answer within ``tool_timeout`` all come back as ``{"error": ...}``.
        Curated-memory writes the tool made reach the external provider's `on_memory_write`
        (the local tier emits them as `hermes_memory_core.MemoryWrite` events).
        """
        with self._using("handle_tool_call"):
            with self._lock:
                slot = self._tools.route(name)
            if slot is None:
                return tool_error(f"No memory provider handles tool '{name}'")
            if name == MEMORY_TOOL_NAME:
                self._review.on_memory_call()
            parsed = _parse_args(name, args)
            if isinstance(parsed, str):
                return parsed
            clean_args = self._egress.scrub_tool_args(slot, parsed)
            outcome = self._dispatch.invoke(
                slot,
                "handle_tool_call",
                (name, clean_args),
                self._egress.scrub_kwargs(kwargs),
                kind="read",
                bound=self.tool_timeout,
                level=logging.WARNING,
                pass_all=True,
            )
            result = _tool_answer(name, slot, outcome, self.tool_timeout)
            if slot.local and outcome.status == "ok" and clean_args != parsed:
                result = note_redaction(result)
            return result

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

    def _trusted(self, answers: list[tuple[Slot, Any]]) -> Iterator[str]:
        """String answers, an external provider's capped and threat-filtered."""
        for slot, text in answers:
            if isinstance(text, str):
                yield text if slot.local else self._egress.filter_untrusted(text, slot.name)


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


def _parse_args(name: str, args: Mapping[str, Any] | str | None) -> dict[str, Any] | str:
    """The model's arguments as a dict, or the ``{"error": ...}`` answer for bad ones."""
    if args is None:
        return {}
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return tool_error(f"Arguments for tool '{name}' are not valid JSON")
    if not isinstance(cast(object, args), Mapping):
        return tool_error(f"Arguments for tool '{name}' must be a JSON object")
    return dict(cast(Mapping[str, Any], args))


def _tool_answer(name: str, slot: Slot, outcome: Outcome, tool_timeout: float) -> str:
    """The JSON string a tool call answers with, whatever the outcome."""
    if outcome.status == "failed":
        return tool_error(f"Memory tool '{name}' failed: {outcome.error}")
    if outcome.status == "timeout":
        return tool_error(
            f"Memory tool '{name}' did not answer within {tool_timeout:g}s "
            f"(memory.tool_timeout); provider '{slot.name}' is skipped until it does"
        )
    if outcome.status != "ok":
        return tool_error(
            f"Memory tool '{name}' is unavailable: provider '{slot.name}' is not "
            "responding (a previous call is still running)"
        )
    result = outcome.value
    if isinstance(result, str):
        return result
    try:  # a provider may break its contract
        return json.dumps(result, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return tool_error(f"Memory tool '{name}' returned a non-JSON result")


def _name(provider: MemoryProvider) -> str:
    try:
        return str(provider.name)
    except Exception:
        return "?"
