"""The MCP resources: the curated memory files, read live, and the frozen session snapshot."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hermes_memory_core.config import HermesConfig

__all__ = [
    "MEMORY_URI",
    "SNAPSHOT_URI",
    "USER_URI",
    "MemoryResource",
    "ResourceReadError",
    "memory_resources",
]

MEMORY_URI = "hermes-memory://memories/MEMORY.md"
"""The agent's notes, ``<home>/memories/MEMORY.md``, as on disk right now."""
USER_URI = "hermes-memory://memories/USER.md"
"""The user profile, ``<home>/memories/USER.md``, as on disk right now."""
SNAPSHOT_URI = "hermes-memory://snapshot"
"""The system-prompt blocks frozen when this server's session started."""


class ResourceReadError(Exception):
    """A resource exists but cannot be read (permissions, encoding)."""


@dataclass(frozen=True)
class MemoryResource:
    """One readable resource: its MCP metadata and a function returning its current text."""

    uri: str
    name: str
    title: str
    description: str
    mime_type: str
    read: Callable[[], str]


def read_memory_file(path: Path) -> str:
    """The file's text, ``""`` when it does not exist yet.

    :raises ResourceReadError: the file exists but cannot be read as UTF-8.
    """
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ResourceReadError(f"cannot read {path}: {exc}") from exc


def memory_resources(config: HermesConfig, snapshot: Callable[[], str]) -> list[MemoryResource]:
    """The resources for ``config``'s home; disabled stores (``memory_enabled`` /
    ``user_profile_enabled`` false) are not listed."""
    memories = config.home / "memories"
    resources = []
    if config.memory.memory_enabled:
        path = memories / "MEMORY.md"
        resources.append(
            MemoryResource(
                uri=MEMORY_URI,
                name="MEMORY.md",
                title="Agent memory (MEMORY.md)",
                description=(
                    "The agent's curated notes, entries separated by a line holding '§'. "
                    f"Read live from {path}; edit it with the 'memory' tool (target 'memory')."
                ),
                mime_type="text/markdown",
                read=lambda: read_memory_file(path),
            )
        )
    if config.memory.user_profile_enabled:
        user_path = memories / "USER.md"
        resources.append(
            MemoryResource(
                uri=USER_URI,
                name="USER.md",
                title="User profile (USER.md)",
                description=(
                    "What the agent knows about the user, entries separated by a line holding "
                    f"'§'. Read live from {user_path}; edit it with the 'memory' tool "
                    "(target 'user')."
                ),
                mime_type="text/markdown",
                read=lambda: read_memory_file(user_path),
            )
        )
    resources.append(
        MemoryResource(
            uri=SNAPSHOT_URI,
            name="snapshot",
            title="Memory snapshot of this session",
            description=(
                "The memory blocks a Hermes agent would put in its system prompt, frozen when "
                "this MCP server started; writes made since appear from the next session on."
            ),
            mime_type="text/plain",
            read=snapshot,
        )
    )
    return resources
