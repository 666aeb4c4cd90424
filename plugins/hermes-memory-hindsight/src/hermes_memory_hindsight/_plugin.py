"""Entry-point module: registers `HindsightProvider` under the name ``hindsight``.

Light on purpose: the provider module (and ``hindsight-client`` with aiohttp) loads on
first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_memory_core import hookimpl

__all__ = ["register_memory_providers"]


@hookimpl
def register_memory_providers(register: Callable[..., Any]) -> None:
    """Register the Hindsight provider class (called by the hermes-memory plugin loader)."""
    register("hermes_memory_hindsight._provider:HindsightProvider", name="hindsight")
