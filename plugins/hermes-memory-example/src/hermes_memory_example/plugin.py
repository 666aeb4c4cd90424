"""Entry-point module: registers `NotesProvider` under the name ``example``."""

from __future__ import annotations

from collections.abc import Callable

from hermes_memory_core import hookimpl
from hermes_memory_example.provider import NotesProvider


@hookimpl
def register_memory_providers(register: Callable[..., None]) -> None:
    """Offer the example provider to hermes-memory."""
    register(NotesProvider, name="example")
