"""What every command handler gets: the parsed options, the home, the config and the output.

Kept free of heavy imports (``rich`` and the stores are imported when first used) so that
``hermes-memory --help`` stays fast.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from hermes_memory_core.config import HermesConfig
    from hermes_memory_sessions.store import SessionStore

__all__ = ["CLIError", "Context"]


class CLIError(Exception):
    """A failure the user can act on: printed as one line on stderr, exit status ``code``."""

    def __init__(self, message: str, *, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


class Context:
    """Options, home directory, configuration and output helpers for one command run."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.json: bool = bool(getattr(args, "json", False))
        self.debug: bool = bool(getattr(args, "debug", False))
        self.assume_yes: bool = bool(getattr(args, "yes", False))

    # ------------------------------------------------------------------ where things are
    @cached_property
    def home(self) -> Path:
        """The Hermes home (``--home``, ``$HERMES_HOME`` or ``~/.hermes``; ``--profile``)."""
        from hermes_memory_core.config import ConfigError, resolve_home

        try:
            return resolve_home(
                getattr(self.args, "home", None), profile=getattr(self.args, "profile", None)
            )
        except ConfigError as exc:
            raise CLIError(str(exc), code=2) from None

    @cached_property
    def config(self) -> HermesConfig:
        """The parsed ``<home>/config.yaml`` (a malformed file is a one-line `CLIError`)."""
        from hermes_memory_core.config import ConfigError, load_config

        try:
            return load_config(self.home)
        except ConfigError as exc:
            raise CLIError(f"{exc} (fix the file, or run 'hermes-memory doctor')") from None

    def memory_store(self) -> Any:
        """A `MemoryStore` for ``<home>/memories`` with the configured limits, loaded."""
        from hermes_memory_builtin.store import MemoryStore

        mem = self.config.memory
        store = MemoryStore(
            self.home / "memories",
            memory_char_limit=mem.memory_char_limit,
            user_char_limit=mem.user_char_limit,
            memory_enabled=mem.memory_enabled,
            user_profile_enabled=mem.user_profile_enabled,
            write_origin="cli",
        )
        store.load_from_disk()
        return store

    @property
    def db_path(self) -> Path:
        """The session archive file (``sessions.db_path``, default ``<home>/state.db``)."""
        return self.config.sessions.db_path

    @contextmanager
    def session_store(self, *, create: bool) -> Iterator[SessionStore | None]:
        """Open the archive; with ``create=False`` a missing file yields ``None`` (no file made)."""
        import sqlite3

        from hermes_memory_sessions.store import SessionStore

        path = self.db_path
        if not create and not path.exists():
            yield None
            return
        try:
            store = SessionStore(path)
        except (sqlite3.Error, OSError) as exc:
            raise CLIError(f"cannot open the session archive {path}: {exc}") from None
        try:
            yield store
        finally:
            store.close()

    # ------------------------------------------------------------------ output
    @cached_property
    def console(self) -> Console:
        """Rich console on stdout (plain text when stdout is not a terminal)."""
        from rich.console import Console

        return Console(highlight=False, soft_wrap=True)

    @cached_property
    def err_console(self) -> Console:
        """Rich console on stderr (progress bars, notes)."""
        from rich.console import Console

        return Console(stderr=True, highlight=False)

    def say(self, text: Any = "", *, style: str | None = None) -> None:
        """Print ``text`` (a string is printed literally, never as markup)."""
        self.console.print(text, markup=False, style=style, soft_wrap=True)

    def note(self, text: str) -> None:
        """A line on stderr that is not an error (warnings, hints)."""
        self.err_console.print(text, markup=False, soft_wrap=True)

    def emit_json(self, payload: Any) -> None:
        """Print ``payload`` as indented JSON (UTF-8, CJK unescaped)."""
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2, default=str) + "\n")
        sys.stdout.flush()

    def confirm(self, question: str) -> None:
        """Ask ``question`` (y/N); `CLIError` unless answered yes. ``--yes`` skips the prompt.

        Without a terminal on stdin and without ``--yes`` nothing is asked and the command is
        refused, so a script never deletes data by accident.
        """
        if self.assume_yes:
            return
        if not sys.stdin.isatty():
            raise CLIError(f"{question} — refusing without confirmation: re-run with --yes")
        self.err_console.print(f"{question} [y/N] ", markup=False, end="")
        try:
            answer = input()
        except EOFError:
            answer = ""
        if answer.strip().lower() not in {"y", "yes"}:
            raise CLIError("cancelled; nothing was changed")

    @contextmanager
    def progress(self, description: str) -> Iterator[Callable[[int, int], None]]:
        """A ``progress(done, total)`` callback drawing a bar on stderr when it is a terminal."""
        console = self.err_console
        if not console.is_terminal or os.environ.get("HERMES_MEMORY_NO_PROGRESS"):
            yield lambda done, total: None
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        ) as bar:
            task = bar.add_task(description, total=None)

            def update(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total or None)

            yield update
