"""Progressive discovery: context files of directories that tools touch during a session.

The start-of-session section covers the directories from the git root down to the working
directory. When a tool later reads or writes a path elsewhere (``services/api/handler.py``),
the directories holding that path may carry their own ``AGENTS.md``. The host asks a
`ContextTracker` and appends what it returns to the tool's result, so the model meets the
instructions exactly when they become relevant, without the system prompt changing.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path
from typing import Final

from hermes_memory_context._discovery import (
    _directory,
    _first_of,
    _label,
    find_git_root,
    project_directories,
)
from hermes_memory_context._files import MAX_FILE_BYTES, load_context_file, truncate_middle

__all__ = [
    "DISCOVERY_FILE_NAMES",
    "DISCOVERY_MAX_CHARS",
    "DISCOVERY_MAX_PARENTS",
    "ContextTracker",
]

#: Names looked for in each directory, in priority order; only the first one present is used.
DISCOVERY_FILE_NAMES: Final[tuple[str, ...]] = (
    ".hermes.md",
    "HERMES.md",
    "AGENTS.md",
    "CLAUDE.md",
    ".cursorrules",
)
#: How many directories one call examines: the one holding the path and its ancestors.
DISCOVERY_MAX_PARENTS: Final[int] = 5
#: Longest text one call returns, in characters (first 70 %, marker, last 20 % beyond it).
DISCOVERY_MAX_CHARS: Final[int] = 8_000

_first_match = _first_of(*DISCOVERY_FILE_NAMES)
_DONE_CACHE_SIZE: Final[int] = 65_536


def _positive(name: str, value: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


class ContextTracker:
    """Remembers, for one session, which directories and context files the model has seen.

    Create one per session with the session's working directory. The directories from the
    git root down to ``cwd`` count as seen from the start (`build_context_section` covered
    them). Then call `discover_for_path` with every path a tool touches.

    Thread-safe: tools running in parallel may call it at the same time.

    :param cwd: the session's working directory.
    :param max_parents: directories examined per call: the directory holding the path (a
        directory path counts as its own holder) and its ancestors, never above the git root.
    :param max_chars: cap of the text one call returns.
    :param max_file_bytes: files larger than this are not read (a placeholder says so).
    :raises ContextError: ``cwd`` is not a directory.
    :raises ValueError: a limit is not a positive integer.
    """

    def __init__(
        self,
        cwd: str | os.PathLike[str],
        *,
        max_parents: int = DISCOVERY_MAX_PARENTS,
        max_chars: int = DISCOVERY_MAX_CHARS,
        max_file_bytes: int = MAX_FILE_BYTES,
    ) -> None:
        self._max_parents = _positive("max_parents", max_parents)
        self._max_chars = _positive("max_chars", max_chars)
        self._max_file_bytes = _positive("max_file_bytes", max_file_bytes)
        self._cwd = _directory(cwd)
        _, covered = project_directories(self._cwd)
        self._seen: set[Path] = set(covered)
        self._loaded: set[Path] = set()
        self._roots: dict[Path, Path | None] = {}
        # Directories (as given, unresolved) whose window was examined: a repeat touch of
        # the same place answers from here without resolving the path again.
        self._done: set[str] = set()
        self._lock = threading.Lock()

    @property
    def cwd(self) -> Path:
        """The session's working directory (resolved)."""
        return self._cwd

    @property
    def loaded_files(self) -> frozenset[Path]:
        """Real paths of the files already handed to the model by this tracker."""
        with self._lock:
            return frozenset(self._loaded)

    def seen(self, directory: str | os.PathLike[str]) -> bool:
        """True when ``directory`` was already examined (or covered at session start)."""
        with self._lock:
            return Path(os.path.realpath(directory)) in self._seen

    def _start(self, path: str | os.PathLike[str]) -> tuple[Path | None, str | None]:
        """The directory discovery starts from, and the key under which a finished call for
        the same directory is remembered (``None`` when the path does not exist yet)."""
        target = Path(path).expanduser()
        if not target.is_absolute():
            target = self._cwd / target
        try:
            mode = os.lstat(target).st_mode
        except OSError:
            mode = None  # does not exist (yet) or cannot be looked at
        # Only a path that exists and is not itself a link maps to one start for good: a
        # linked file starts where its target lives, not where the link sits.
        cacheable = mode is not None and not stat.S_ISLNK(mode)
        is_dir = (
            target.is_dir()
            if mode is not None and stat.S_ISLNK(mode)
            else (mode is not None and stat.S_ISDIR(mode))
        )
        raw = os.path.abspath(target if is_dir else target.parent)
        if cacheable and raw in self._done:
            return None, raw
        real = Path(os.path.realpath(target))
        directory = real if is_dir else real.parent
        # A path a tool is about to create: start at its nearest existing ancestor.
        while not directory.is_dir():
            if directory.parent == directory:
                return None, None
            directory = directory.parent
        return directory, raw if cacheable else None

    def _boundary(self, directory: Path) -> Path:
        """The highest directory discovery may reach from ``directory``."""
        if directory not in self._roots:
            self._roots[directory] = find_git_root(directory)
        root = self._roots[directory]
        if root is not None:
            return root
        if directory.is_relative_to(self._cwd):
            return self._cwd
        return directory

    def discover_for_path(self, path: str | os.PathLike[str]) -> str | None:
        """Context text for the directories holding ``path`` not seen before, or ``None``.

        Examines at most ``max_parents`` directories, from the one holding ``path`` upwards,
        stopping at the git root (without a git root: at the session's working directory for
        paths inside it, otherwise only the path's own directory). Each examined directory is
        remembered, so a later call for the same place returns ``None`` at once. In each new
        directory the first present name of `DISCOVERY_FILE_NAMES` is loaded, unless that file
        (by real path) was already loaded this session. Files are read like the startup
        files (containment, size limit, encoding note, threat scan with the ``[BLOCKED: …]``
        placeholder); the outermost directory comes first, the deepest last, and the whole
        text is capped at ``max_chars`` characters (first 70 %, a marker, last 20 %).

        A relative ``path`` is taken relative to the session's working directory. The path
        need not exist yet. Never raises for a bad path or file.
        """
        try:
            with self._lock:
                start, key = self._start(path)
        except (OSError, ValueError, TypeError):
            return None
        if start is None:
            return None
        with self._lock:
            if key is not None:
                if len(self._done) >= _DONE_CACHE_SIZE:
                    self._done.clear()
                self._done.add(key)
            boundary = self._boundary(start)
            directories: list[Path] = []
            current = start
            while len(directories) < self._max_parents:
                directories.append(current)
                if current == boundary or current.parent == current:
                    break
                current = current.parent
            fresh = [d for d in directories if d not in self._seen]
            self._seen.update(fresh)
            pieces: list[str] = []
            for directory in reversed(fresh):
                for candidate in _first_match(directory):
                    real = Path(os.path.realpath(candidate))
                    if real in self._loaded:
                        continue
                    self._loaded.add(real)
                    label = _label(candidate, boundary)
                    loaded = load_context_file(
                        candidate,
                        root=boundary,
                        label=label,
                        max_chars=self._max_chars,
                        max_bytes=self._max_file_bytes,
                    )
                    if loaded.status != "empty":
                        pieces.append(f"## {label}\n\n{loaded.text}")
        if not pieces:
            return None
        where = _label(start, boundary)
        where = "the project root" if where == "." else where
        text = (
            f"[Project context for {where}: instructions from context files in the "
            "directories a tool just touched. Deeper files are the more specific.]\n\n"
            + "\n\n".join(pieces)
        )
        return truncate_middle(text, name="this discovered context", limit=self._max_chars)
