"""`MemoryProvider`: the one provider contract of hermes-memory.

A provider author subclasses `MemoryProvider`, implements the four abstract members and
overrides any optional hook (a documented no-op here). The hook reference
(``docs/reference/hooks.md``) is generated from this class; pluggy is used only to find
plugins (`hermes_memory_core._hookspecs`), never to call providers.

How the manager calls a hook: one provider at a time, inside its own try/except (an
exception costs only that provider's contribution), passing each keyword argument only if
your signature accepts it by name or through ``**kwargs`` — so an implementation may accept
fewer arguments than the base method names, and the contract can grow without breaking you.
A method that names an argument the base method does not know (a typo such as
``def prefetch(self, qeury)``) is refused when the provider is added.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

if TYPE_CHECKING:
    from hermes_memory_core._events import MemoryWrite
    from hermes_memory_core.kit._settings import Settings

__all__ = [
    "BUILTIN_TIER_NAMES",
    "PROVIDER_HOOK_NAMES",
    "MemoryProvider",
    "RecallStatus",
    "Tier",
    "ToolSchema",
]

#: The provider names of this project's local tiers (curated store and session archive).
#: Only this project's distributions may register them (see `hermes_memory_core.plugins`).
BUILTIN_TIER_NAMES: frozenset[str] = frozenset({"builtin", "sessions"})

#: An OpenAI function-calling schema: ``{"name", "description", "parameters"}``.
ToolSchema = dict[str, Any]

#: Where a provider runs: ``"local"`` (a local tier, called inline) or ``"external"``.
Tier = Literal["local", "external"]

#: Listener the manager binds to receive a provider's `MemoryWrite` events.
WriteListener = Callable[["MemoryWrite"], None]


@dataclass(frozen=True)
class RecallStatus:
    """What the last `prefetch` recalled, for a one-line status display.

    :param provider_label: human name of the provider ("mem0", "Honcho").
    :param count: number of memories recalled; ``<= 0`` means "some, uncounted".
    :param glyph: a short prefix for status lines.
    """

    provider_label: str
    count: int
    glyph: str = "🧠"


class MemoryProvider(abc.ABC):
    """Base class for a memory backend plugged into `MemoryManager`.

    Subclass it, implement the four abstract members, and override any optional hook you
    need. Register the class from your plugin's entry-point module — by its dotted name, so
    that your module (and the SDK it imports) loads only when the provider is used::

        # my_memory/provider.py
        from hermes_memory_core import MemoryProvider

        class NotesProvider(MemoryProvider):
            name = "notes"

            def is_available(self) -> bool:
                return True

            def initialize(self, session_id: str, **kwargs: Any) -> None:
                self.session_id = session_id

            def get_tool_schemas(self) -> list[dict[str, Any]]:
                return []

        # my_memory/plugin.py  (entry point ``notes = "my_memory.plugin"``)
        from hermes_memory_core import hookimpl

        @hookimpl
        def register_memory_providers(register):
            register("my_memory.provider:NotesProvider", name="notes")

    A remote service gets retries, a circuit breaker, a health record, spooled writes and
    typed settings from `hermes_memory_core.kit`.
    """

    #: Declared tier. ``"external"`` providers get a worker thread and time bounds; a
    #: ``"local"`` declaration is honoured only for a trusted origin (one of this project's
    #: distributions, or ``MemoryManager.add_provider(..., local=True)``).
    tier: ClassVar[Tier] = "external"

    #: Tool-argument names that locate an existing entry rather than store text (a local
    #: tier's ``old_text``). They reach a trusted local tier unscrubbed, so an entry that
    #: already holds a credential can still be found; everything else is scrubbed.
    tool_locator_args: ClassVar[frozenset[str]] = frozenset()

    #: Typed settings (optional): a `hermes_memory_core.kit.Settings` subclass whose
    #: ``section`` names this provider's key in ``config.yaml``. Core validates that section
    #: once, when it creates the provider (`configure`), and hands the result over as
    #: `settings` before `is_available`/`initialize`; invalid settings make the provider
    #: unavailable with one uniform reason (`settings_error`), and `get_config_schema` is
    #: generated from the same class. Annotate ``settings: YourSettings`` in your class so
    #: that a type checker knows the attributes. ``None``: the provider reads its own
    #: configuration (the constructor's ``config``), as before.
    settings_class: ClassVar[type[Settings] | None] = None

    # ----------------------------------------------------------------- required members
    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Unique provider name (``"builtin"`` and ``"sessions"`` are the local tiers).

        A plain class attribute (``name = "notes"``) satisfies this property.
        """

    @abc.abstractmethod
    def is_available(self) -> bool:
        """Whether the provider can work here: configuration and dependencies only.

        Must not touch the network; it is called while listing plugins.
        """

    @abc.abstractmethod
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Prepare the provider for a session.

        Called by `MemoryManager.initialize_all` at session start, before the system prompt
        is built. Extra context arrives as keyword arguments: ``hermes_home`` (always),
        ``platform`` (``"cli"``, ``"telegram"``…), and where known ``agent_context``
        (``"primary"``, ``"subagent"``, ``"cron"``, ``"flush"``: do not write for anything
        but ``"primary"``), ``user_id``, ``parent_session_id``, ``session_title``. An
        external provider also gets ``curated_entries``: the entries the local tiers already
        show the model in every prompt (`curated_entries`), so its recall can leave them out.

        :param session_id: the session about to start.

        Never wait on the network here: it delays the session start. Open connections on a
        background thread.
        """

    @abc.abstractmethod
    def get_tool_schemas(self) -> list[ToolSchema]:
        """Tools this provider exposes, in OpenAI function format.

        :return: ``[{"name": ..., "description": ..., "parameters": {...}}]`` (``[]`` for a
            context-only provider). The first provider to claim a name owns it.
        """

    # ----------------------------------------------------------------- typed settings
    def configure(
        self, config: Mapping[str, Any] | None, *, environ: Mapping[str, str] | None = None
    ) -> None:
        """Validate this provider's section of ``config.yaml`` with `settings_class` and keep
        the result as `settings` (or the reason as `settings_error`).

        Declare ``settings_class = YourSettings`` (a `hermes_memory_core.kit.Settings`
        subclass whose ``section`` names your key) to opt in; without it this is a no-op and
        the provider reads its configuration itself, as before. Core calls it right after
        creating the provider, before `is_available`, with the one parse of ``config.yaml``;
        a provider built directly validates lazily, on first use of `settings`.

        :param config: the whole parsed ``config.yaml`` (``None``: no file).
        :param environ: the environment to read (``None``: ``os.environ``).

        Never raises for bad values: they become `settings_error`.
        """
        if self.settings_class is None:
            return
        from hermes_memory_core.kit._settings import resolve_settings

        settings, error = resolve_settings(self.settings_class, config, environ=environ)
        self.__dict__["_hermes_settings"] = (settings, error)

    def _settings_source(self) -> tuple[Mapping[str, Any] | None, Mapping[str, str] | None]:
        """What `settings` validates when core did not call `configure`: ``(config,
        environ)`` (default: no ``config.yaml``, the process environment)."""
        return None, None

    def _resolved_settings(self) -> tuple[Settings, str]:
        if "_hermes_settings" not in self.__dict__:
            if self.settings_class is None:
                raise AttributeError(f"{type(self).__name__} declares no settings_class")
            config, environ = self._settings_source()
            self.configure(config, environ=environ)
        return self.__dict__["_hermes_settings"]  # type: ignore[no-any-return]

    @property
    def settings(self) -> Settings:
        """The validated, immutable settings (an instance of `settings_class`).

        When `settings_error` is set they hold the defaults, and the provider is
        unavailable: core never initialises it. Read-only: a provider keeps any settings
        of its own under another name.

        :raises AttributeError: the class declares no `settings_class`.
        """
        return self._resolved_settings()[0]

    @property
    def settings_error(self) -> str:
        """``"configuration error: <section>.<key> ..."`` when the settings are invalid,
        else ``""`` (always ``""`` without `settings_class`)."""
        return self._resolved_settings()[1] if self.settings_class is not None else ""

    # ----------------------------------------------------------------- optional hooks
    def unavailable_reason(self) -> str:
        """A user-facing hint for why `is_available()` is False (``""`` when unknown).

        With `settings_class` the default reports invalid settings (`settings_error`), else
        what `Settings.missing` says; an override should start with
        ``if reason := super().unavailable_reason(): return reason``.
        """
        if self.settings_class is None:
            return ""
        return self.settings_error or self.settings.missing()

    def system_prompt_block(self) -> str:
        """Static text for the system prompt (``""`` for none).

        Called once per session when the prompt is built; the result must not change within
        the session (the prompt is part of the prefix cache). Dynamic recall belongs in
        `prefetch`.
        """
        return ""

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """A user turn begins.

        :param turn_number: 1-based count of user turns in this session.
        :param message: the user's message (secrets scrubbed).

        Keyword extras may include ``remaining_tokens``, ``model``, ``platform``. Called
        inline before `prefetch`: keep it fast.
        """

    def prefetch(self, query: str, *, session_id: str = "") -> str:
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
        return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Start warming the recall for the next turn.

        :param query: the text the next recall will likely be about (secrets scrubbed).
        :param session_id: the current session.

        Runs on the provider's worker after a turn, in order with `sync_turn`; a slow
        implementation delays later syncs, never the turn.
        """

    def recall_status(self) -> RecallStatus | None:
        """What the last `prefetch` recalled (for a status line), or None to stay silent."""
        return None

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        """Persist a finished turn.

        :param user_content: what the user said (secrets scrubbed).
        :param assistant_content: the assistant's final reply (secrets scrubbed).
        :param session_id: the current session.
        :param messages: the turn's OpenAI-style messages including tool calls and results;
            passed only if your ``sync_turn`` declares ``messages`` (or ``**kwargs``).

        An external provider's sync runs on its own worker: turn N is synced before N+1. A
        slow implementation delays later syncs and `MemoryManager.flush_pending`, never the
        turn.
        """

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run one of your tools.

        :param tool_name: one of the names from `get_tool_schemas`.
        :param args: the model's arguments (secrets scrubbed).
        :return: a JSON string for the model. Report bad input as ``{"error": ...}`` rather
            than raising; an exception becomes ``{"error": "Memory tool '<name>' failed: ..."}``.
        """
        raise NotImplementedError(f"Provider {self.name} does not handle tool {tool_name}")

    def on_memory_write(
        self,
        action: str,
        target: str,
        content: str,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Mirror of a curated-memory write made by a local tier (external providers only).

        :param action: ``"add"``, ``"replace"`` or ``"remove"``.
        :param target: ``"memory"`` (agent notes) or ``"user"`` (user profile).
        :param content: the new entry (for remove: the removed entry).
        :param metadata: ``old_text``, ``previous_content``, ``session_id`` where known;
            passed only if your method declares ``metadata``.

        Called from the agent's turn: hand slow work to a background queue.
        """

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """A real session boundary: exit, reset or expiry (not every turn).

        :param messages: the whole transcript. Flush buffered writes here.
        """

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        """The agent continues under another session id.

        :param new_session_id: the id now in use (never empty).
        :param parent_session_id: the session it continues from, or ``""``.
        :param reset: True when a new conversation starts (``/new``, ``/reset``).
        :param rewound: True when the same id continues with a truncated transcript (``/undo``).
        """

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Text to carry through context compression.

        :param messages: the messages about to be summarised away.
        :return: text appended to the compression prompt (``""`` for none).
        """
        return ""

    def on_delegation(
        self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any
    ) -> None:
        """A subagent finished a task delegated by this agent.

        :param task: what the subagent was asked.
        :param result: its final answer (secrets scrubbed).
        :param child_session_id: the subagent's session id, or ``""``.
        """

    def shutdown(self) -> None:
        """Release resources: flush queues (bounded), close clients.

        Called once, in reverse registration order, after the manager drained the workers.
        """

    def get_config_schema(self) -> list[dict[str, Any]]:
        """Describe your configuration for setup tools and ``hermes-memory provider use``.

        :return: field dicts with ``key``, ``description``, and optionally ``secret``,
            ``required``, ``default``, ``choices``, ``type``, ``env_var``. The default
            describes `settings_class` (``[]`` without one).
        """
        return self.settings_class.schema() if self.settings_class is not None else []

    def backup_paths(self) -> list[str]:
        """Absolute paths outside the home directory that a backup should include."""
        return []

    def curated_entries(self) -> list[str]:
        """The curated entries this tier shows the model in every prompt (local tiers).

        The manager hands them to the external provider's `initialize` as
        ``curated_entries``: this is how an adapter learns what not to recall twice,
        without reading another tier's files.
        """
        return []

    # ----------------------------------------------------------------- events (not hooks)
    def bind_write_listener(self, listener: WriteListener | None) -> None:
        """Called by the manager: where `emit_memory_write` delivers events (None unbinds)."""
        self.__dict__["_hermes_write_listener"] = listener

    def emit_memory_write(self, event: MemoryWrite) -> None:
        """Report a curated-memory write this provider made (a local tier's tool call).

        The manager forwards it to the external provider's `on_memory_write`. Without a
        bound listener (a provider used on its own) the event is dropped.
        """
        listener = self.__dict__.get("_hermes_write_listener")
        if listener is not None:
            listener(event)

    def __repr__(self) -> str:
        try:
            label = self.name
        except Exception:  # a broken `name` must not break logging
            label = "?"
        return f"<{type(self).__name__} name={label!r}>"


#: The optional lifecycle hooks (plus ``initialize``), in documentation order: what
#: `overridden_hooks` reports and what the hook reference documents.
PROVIDER_HOOK_NAMES: tuple[str, ...] = (
    "initialize",
    "system_prompt_block",
    "on_turn_start",
    "prefetch",
    "queue_prefetch",
    "sync_turn",
    "on_session_end",
    "on_session_switch",
    "on_pre_compress",
    "on_delegation",
    "shutdown",
    "get_tool_schemas",
    "handle_tool_call",
    "on_memory_write",
    "recall_status",
    "get_config_schema",
    "backup_paths",
    "curated_entries",
)
