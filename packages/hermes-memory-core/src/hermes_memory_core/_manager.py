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

import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory_core import _assembly, _lifetime
from hermes_memory_core._egress import fence, plain_str, strip_recall, strip_recall_message
from hermes_memory_core._manager_base import (
    ManagerClosedError,
)
from hermes_memory_core._manager_tools import MEMORY_TOOL_NAME, ManagerTools
from hermes_memory_core.config import load_config, resolve_home

if TYPE_CHECKING:
    from hermes_memory_core.plugins import PluginRegistry

__all__ = ["ManagerClosedError", "MemoryManager"]

logger = logging.getLogger("hermes_memory_core.manager")


class MemoryManager(ManagerTools):
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
        10, 0 disables; ``memory.nudge_interval``). See `hermes_memory_review`.
    :param review_timeout: seconds a `run_review` may take (default 120;
        ``memory.review_timeout``).
    :param review_max_turns: model calls a `run_review` may make (default 8;
        ``memory.review_max_turns``).
    :raises ValueError: a timeout that is not a positive number, or ``max_queued`` < 1.
    """

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
        is not passed on; it resumes the review nudge count (`review_due`). ``cwd`` (the
        session's working directory) also starts `context_for_path`.
        """
        with self._using("initialize_all"):
            self._review.nudge.hydrate(kwargs.pop("prior_user_turns", 0))
            self._project_context.start(kwargs.get("cwd"))
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

    def context_for_path(self, path: str | os.PathLike[str]) -> str | None:
        """Project context files (``AGENTS.md`` …) near a path a tool just touched.

        Returns text to append to that tool's result, once per directory and file per
        session, or ``None``. Needs ``hermes-memory-context`` and ``cwd=`` at
        `initialize_all`; the session's own directories are covered by the system prompt.
        """
        with self._using("context_for_path"):
            return self._project_context.discover(path)

    def build_system_prompt(self) -> str:
        """Non-empty `system_prompt_block`s joined by a blank line.

        An external provider's block is untrusted text, treated as its recall is: capped,
        threat-filtered and fenced in a ``<memory-context>`` block marked as background,
        never as instructions. The local tiers' blocks are used as they are.
        """
        with self._using("build_system_prompt"):
            blocks = self._fan_out("system_prompt_block", kind="read", level=logging.WARNING)
            parts = []
            for slot, block in blocks:
                if not isinstance(block, str):
                    continue
                text = plain_str(block)
                if not text.strip():
                    continue
                if not slot.local:
                    text = fence(self._egress.filter_untrusted(text, slot.name))
                if text.strip():
                    parts.append(text)
            return "\n\n".join(parts)

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
            self._project_context.start(kwargs.get("cwd"))  # files are shown once per session
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
            self._cancel_review()
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
            from hermes_memory_core._trivial import is_trivial_prompt

            if is_trivial_prompt(query):
                return ""
            # One bound for the whole step: the provider's answer and its threat scan.
            deadline = time.monotonic() + self.prefetch_timeout
            texts = self._fan_out(
                "prefetch",
                self._egress.scrub(query),
                kind="read",
                bound=self.prefetch_timeout,
                session_id=session_id or self.session_id,
            )
            parts = [t.strip() for t in self._trusted(texts, deadline=deadline) if t.strip()]
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
