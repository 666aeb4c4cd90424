"""Progressive discovery of project context files for the manager (internal).

Core does not import the package that finds context files: a distribution offers a tracker
factory in the entry-point group ``hermes_memory.context`` (``hermes-memory-context``
registers ``tracker = "hermes_memory_context:ContextTracker"``). When one is installed and
the host passes ``cwd=`` to `MemoryManager.initialize_all`, each session gets a tracker; the
manager hands it the paths tools touch (`MemoryManager.context_for_path`). Without one, or
without a working directory, discovery answers nothing.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable
from typing import Any, Protocol

logger = logging.getLogger("hermes_memory_core.manager")

#: Entry-point group of the per-session context tracker (the first loadable one, by name).
CONTEXT_ENTRY_POINT_GROUP = "hermes_memory.context"


class Tracker(Protocol):
    """What the manager asks of a tracker (`hermes_memory_context.ContextTracker`)."""

    def discover_for_path(self, path: str | os.PathLike[str]) -> str | None: ...


@functools.cache
def installed_tracker() -> Callable[[str], Tracker] | None:
    """The tracker factory an installed distribution registers, or ``None``."""
    from importlib.metadata import entry_points

    for ep in sorted(entry_points(group=CONTEXT_ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            factory: Callable[[str], Tracker] = ep.load()
        except Exception as exc:  # a broken optional part must not break the manager
            logger.warning("project context files: cannot load %s (%s): %s", ep.value, ep.name, exc)
            continue
        return factory
    return None


class ProjectContext:
    """One session's tracker of context files already shown to the model.

    :param factory: builds a tracker for a working directory; by default the one registered
        in ``hermes_memory.context`` (looked up when a session first needs it).
    """

    def __init__(self, factory: Callable[[str], Tracker] | None = None) -> None:
        self._factory = factory
        self._cwd: str | None = None
        self._tracker: Tracker | None = None

    def start(self, cwd: Any = None) -> None:
        """Begin a session in ``cwd`` (``None`` keeps the previous session's directory)."""
        if cwd is not None:
            self._cwd = os.fspath(cwd) if isinstance(cwd, str | os.PathLike) else None
        self._tracker = None
        if self._cwd is None:
            return
        factory = self._factory or installed_tracker()
        if factory is None:
            return  # no distribution offers one: nothing to discover
        try:
            self._tracker = factory(self._cwd)
        except ValueError as exc:  # ContextError: not a directory
            logger.warning("project context files: %s", exc)

    def discover(self, path: str | os.PathLike[str]) -> str | None:
        """Context text for a directory the session has not seen yet, else ``None``."""
        if self._tracker is None:
            return None
        try:
            text = self._tracker.discover_for_path(path)
        except (OSError, ValueError) as exc:
            logger.warning("project context files near %s: %s", path, exc)
            return None
        return text if isinstance(text, str) and text else None
