"""Tool routing (internal): which provider answers which tool name.

The first provider to claim a name owns it; a later claim is ignored with a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from hermes_memory_core._dispatch import Slot
from hermes_memory_core._provider import ToolSchema

logger = logging.getLogger("hermes_memory_core.manager")


def normalize_schema(schema: Any) -> ToolSchema | None:
    """A bare function schema (``{"name", "description", "parameters"}``), or None."""
    if not isinstance(schema, Mapping):
        return None
    if schema.get("type") == "function" and isinstance(schema.get("function"), Mapping):
        schema = schema["function"]
    name = schema.get("name")
    if not isinstance(name, str) or not name:
        return None
    return dict(schema)


class ToolRoutes:
    """Tool name -> slot, plus the schemas in registration order (not locked: the manager
    holds its lock around every use)."""

    def __init__(self) -> None:
        self._routes: dict[str, Slot] = {}
        self._schemas: list[ToolSchema] = []

    def claim(self, slot: Slot, schemas: list[ToolSchema]) -> None:
        """Route each of ``schemas`` to ``slot`` unless another provider owns the name."""
        for schema in schemas:
            tool = schema["name"]
            owner = self._routes.get(tool)
            if owner is not None:
                logger.warning(
                    "Memory tool %r of provider %r is ignored: provider %r already provides it",
                    tool,
                    slot.name,
                    owner.name,
                )
                continue
            self._routes[tool] = slot
            self._schemas.append(schema)

    def route(self, name: str) -> Slot | None:
        """The slot that answers tool ``name``."""
        return self._routes.get(name)

    def names(self) -> list[str]:
        """Every routed tool name."""
        return list(self._routes)

    def schemas(self) -> list[ToolSchema]:
        """Copies of the routed schemas."""
        return [dict(s) for s in self._schemas]
