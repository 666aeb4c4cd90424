"""Entry-point module: registers `OpenVikingProvider` under the name ``openviking``.

Light on purpose: the provider module (and httpx) loads when the provider is first created.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_memory_core import hookimpl

__all__ = ["register_memory_providers"]


@hookimpl
def register_memory_providers(register: Callable[..., Any]) -> None:
    """Register the OpenViking provider class (called by the hermes-memory plugin loader)."""
    register("hermes_memory_openviking._provider:OpenVikingProvider", name="openviking")
