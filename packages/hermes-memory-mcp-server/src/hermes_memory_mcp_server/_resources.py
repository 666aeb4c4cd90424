"""The MCP resources: the curated memory files, read live, and the frozen session snapshot.

The memory files are served entry by entry through the builtin's threat scan, like the
snapshot: an entry matching a threat pattern (a hand edit, another writer) reaches the client
only as a ``[BLOCKED: …]`` placeholder, never verbatim.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from hermes_memory_builtin import MemoryStore, read_raw, serialise
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
"""The agent's notes, ``<home>/memories/MEMORY.md``, as on disk right now (scanned)."""
USER_URI = "hermes-memory://memories/USER.md"
"""The user profile, ``<home>/memories/USER.md``, as on disk right now (scanned)."""
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


def read_memory_file(path: Path, target: str) -> str:
    """The entries of memory file ``path`` (store ``target``: ``"memory"`` or ``"user"``),
    one per ``§`` block, each flagged entry replaced by the snapshot's ``[BLOCKED: …]``
    placeholder; ``""`` when the file does not exist yet.

    :raises ResourceReadError: the file exists but cannot be read as UTF-8.
    """
    raw = read_raw(path)  # only to tell "cannot be read" from "empty"
    if raw.error is not None or (raw.exists and raw.text is None):
        raise ResourceReadError(f"cannot read {path}: {raw.error}")
    # What the model would see, by the store's own rules (approved entries included).
    return serialise(MemoryStore(path.parent).visible_entries(target))


def _postgres_reader(config: HermesConfig) -> Callable[[str], str]:
    """``memory.backend: postgres``: read a target of ``postgres.owner`` from the database
    (the store is opened on the first read; flagged entries shown as placeholders)."""
    store: list[Any] = []

    def read(target: str) -> str:
        from hermes_memory_postgres import ArchiveUnavailable, memory_store

        try:
            if not store:
                store.append(memory_store(config.raw))
            return serialise(store[0].visible_entries(target))
        except (ArchiveUnavailable, ValueError) as exc:
            raise ResourceReadError(f"cannot read the memory in PostgreSQL: {exc}") from None

    return read


def memory_resources(config: HermesConfig, snapshot: Callable[[], str]) -> list[MemoryResource]:
    """The resources for ``config``'s home; disabled stores (``memory_enabled`` /
    ``user_profile_enabled`` false) are not listed. With ``memory.backend: postgres`` the
    entries are read from the database (rows of ``postgres.owner``), not from files."""
    memories = config.home / "memories"
    resources = []
    if config.memory.backend == "postgres":
        pg_read = _postgres_reader(config)
        return [
            MemoryResource(
                uri=uri,
                name=name,
                title=title,
                description=(
                    f"{title}: entries separated by a line holding '§', read live from"
                    " PostgreSQL (this home's postgres.owner); an entry matching a threat"
                    " pattern is shown as a [BLOCKED: ...] placeholder. Edit it with the"
                    f" 'memory' tool (target '{target}')."
                ),
                mime_type="text/markdown",
                read=partial(pg_read, target),
            )
            for uri, name, title, target, enabled in (
                (MEMORY_URI, "MEMORY.md", "Agent memory (MEMORY.md)", "memory",
                 config.memory.memory_enabled),
                (USER_URI, "USER.md", "User profile (USER.md)", "user",
                 config.memory.user_profile_enabled),
            )
            if enabled
        ] + [_snapshot_resource(snapshot)]  # fmt: skip
    if config.memory.memory_enabled:
        path = memories / "MEMORY.md"
        resources.append(
            MemoryResource(
                uri=MEMORY_URI,
                name="MEMORY.md",
                title="Agent memory (MEMORY.md)",
                description=(
                    "The agent's curated notes, entries separated by a line holding '§'. "
                    f"Read live from {path}; an entry matching a threat pattern is shown as a "
                    "[BLOCKED: ...] placeholder. Edit it with the 'memory' tool (target 'memory')."
                ),
                mime_type="text/markdown",
                read=lambda: read_memory_file(path, "memory"),
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
                    f"'§'. Read live from {user_path}; an entry matching a threat pattern is "
                    "shown as a [BLOCKED: ...] placeholder. Edit it with the 'memory' tool "
                    "(target 'user')."
                ),
                mime_type="text/markdown",
                read=lambda: read_memory_file(user_path, "user"),
            )
        )
    resources.append(_snapshot_resource(snapshot))
    return resources


def _snapshot_resource(snapshot: Callable[[], str]) -> MemoryResource:
    return MemoryResource(
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
