"""Entry-point module: registers `FactsProvider` under the name ``facts``.

Light on purpose: the provider module (sqlite3, and NumPy when installed) loads on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_memory_core import hookimpl

__all__ = ["register_memory_providers"]


@hookimpl
def register_memory_providers(register: Callable[..., Any]) -> None:
    """Register the local fact store (called by the hermes-memory plugin loader)."""
    register("hermes_memory_facts._provider:FactsProvider", name="facts")
