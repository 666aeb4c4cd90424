"""Entry-point module registering the ``builtin`` provider with hermes-memory's plugin loader."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_memory_builtin._provider import BuiltinMemoryProvider
from hermes_memory_core import hookimpl

__all__ = ["register_memory_providers"]


@hookimpl
def register_memory_providers(register: Callable[..., Any]) -> None:
    """Register `BuiltinMemoryProvider` under the name ``"builtin"``."""
    register(BuiltinMemoryProvider, name="builtin")
