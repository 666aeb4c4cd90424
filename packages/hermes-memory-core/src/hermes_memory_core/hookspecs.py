# mypy: disable-error-code="empty-body"
"""The hook specifications of hermes-memory, written for plugin authors.

There are two kinds of hooks.

*Registration* (`RegistrationSpec`): a plugin module named by an entry point in the
``hermes_memory`` group implements ``register_memory_providers(register)`` with `hookimpl`.

*Provider lifecycle* (`ProviderSpec`): the methods a `MemoryProvider` may override. You do not
mark them: subclass `MemoryProvider` and override plain methods; the manager registers each
provider instance with pluggy, which checks at registration that your methods take no
argument the spec does not know (a typo such as ``def prefetch(self, qeury)`` is refused with
a clear error). The manager then calls your methods directly, passing each optional argument
only if your signature accepts it (by name or through ``**kwargs``): an implementation may
accept fewer arguments than the spec names, so specs can grow without breaking providers.

Every lifecycle hook is called for one provider at a time inside its own try/except. An
exception is logged and costs only that provider's contribution; it never hides another
provider and never reaches the agent's turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from collections.abc import Callable

    from hermes_memory_core.provider import RecallStatus

__all__ = ["PROJECT_NAME", "ProviderSpec", "RegistrationSpec", "hookimpl", "hookspec"]

#: The pluggy project name and the entry-point group.
PROJECT_NAME = "hermes_memory"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


class RegistrationSpec:
    """Hooks a plugin module implements (module-level functions marked with `hookimpl`)."""

    @hookspec
    def register_memory_providers(self, register: Callable[..., None]) -> None:
        """Register the memory providers this plugin offers.

        Called once when plugins are loaded, before any session starts.

        :param register: call ``register(factory, name="mem0")`` once per provider. ``factory``
            is a `MemoryProvider` subclass or any callable returning an instance. The manager
            calls it as ``factory(hermes_home=Path, config=dict)``, passing each keyword only
            if the factory's signature accepts it (``config`` is the whole parsed
            ``config.yaml``). Keep construction cheap: no network, no blocking I/O.

        A plugin whose module fails to import, or whose hook raises, is recorded with its
        error and skipped; the other plugins still load.

        Example::

            from hermes_memory_core import hookimpl

            @hookimpl
            def register_memory_providers(register):
                register(NotesProvider, name="notes")
        """


class ProviderSpec:
    """The provider lifecycle. Override these as plain methods of `MemoryProvider`."""

    # ----------------------------------------------------------------- session lifecycle
    @hookspec
    def initialize(self, session_id: str) -> None:
        """Prepare the provider for a session.

        Called by `MemoryManager.initialize_all` at session start, before the system prompt
        is built. Extra context arrives as keyword arguments of your ``initialize``:
        ``hermes_home`` (always), ``platform`` (``"cli"``, ``"telegram"``…), and where known
        ``agent_context`` (``"primary"``, ``"subagent"``, ``"cron"``, ``"flush"``: do not write
        for anything but ``"primary"``), ``user_id``, ``parent_session_id``, ``session_title``.
        Declare ``**kwargs`` to receive all of them.

        :param session_id: the session about to start.

        Cost of a slow implementation: it delays the session start, so never wait on the
        network here; open connections on a background thread.
        """

    @hookspec
    def system_prompt_block(self) -> str:
        """Static text for the system prompt (``""`` for none).

        Called once per session when the prompt is built; the result must not change within
        the session (providers' prompt text is part of the prefix cache). Dynamic recall
        belongs in `prefetch`.
        """

    @hookspec
    def on_turn_start(self, turn_number: int, message: str) -> None:
        """A user turn begins.

        :param turn_number: 1-based count of user turns in this session.
        :param message: the user's message.

        Keyword extras may include ``remaining_tokens``, ``model``, ``platform``; declare
        ``**kwargs`` to receive them. Called inline before `prefetch`: keep it fast.
        """

    @hookspec
    def prefetch(self, query: str, session_id: str) -> str:
        """Recall context for the coming turn.

        :param query: the user's message, secrets already scrubbed.
        :param session_id: the current session.
        :return: raw recalled text (``""`` for nothing). The manager fences it in a
            ``<memory-context>`` block; do not wrap it yourself.

        Called before every non-trivial turn. An external provider's call is bounded by
        ``memory.prefetch_timeout`` (default 8 s): past it the turn goes on without you, and
        you are skipped until the stuck call returns. Return what is ready; warm caches in
        `queue_prefetch`.
        """

    @hookspec
    def queue_prefetch(self, query: str, session_id: str) -> None:
        """Start warming the recall for the next turn.

        :param query: the text the next recall will likely be about (secrets scrubbed).
        :param session_id: the current session.

        Runs on the manager's background worker after a turn, in order with `sync_turn`;
        a slow implementation delays later syncs, never the turn.
        """

    @hookspec
    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        session_id: str,
        messages: list[dict[str, Any]] | None,
    ) -> None:
        """Persist a finished turn.

        :param user_content: what the user said (secrets scrubbed).
        :param assistant_content: the assistant's final reply (secrets scrubbed).
        :param session_id: the current session.
        :param messages: the turn's OpenAI-style messages including tool calls and results;
            passed only if your ``sync_turn`` declares ``messages`` (or ``**kwargs``).

        Runs on the manager's single background worker: turn N is synced before N+1. A slow
        implementation delays later syncs and `MemoryManager.flush_pending`, never the turn.
        """

    @hookspec
    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """A real session boundary: exit, reset or expiry (not every turn).

        :param messages: the whole transcript. Flush buffered writes here.
        """

    @hookspec
    def on_session_switch(
        self,
        new_session_id: str,
        parent_session_id: str,
        reset: bool,
        rewound: bool,
    ) -> None:
        """The agent continues under another session id.

        :param new_session_id: the id now in use (never empty).
        :param parent_session_id: the session it continues from, or ``""``.
        :param reset: True when a new conversation starts (``/new``, ``/reset``).
        :param rewound: True when the same id continues with a truncated transcript (``/undo``).
        """

    @hookspec
    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Text to carry through context compression.

        :param messages: the messages about to be summarised away.
        :return: text appended to the compression prompt (``""`` for none).
        """

    @hookspec
    def on_delegation(self, task: str, result: str, child_session_id: str) -> None:
        """A subagent finished a task delegated by this agent.

        :param task: what the subagent was asked.
        :param result: its final answer (secrets scrubbed).
        :param child_session_id: the subagent's session id, or ``""``.
        """

    @hookspec
    def shutdown(self) -> None:
        """Release resources: flush queues (bounded), close clients.

        Called once, in reverse registration order, after the manager drained its worker.
        """

    # ----------------------------------------------------------------- tools and writes
    @hookspec
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """Tools this provider exposes, in OpenAI function format.

        :return: ``[{"name": ..., "description": ..., "parameters": {...}}]`` (``[]`` for a
            context-only provider). The first provider to claim a name owns it.
        """

    @hookspec
    def handle_tool_call(self, tool_name: str, args: dict[str, Any]) -> str:
        """Run one of your tools.

        :param tool_name: one of the names from `get_tool_schemas`.
        :param args: the model's arguments (secrets scrubbed).
        :return: a JSON string for the model. Report bad input as ``{"error": ...}`` rather
            than raising; an exception becomes ``{"error": "Memory tool '<name>' failed: ..."}``.
        """

    @hookspec
    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None
    ) -> None:
        """Mirror of a successful builtin ``memory`` tool write (external providers only).

        :param action: ``"add"``, ``"replace"`` or ``"remove"``.
        :param target: ``"memory"`` (agent notes) or ``"user"`` (user profile).
        :param content: the new entry (for remove: the removed entry).
        :param metadata: ``old_text``, ``previous_content``, ``session_id`` where known;
            passed only if your method declares ``metadata``.

        Called from the agent's turn: hand slow work to a background queue.
        """

    # ----------------------------------------------------------------- introspection
    @hookspec
    def recall_status(self) -> RecallStatus | None:
        """What the last `prefetch` recalled (for a status line), or None."""

    @hookspec
    def get_config_schema(self) -> list[dict[str, Any]]:
        """Describe your configuration for setup tools and ``hermes-memory provider use``.

        :return: field dicts with ``key``, ``description``, and optionally ``secret``,
            ``required``, ``default``, ``choices``, ``type``, ``env_var``.
        """

    @hookspec
    def backup_paths(self) -> list[str]:
        """Absolute paths outside the home directory that a backup should include."""


#: Names of the provider lifecycle hooks, in the order they are documented.
PROVIDER_HOOK_NAMES: tuple[str, ...] = tuple(
    name
    for name, value in vars(ProviderSpec).items()
    if callable(value) and not name.startswith("_")
)
