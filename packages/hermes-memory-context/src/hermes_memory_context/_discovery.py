"""The project-context section of the system prompt, built once at session start.

Discovery runs from the working directory up to the git root (the nearest ancestor, the
working directory included, that holds a ``.git`` file or directory; without one only the
working directory is searched). Four kinds of context file exist, in priority order:

1. ``.hermes.md`` or ``HERMES.md`` (the first of the two in a directory),
2. ``AGENTS.md``,
3. ``CLAUDE.md``,
4. ``.cursorrules`` and ``.cursor/rules/*.mdc`` (all of them, ``.cursorrules`` first, the rule
   files in name order).

Only **one** kind is loaded: the highest-priority kind that has a file with content anywhere
between the git root and the working directory. Every file of that kind on the path is
loaded, from the git root down to the working directory, so the most specific file comes
last (in a prompt, later instructions are read as refining earlier ones). A file holding only
whitespace does not count, so an empty ``.hermes.md`` does not hide an ``AGENTS.md``; a
blocked or skipped file does count (its placeholder is shown instead of silently falling back
to another kind). ``SOUL.md`` is never read from the project, only from the Hermes home.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from hermes_memory_context._files import (
    CONTEXT_FILE_MAX_CHARS,
    MAX_FILE_BYTES,
    LoadedFile,
    load_context_file,
)
from hermes_memory_core import resolve_home

__all__ = [
    "CONTEXT_KINDS",
    "MAX_CURSOR_RULE_FILES",
    "ContextError",
    "ContextKind",
    "build_context_section",
    "collect_project_files",
    "find_git_root",
    "load_soul",
    "project_directories",
]

#: At most this many ``.cursor/rules/*.mdc`` files are read from one directory (name order).
MAX_CURSOR_RULE_FILES: Final[int] = 64

PROJECT_HEADING: Final[str] = "# Project context"
PROJECT_INTRO: Final[str] = (
    "Context files ({kind}) found between the repository root and the working directory, "
    "root first. Follow them while you work in this project; where two disagree, the later "
    "one (closer to the working directory) is the more specific."
)
SOUL_HEADING: Final[str] = "# Persona (SOUL.md)"


class ContextError(ValueError):
    """Bad input to the context API, e.g. a working directory that is not a directory."""


def _is_candidate(path: Path) -> bool:
    """True when something that is not a directory exists at ``path`` (links not followed)."""
    try:
        return not stat.S_ISDIR(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def _first_of(*names: str) -> Callable[[Path], list[Path]]:
    def files_in(directory: Path) -> list[Path]:
        for name in names:
            if _is_candidate(directory / name):
                return [directory / name]
        return []

    return files_in


def _cursor_files(directory: Path) -> list[Path]:
    found = [directory / ".cursorrules"] if _is_candidate(directory / ".cursorrules") else []
    rules = directory / ".cursor" / "rules"
    try:
        with os.scandir(rules) as entries:
            names = sorted(e.name for e in entries if e.name.endswith(".mdc"))
    except (OSError, ValueError):
        return found
    found += [rules / n for n in names[:MAX_CURSOR_RULE_FILES] if _is_candidate(rules / n)]
    return found


@dataclass(frozen=True)
class ContextKind:
    """One kind of project context file.

    :ivar name: a short id (``"hermes"``, ``"agents"``, ``"claude"``, ``"cursor"``).
    :ivar title: how the kind is named in the prompt (``"AGENTS.md"``).
    :ivar files_in: the files of this kind in one directory, in load order.
    """

    name: str
    title: str
    files_in: Callable[[Path], list[Path]]


#: The kinds in priority order: the first kind found on the path is the only one loaded.
CONTEXT_KINDS: Final[tuple[ContextKind, ...]] = (
    ContextKind("hermes", ".hermes.md / HERMES.md", _first_of(".hermes.md", "HERMES.md")),
    ContextKind("agents", "AGENTS.md", _first_of("AGENTS.md")),
    ContextKind("claude", "CLAUDE.md", _first_of("CLAUDE.md")),
    ContextKind("cursor", "Cursor rules", _cursor_files),
)


def _directory(cwd: str | os.PathLike[str]) -> Path:
    try:
        path = Path(cwd).expanduser()
        real = Path(os.path.realpath(path))
    except (TypeError, ValueError, OSError) as exc:
        raise ContextError(f"cwd {cwd!r} is not a usable path: {exc}") from None
    if not real.is_dir():
        raise ContextError(f"cwd {str(path)!r} is not a directory")
    return real


def find_git_root(directory: str | os.PathLike[str]) -> Path | None:
    """The nearest directory, ``directory`` itself included, that holds a ``.git`` entry (a
    directory in a normal clone, a file in a worktree or submodule), or ``None``."""
    current = Path(os.path.realpath(directory))
    while True:
        try:
            os.lstat(current / ".git")
            return current
        except (OSError, ValueError):
            pass
        if current.parent == current:
            return None
        current = current.parent


def project_directories(cwd: str | os.PathLike[str]) -> tuple[Path, list[Path]]:
    """The root and the directories searched for ``cwd``, from the root down to ``cwd``.

    The root is the git root; without one it is ``cwd`` itself (and it is the only directory).
    Paths are resolved (symbolic links followed).

    :raises ContextError: ``cwd`` is not a directory.
    """
    start = _directory(cwd)
    root = find_git_root(start)
    if root is None:
        return start, [start]
    chain = [start]
    while chain[-1] != root:
        chain.append(chain[-1].parent)
    chain.reverse()
    return root, chain


def _label(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def collect_project_files(
    cwd: str | os.PathLike[str],
    *,
    max_chars: int = CONTEXT_FILE_MAX_CHARS,
    max_bytes: int = MAX_FILE_BYTES,
) -> tuple[ContextKind | None, list[LoadedFile]]:
    """The kind that won and its files (root first), already read, scanned and truncated.

    ``(None, [])`` when no kind has a file with content on the path.

    :raises ContextError: ``cwd`` is not a directory.
    """
    root, directories = project_directories(cwd)
    for kind in CONTEXT_KINDS:
        paths = [p for d in directories for p in kind.files_in(d)]
        if not paths:
            continue
        loaded = [
            load_context_file(
                p, root=root, label=_label(p, root), max_chars=max_chars, max_bytes=max_bytes
            )
            for p in paths
        ]
        shown = [f for f in loaded if f.status != "empty"]
        if shown:
            return kind, shown
    return None, []


def load_soul(
    home: str | os.PathLike[str] | None = None,
    *,
    max_chars: int = CONTEXT_FILE_MAX_CHARS,
    max_bytes: int = MAX_FILE_BYTES,
) -> LoadedFile | None:
    """``<home>/SOUL.md`` read like a context file (scanned, truncated), or ``None`` when
    there is none or it is empty. ``home`` defaults to ``$HERMES_HOME``, then ``~/.hermes``.
    The file must really live in the home: a symbolic link leading elsewhere is refused."""
    root = resolve_home(home)
    path = root / "SOUL.md"
    if not _is_candidate(path):
        return None
    soul = load_context_file(
        path,
        root=root,
        label="SOUL.md",
        where="the Hermes home",
        max_chars=max_chars,
        max_bytes=max_bytes,
    )
    return None if soul.status == "empty" else soul


def build_context_section(
    cwd: str | os.PathLike[str], *, home: str | os.PathLike[str] | None = None
) -> str:
    """The context part of a system prompt for an agent working in ``cwd``.

    It holds the persona from ``<home>/SOUL.md`` (if any) and then the project's context
    files, discovered and prioritised as the module documentation describes. Each file is
    threat-scanned (``context`` scope plus exfiltration and tool-execution patterns; a hit shows
    ``[BLOCKED: <file> contained potential prompt injection (<ids>). Content not loaded.]``
    instead) and cut to 20,000 characters (first 70 %, a marker, last 20 %). The result is
    ``""`` when there is nothing to show; otherwise parts are joined by blank lines.

    Build it once per session and keep it: the prompt should stay byte-stable so that
    providers' prefix caches keep working.

    :param cwd: the agent's working directory.
    :param home: the Hermes home holding ``SOUL.md``; default ``$HERMES_HOME`` or ``~/.hermes``.
    :raises ContextError: ``cwd`` is not a directory (a `ValueError`).
    """
    kind, files = collect_project_files(cwd)
    parts: list[str] = []
    soul = load_soul(home)
    if soul is not None:
        parts.append(f"{SOUL_HEADING}\n\n{soul.text}")
    if kind is not None:
        parts.append(f"{PROJECT_HEADING}\n\n{PROJECT_INTRO.format(kind=kind.title)}")
        parts.extend(f"## {f.label}\n\n{f.text}" for f in files)
    return "\n\n".join(parts)
