"""Entry-point module: registers `HonchoProvider` under the name ``honcho``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_memory_core import hookimpl
from hermes_memory_honcho.provider import HonchoProvider

__all__ = ["register_memory_providers"]


@hookimpl
def register_memory_providers(register: Callable[..., Any]) -> None:
    """Register the Honcho provider class (called by the hermes-memory plugin loader)."""
    register(HonchoProvider, name="honcho")
