"""Entry-point module: registers `RetainDBProvider` under the name ``retaindb``.

Light on purpose: the provider module (and httpx) loads when the provider is first created.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_memory_core import hookimpl

__all__ = ["register_memory_providers"]


@hookimpl
def register_memory_providers(register: Callable[..., Any]) -> None:
    """Register the RetainDB provider class (called by the hermes-memory plugin loader)."""
    register("hermes_memory_retaindb._provider:RetainDBProvider", name="retaindb")
