"""Entry-point module: registers `HonchoProvider` under the name ``honcho``.

Light on purpose: the provider module (httpx, the Honcho SDK) loads on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_memory_core import hookimpl

__all__ = ["register_memory_providers"]


@hookimpl
def register_memory_providers(register: Callable[..., Any]) -> None:
    """Register the Honcho provider class (called by the hermes-memory plugin loader)."""
    register("hermes_memory_honcho._provider:HonchoProvider", name="honcho")
