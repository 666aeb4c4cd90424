"""Entry-point module: registers `NotesProvider` (``example``) and `RemoteNotesProvider`
(``example-remote``).

Light on purpose: the provider module loads when the provider is first created.
"""

from __future__ import annotations

from collections.abc import Callable

from hermes_memory_core import hookimpl


@hookimpl
def register_memory_providers(register: Callable[..., None]) -> None:
    """Offer both example providers: the local one and the kit-based remote one."""
    register("hermes_memory_example._provider:NotesProvider", name="example")
    register("hermes_memory_example._remote:RemoteNotesProvider", name="example-remote")
