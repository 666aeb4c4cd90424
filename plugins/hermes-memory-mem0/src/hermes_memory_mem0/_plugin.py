"""Entry point of the ``hermes_memory`` plugin group: registers the ``mem0`` provider.

Light on purpose: the provider module (httpx, mem0) loads on first use.
"""

from __future__ import annotations

from collections.abc import Callable

from hermes_memory_core import hookimpl

__all__ = ["register_memory_providers"]


@hookimpl
def register_memory_providers(register: Callable[..., None]) -> None:
    """Offer `Mem0Provider` under the name ``mem0``."""
    register("hermes_memory_mem0._provider:Mem0Provider", name="mem0")
