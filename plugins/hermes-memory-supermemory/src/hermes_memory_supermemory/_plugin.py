"""Entry-point module: registers `SupermemoryProvider` under the name ``supermemory``.

Light on purpose: the provider module (and the ``supermemory`` SDK with httpx) loads on
first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_memory_core import hookimpl

__all__ = ["register_memory_providers"]


@hookimpl
def register_memory_providers(register: Callable[..., Any]) -> None:
    """Register the Supermemory provider class (called by the hermes-memory plugin loader)."""
    register("hermes_memory_supermemory._provider:SupermemoryProvider", name="supermemory")
