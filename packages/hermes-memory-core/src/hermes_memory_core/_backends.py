"""Storage backends found through entry points (internal; public names re-exported by core).

A tier that can keep its data elsewhere than its default files asks for the factory by name
instead of importing the package that provides it: ``hermes-memory-postgres`` depends on the
builtin and sessions tiers, so an import the other way would be a cycle between
distributions. The distribution registers its factories::

    [project.entry-points."hermes_memory.memory_backends"]
    postgres = "hermes_memory_postgres:memory_store"
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final

__all__ = ["BACKEND_GROUPS", "BackendNotInstalled", "load_backend"]

logger = logging.getLogger("hermes_memory_core.plugins")

#: ``tier -> entry-point group`` of its storage backends.
BACKEND_GROUPS: Final[dict[str, str]] = {
    "memory": "hermes_memory.memory_backends",  # factory(config, **store options) -> store
    "sessions": "hermes_memory.session_backends",  # factory(config, home, **options)
}


class BackendNotInstalled(ImportError):
    """No installed distribution registers the backend that ``config.yaml`` names."""


def load_backend(tier: str, name: str) -> Callable[..., Any]:
    """The factory registered for ``<tier>.backend: <name>`` (``tier``: ``memory`` or
    ``sessions``).

    :raises BackendNotInstalled: nothing registers it, or its module cannot be imported (the
        message names the config key and the distribution to install).
    :raises ValueError: ``tier`` is not one of `BACKEND_GROUPS`.
    """
    group = BACKEND_GROUPS.get(tier)
    if group is None:
        raise ValueError(f"unknown tier {tier!r}; expected one of {sorted(BACKEND_GROUPS)}")
    from importlib.metadata import entry_points

    hint = f"{tier}.backend is {name!r}; install hermes-memory-{name}"
    for ep in entry_points(group=group, name=name):
        try:
            factory: Callable[..., Any] = ep.load()
        except ImportError as exc:
            raise BackendNotInstalled(f"{hint} ({ep.value} cannot be imported: {exc})") from exc
        return factory
    raise BackendNotInstalled(f"{hint} (no distribution registers it in {group})")
