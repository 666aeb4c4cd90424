"""Entry-point module: registers `NotesProvider` under the name ``example``.

Light on purpose: the provider module loads when the provider is first created.
"""

from __future__ import annotations

from collections.abc import Callable

from hermes_memory_core import hookimpl


@hookimpl
def register_memory_providers(register: Callable[..., None]) -> None:
    """Offer the example provider to hermes-memory."""
    register("hermes_memory_example.provider:NotesProvider", name="example")
