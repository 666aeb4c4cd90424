"""Typed events one tier emits and the `MemoryManager` forwards to the others.

The curated store (``builtin``) emits a `MemoryWrite` for every entry it adds, replaces or
removes; the manager hands each one to the external provider's ``on_memory_write``. Core
never decodes a tool's JSON answer to learn what was written: the tier that wrote says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["MemoryWrite", "WriteAction"]

#: What happened to one curated entry.
WriteAction = Literal["add", "replace", "remove"]


@dataclass(frozen=True)
class MemoryWrite:
    """One curated entry written by a tier.

    :param action: ``"add"``, ``"replace"`` or ``"remove"``.
    :param target: ``"memory"`` (the agent's notes) or ``"user"`` (the user profile).
    :param content: the entry as stored (for ``remove``: the entry that was removed).
    :param metadata: ``old_text`` (the locator the model passed) and ``previous_content``
        (the entry before a replace or remove), where known.
    """

    action: WriteAction
    target: str
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)
