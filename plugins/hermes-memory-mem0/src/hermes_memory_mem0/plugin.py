"""Entry point of the ``hermes_memory`` plugin group: registers the ``mem0`` provider."""

from __future__ import annotations

from collections.abc import Callable

from hermes_memory_core import hookimpl
from hermes_memory_mem0.provider import Mem0Provider

__all__ = ["register_memory_providers"]


@hookimpl
def register_memory_providers(register: Callable[..., None]) -> None:
    """Offer `Mem0Provider` under the name ``mem0``."""
    register(Mem0Provider, name="mem0")
