"""`BuiltinSettings`: the builtin tier's keys of the ``memory:`` section, declared once.

Core validates them with the rest of ``config.yaml`` and hands them to
`BuiltinMemoryProvider` as ``provider.settings``, the path every adapter takes; the provider
no longer re-reads the section itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from hermes_memory_builtin._store import DEFAULT_MEMORY_CHAR_LIMIT, DEFAULT_USER_CHAR_LIMIT
from hermes_memory_core.kit import Settings, setting

__all__ = ["BuiltinSettings"]

_B = TypeVar("_B", bound="BuiltinSettings")


@dataclass(frozen=True)
class BuiltinSettings(Settings):
    """``memory.memory_enabled``, ``user_profile_enabled``, the two character budgets and
    ``write_approval``."""

    section = "memory"

    memory_enabled: bool = setting(
        True, "Keep MEMORY.md (the agent's notes) and show it in the prompt."
    )
    user_profile_enabled: bool = setting(
        True, "Keep USER.md (the user profile) and show it in the prompt."
    )
    memory_char_limit: int = setting(
        DEFAULT_MEMORY_CHAR_LIMIT, "Write budget of MEMORY.md in characters.", minimum=1
    )
    user_char_limit: int = setting(
        DEFAULT_USER_CHAR_LIMIT, "Write budget of USER.md in characters.", minimum=1
    )
    write_approval: bool = setting(
        False,
        "Stage every memory tool write for a person to apply or reject "
        "(hermes-memory memory pending).",
    )

    @classmethod
    def load(
        cls: type[_B],
        section: Mapping[str, Any] | None,
        *,
        environ: Mapping[str, str] | None = None,
    ) -> _B:
        """Only this tier's keys: the ``memory:`` section is shared with core's
        `hermes_memory_core.MemoryConfig`, which checks the others (``provider``,
        ``backend``, ``nudge_interval`` …), so they are not "unknown" here."""
        own = {field.key for field in cls.fields()}
        mine = {k: v for k, v in (section or {}).items() if k in own}
        return super().load(mine, environ=environ)
