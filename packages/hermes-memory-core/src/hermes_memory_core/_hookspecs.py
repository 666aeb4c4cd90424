# mypy: disable-error-code="empty-body"
"""The pluggy hooks of hermes-memory: how plugins are *found*, never how providers are called.

A plugin module named by an entry point in the ``hermes_memory`` group implements
``register_memory_providers(register)`` with `hookimpl` (`RegistrationSpec`). That is the
only hook: the provider contract is the `MemoryProvider` base class
(`hermes_memory_core._provider`), whose methods the `MemoryManager` calls one provider at a
time through a single dispatcher.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["PROJECT_NAME", "RegistrationSpec", "hookimpl", "hookspec"]

#: The pluggy project name and the entry-point group.
PROJECT_NAME = "hermes_memory"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


class RegistrationSpec:
    """Hooks a plugin module implements (module-level functions marked with `hookimpl`)."""

    @hookspec
    def register_memory_providers(self, register: Callable[..., None]) -> None:
        """Register the memory providers this plugin offers.

        Called once when plugins are loaded, before any session starts.

        :param register: call ``register(factory, name="mem0")`` once per provider. ``factory``
            is the dotted name of a `MemoryProvider` subclass (``"pkg.provider:MyProvider"``,
            imported only when the provider is created: the way to keep startup cheap), a
            subclass, or any callable returning an instance. The manager calls it as
            ``factory(hermes_home=Path, config=dict)``, passing each keyword only if the
            factory's signature accepts it (``config`` is the whole parsed ``config.yaml``).
            Keep construction cheap: no network, no blocking I/O.

        A plugin whose module fails to import, or whose hook raises, is recorded with its
        error and skipped; the other plugins still load.

        Example::

            from hermes_memory_core import hookimpl

            @hookimpl
            def register_memory_providers(register):
                register("my_memory.provider:NotesProvider", name="notes")
        """
