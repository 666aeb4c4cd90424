"""Entry-point module: registers `ByteroverProvider` under the name ``byterover``.

Light on purpose: the provider module loads when the provider is first created.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_memory_core import hookimpl

__all__ = ["register_memory_providers"]


@hookimpl
def register_memory_providers(register: Callable[..., Any]) -> None:
    """Register the ByteRover provider (called by the hermes-memory plugin loader)."""
    register("hermes_memory_byterover._provider:ByteroverProvider", name="byterover")
