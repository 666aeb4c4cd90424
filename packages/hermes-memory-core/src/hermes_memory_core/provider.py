"""The `MemoryProvider` base class that every memory backend subclasses.

A provider author overrides plain methods; the four abstract ones are required, every other
method is a documented no-op. Nothing here needs pluggy: the `MemoryManager` finds overridden
methods itself (see `hookspecs` for the full contract of each hook).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = ["BUILTIN_TIER_NAMES", "MemoryProvider", "RecallStatus", "ToolSchema"]

#: Providers with these names form the builtin tier (curated store and session archive);
#: every other name is an external provider, of which the manager accepts at most one.
BUILTIN_TIER_NAMES: frozenset[str] = frozenset({"builtin", "sessions"})

#: An OpenAI function-calling schema: ``{"name", "description", "parameters"}``.
ToolSchema = dict[str, Any]


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
    need. Every hook is called by the manager on its own, inside a try/except: an exception
    you raise is logged and costs only your own contribution for that call. Register the
    class from your plugin module::

        from hermes_memory_core import MemoryProvider, hookimpl

        class NotesProvider(MemoryProvider):
            name = "notes"

            def is_available(self) -> bool:
                return True

            def initialize(self, session_id: str, **kwargs: Any) -> None:
                self.session_id = session_id

            def get_tool_schemas(self) -> list[dict[str, Any]]:
                return []

        @hookimpl
        def register_memory_providers(register):
            register(NotesProvider, name="notes")

    The method signatures and their contracts are documented in `hermes_memory_core.hookspecs`.
    """

    #: Version of the `on_pre_compress` contract this provider implements.
    pre_compress_checkpoint_api_version: ClassVar[int] = 1

    # ----------------------------------------------------------------- required members
    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Unique provider name (``"builtin"`` and ``"sessions"`` are the builtin tier).

        A plain class attribute (``name = "notes"``) satisfies this property.
        """

    @abc.abstractmethod
    def is_available(self) -> bool:
        """Whether the provider can work here: configuration and dependencies only.

        Must not touch the network; it is called while listing plugins.
        """

    @abc.abstractmethod
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Prepare for a session. See `hookspecs.ProviderSpec.initialize`."""

    @abc.abstractmethod
    def get_tool_schemas(self) -> list[ToolSchema]:
        """Tools this provider exposes to the model (``[]`` for context-only providers)."""

    # ----------------------------------------------------------------- optional hooks
    def unavailable_reason(self) -> str:
        """A user-facing hint for why `is_available()` is False (``""`` when unknown)."""
        return ""

    def initialize_for_inspection(self, session_id: str, **kwargs: Any) -> None:
        """Initialise for a side-effect-free inspection; defaults to `initialize`."""
        self.initialize(session_id, **kwargs)

    def system_prompt_block(self) -> str:
        """Static text for the system prompt; see `hookspecs.ProviderSpec.system_prompt_block`."""
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Recall for the coming turn; see `hookspecs.ProviderSpec.prefetch`."""
        return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Warm the next turn's recall; see `hookspecs.ProviderSpec.queue_prefetch`."""

    def recall_status(self) -> RecallStatus | None:
        """What the last `prefetch` recalled, or None to stay silent."""
        return None

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        """Persist a finished turn; see `hookspecs.ProviderSpec.sync_turn`."""

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run one of this provider's tools and return a JSON string."""
        raise NotImplementedError(f"Provider {self.name} does not handle tool {tool_name}")

    def shutdown(self) -> None:
        """Release resources; see `hookspecs.ProviderSpec.shutdown`."""

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """A user turn begins; see `hookspecs.ProviderSpec.on_turn_start`."""

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """A real session boundary; see `hookspecs.ProviderSpec.on_session_end`."""

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        """The agent moved to another session id; see `hookspecs.ProviderSpec.on_session_switch`."""

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Text to keep through context compression (``""`` for none)."""
        return ""

    def on_memory_write(
        self,
        action: str,
        target: str,
        content: str,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Mirror of a successful builtin `memory` tool write (add/replace/remove)."""

    def on_delegation(
        self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any
    ) -> None:
        """A subagent finished a delegated task; see `hookspecs.ProviderSpec.on_delegation`."""

    def get_config_schema(self) -> list[dict[str, Any]]:
        """Describe configuration fields (key, description, secret, required, default, env_var…)."""
        return []

    def backup_paths(self) -> list[str]:
        """Absolute paths outside the home directory that a backup should include."""
        return []

    def __repr__(self) -> str:
        try:
            label = self.name
        except Exception:  # a broken `name` must not break logging
            label = "?"
        return f"<{type(self).__name__} name={label!r}>"
