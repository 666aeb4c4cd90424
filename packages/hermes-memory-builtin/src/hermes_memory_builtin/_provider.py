"""`BuiltinMemoryProvider`: the curated store plugged into `MemoryManager` as ``"builtin"``.

It contributes the frozen MEMORY/USER snapshot to the system prompt and the ``memory`` tool.
Each entry its tool writes is emitted as a `hermes_memory_core.MemoryWrite` event
(`emit_memory_write`), which the manager forwards to the external provider; nothing here
calls other providers. Its ``memory:`` keys are typed settings (`BuiltinSettings`), validated
by core like every adapter's.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_memory_builtin._events import tool_writes
from hermes_memory_builtin._guidance import memory_guidance
from hermes_memory_builtin._settings import BuiltinSettings
from hermes_memory_builtin._store import TARGETS, MemoryStore
from hermes_memory_builtin._tool import memory_schema, memory_tool
from hermes_memory_core import MemoryProvider, ToolSchema, tool_result
from hermes_memory_core.kit import SettingsError

__all__ = ["BuiltinMemoryProvider"]

logger = logging.getLogger(__name__)


class BuiltinMemoryProvider(MemoryProvider):
    """The curated MEMORY.md / USER.md store as a memory provider named ``"builtin"``.

    :param store: an existing `MemoryStore` to serve; by default one is created for
        ``<hermes_home>/memories`` with the limits and switches of ``config``.
    :param hermes_home: the Hermes home directory; defaults to the ``hermes_home`` passed to
        `initialize`, then to ``$HERMES_HOME`` / ``~/.hermes``.
    :param config: the parsed ``config.yaml``; its ``memory:`` keys are `BuiltinSettings`
        (``memory_enabled``, ``user_profile_enabled``, ``memory_char_limit``,
        ``user_char_limit``, ``write_approval``); ``memory.backend`` picks the storage.
    :raises SettingsError: (a `ValueError`) one of those settings has an unusable value;
        the message names the key.
    """

    name = "builtin"
    settings_class = BuiltinSettings
    settings: BuiltinSettings  # for the type checker only
    #: A local tier (trusted because the class comes from this project's distribution).
    tier = "local"
    #: ``old_text`` only finds an entry; it reaches the store unscrubbed.
    tool_locator_args = frozenset({"old_text"})

    def __init__(
        self,
        store: MemoryStore | None = None,
        *,
        hermes_home: str | Path | None = None,
        config: dict[str, Any] | None = None,
    ) -> None:
        self._config = config or {}
        # Validated once from ``config`` here; core validates again from the same parse of
        # config.yaml (`configure`) before anything else runs.
        if self.settings_error:
            raise SettingsError(self.settings_error.removeprefix("configuration error: "))
        settings = self.settings
        self.memory_enabled = settings.memory_enabled
        self.user_profile_enabled = settings.user_profile_enabled
        #: The approval gate (``memory.write_approval``): stage every ``memory`` tool write.
        self.write_approval = settings.write_approval
        self._hermes_home = Path(hermes_home).expanduser() if hermes_home is not None else None
        self._store_given = store is not None
        if store is not None:
            store.memory_enabled = self.memory_enabled
            store.user_profile_enabled = self.user_profile_enabled
        else:
            # Validates the limits now (a clear ValueError) without touching the disk.
            store = self._make_store(self._hermes_home)
        self._store: MemoryStore = store
        self._session_id = ""

    def _make_store(self, home: Path | None) -> MemoryStore:
        memory_section = self._config.get("memory") or {}
        # The same limits and switches whichever storage holds the text.
        options: dict[str, Any] = {
            "memory_char_limit": self.settings.memory_char_limit,
            "user_char_limit": self.settings.user_char_limit,
            "memory_enabled": self.memory_enabled,
            "user_profile_enabled": self.user_profile_enabled,
        }
        if str(memory_section.get("backend") or "files").strip().lower() == "postgres":
            # memory.backend: postgres -- the same store rules on PostgreSQL rows (optional
            # package hermes-memory-postgres, found by entry point: it depends on this one).
            from hermes_memory_core import load_backend

            store: MemoryStore = load_backend("memory", "postgres")(self._config, **options)
            return store
        return MemoryStore(home / "memories" if home is not None else None, **options)

    def _settings_source(self) -> tuple[Mapping[str, Any] | None, Mapping[str, str] | None]:
        return self._config, None

    @property
    def store(self) -> MemoryStore:
        """The `MemoryStore` this provider serves."""
        return self._store

    # ------------------------------------------------------------------ required members
    def is_available(self) -> bool:
        """True when at least one of MEMORY.md / USER.md is enabled (no I/O)."""
        return self.memory_enabled or self.user_profile_enabled

    def unavailable_reason(self) -> str:
        """Why the provider is off, for status displays."""
        if self.is_available():
            return ""
        return "memory.memory_enabled and memory.user_profile_enabled are both false"

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Load both files and freeze the session's snapshot.

        ``hermes_home`` from the manager is used when neither a store nor a home was given
        to the constructor. ``agent_context`` other than ``"primary"`` is recorded as the
        write origin of the sidecar metadata.
        """
        self._session_id = session_id
        home = kwargs.get("hermes_home")
        if not self._store_given and self._hermes_home is None and home:
            self._hermes_home = Path(str(home)).expanduser()
            self._store = self._make_store(self._hermes_home)
        context = kwargs.get("agent_context")
        if isinstance(context, str) and context and context != "primary":
            self._store.write_origin = context
        self._store.load_from_disk()

    def get_tool_schemas(self) -> list[ToolSchema]:
        """``[memory schema]`` narrowed to the enabled targets; ``[]`` when both are off."""
        enabled = self._enabled_targets()
        if not enabled:
            return []
        return [memory_schema(enabled)]

    def _enabled_targets(self) -> tuple[str, ...]:
        flags = {"memory": self.memory_enabled, "user": self.user_profile_enabled}
        return tuple(target for target in TARGETS if flags[target])

    # ------------------------------------------------------------------ optional hooks
    def system_prompt_block(self) -> str:
        """The memory guidance, the frozen MEMORY block, then the USER block, joined by a
        blank line.

        The guidance (`hermes_memory_builtin.MEMORY_GUIDANCE`) is static text that tells the model
        what to save; it is there whenever the ``memory`` tool is, even while both files are
        empty, and is the narrower user-profile guidance when only USER.md is on.
        """
        blocks: list[str | None] = [memory_guidance(self.memory_enabled, self.user_profile_enabled)]
        blocks += [
            self._store.format_for_system_prompt(target) for target in self._enabled_targets()
        ]
        return "\n\n".join(block for block in blocks if block)

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Answer a ``memory`` tool call with the tool's JSON result.

        ``origin`` (keyword, set by the host — e.g. ``MemoryManager.run_review`` passes
        ``"background_review"``; never read from ``args``) is the write origin: an
        unattended background review may add but its replace/remove steps are staged.
        With ``memory.write_approval`` every write is staged.
        """
        if tool_name != "memory":
            return memory_tool_error(f"Provider builtin does not handle tool '{tool_name}'")
        origin = kwargs.get("origin")
        result = memory_tool(
            args,
            self._store,
            origin=origin if isinstance(origin, str) and origin else None,
            write_approval=self.write_approval,
        )
        for event in tool_writes(result, args):  # staged writes emit nothing
            self.emit_memory_write(event)
        return result

    def curated_entries(self) -> list[str]:
        """The entries of the enabled files (MEMORY.md, USER.md), read through the store."""
        return [
            entry for target in self._enabled_targets() for entry in self._store.entries(target)
        ]

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """Reset the per-turn consolidation-failure counter."""
        self._store.start_turn()


def memory_tool_error(message: str) -> str:
    """A failure answer in the memory tool's shape."""
    return tool_result({"success": False, "error": message})
