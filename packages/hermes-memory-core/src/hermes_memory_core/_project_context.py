"""Progressive discovery of project context files for the manager (internal).

When ``hermes-memory-context`` is installed and the host passes ``cwd=`` to
`MemoryManager.initialize_all`, each session gets a `ContextTracker`; the manager hands it
the paths tools touch (`MemoryManager.context_for_path`). Without the package, or without a
working directory, discovery answers nothing.
"""

from __future__ import annotations

import logging
import os
from typing import Any

logger = logging.getLogger("hermes_memory_core.manager")


class ProjectContext:
    """One session's tracker of context files already shown to the model."""

    def __init__(self) -> None:
        self._cwd: str | None = None
        self._tracker: Any = None

    def start(self, cwd: Any = None) -> None:
        """Begin a session in ``cwd`` (``None`` keeps the previous session's directory)."""
        if cwd is not None:
            self._cwd = os.fspath(cwd) if isinstance(cwd, str | os.PathLike) else None
        self._tracker = None
        if self._cwd is None:
            return
        try:
            from hermes_memory_context import ContextTracker
        except ImportError:
            return  # the optional package is not installed: nothing to discover
        try:
            self._tracker = ContextTracker(self._cwd)
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
