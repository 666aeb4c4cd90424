"""Entry point of the ``sessions`` tier: registers `SessionArchiveProvider` with hermes-memory."""

from __future__ import annotations

from collections.abc import Callable

from hermes_memory_core import hookimpl
from hermes_memory_sessions.provider import SessionArchiveProvider

__all__ = ["register_memory_providers"]


@hookimpl
def register_memory_providers(register: Callable[..., None]) -> None:
    """Register the session archive provider under the name ``"sessions"``."""
    register(SessionArchiveProvider, name="sessions")
