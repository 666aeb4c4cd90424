"""What every command handler gets: the parsed options, the home, the config and the output.

Kept free of heavy imports (``rich`` and the stores are imported when first used) so that
``hermes-memory --help`` stays fast.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory_cli._i18n import cli_gettext as _

if TYPE_CHECKING:
    from rich.console import Console

    from hermes_memory_builtin import MemoryStore
    from hermes_memory_core.config import HermesConfig
    from hermes_memory_sessions.protocol import SessionArchive

__all__ = ["CLIError", "Context", "visible_controls"]

_CONTROLS = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]}


def visible_controls(text: str) -> str:
    """``text`` with control characters (except newline and tab) written as ``\\xNN``."""
    return text.translate(_CONTROLS)


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

    def _home_origin(self) -> str:
        if getattr(self.args, "home", None) is not None:
            return _("from --home")
        if os.environ.get("HERMES_HOME"):
            return _("from $HERMES_HOME")
        return _("the default; choose another with --home or $HERMES_HOME")

    def require_home(self) -> Path:
        """The home, which must exist: read commands call this and never create anything.

        A missing home (a mistyped ``--home`` or ``--profile``) is a `CLIError` naming the
        directory, where it came from, and the profiles that do exist.
        """
        home = self.home
        if home.is_dir():
            return home
        if home.exists() or home.is_symlink():
            raise CLIError(self._not_a_directory(home))
        profile = getattr(self.args, "profile", None)
        if profile:
            root = home.parent.parent
            try:
                names = sorted(p.name for p in (root / "profiles").iterdir() if p.is_dir())
            except OSError:
                names = []
            known = (
                _("existing profiles: {names}").format(names=", ".join(names))
                if names
                else _("no profiles exist yet")
            )
            raise CLIError(
                _(
                    "profile {profile!r} does not exist: no directory {home} ({known}); "
                    "nothing was created"
                ).format(profile=profile, home=home, known=known)
            )
        raise CLIError(
            _(
                "the Hermes home {home} does not exist ({origin}); nothing was "
                "created — a write such as 'hermes-memory memory add TEXT' creates it"
            ).format(home=home, origin=self._home_origin())
        )

    def _not_a_directory(self, home: Path) -> str:
        return _("{home} is not a directory, so it cannot be a Hermes home ({origin})").format(
            home=home, origin=self._home_origin()
        )

    def ensure_home(self) -> Path:
        """The home, created (mode 0700) when missing: the first write says it made it."""
        home = self.home
        if home.is_dir():
            return home
        if home.exists() or home.is_symlink():
            raise CLIError(self._not_a_directory(home))
        from hermes_memory_core.kit import make_private_dirs

        try:
            make_private_dirs(home)  # missing parents too: mkdir(parents=True) makes them 0755
        except OSError as exc:
            raise CLIError(
                _("cannot create the Hermes home {home}: {reason}").format(
                    home=home, reason=exc.strerror or exc
                )
            ) from None
        self.note(
            _("Created the Hermes home {home} ({origin}).").format(
                home=home, origin=self._home_origin()
            )
        )
        return home

    @cached_property
    def config(self) -> HermesConfig:
        """The parsed ``<home>/config.yaml`` (a malformed file is a one-line `CLIError`)."""
        from hermes_memory_core.config import ConfigError, load_config

        try:
            return load_config(self.home)
        except ConfigError as exc:
            raise CLIError(
                _("{error} (fix the file, or run 'hermes-memory doctor')").format(error=exc)
            ) from None

    def memory_store(self, *, create: bool = False) -> Any:
        """A `MemoryStore` for ``<home>/memories`` with the configured limits, loaded.

        With ``create=False`` (read commands) the home must exist and no directory is
        made: a missing ``memories`` folder is an empty store. With ``create=True`` the home
        is created when missing (and said so).
        """
        from hermes_memory_builtin import MemoryStore

        if create:
            self.ensure_home()
        else:
            self.require_home()
        mem = self.config.memory
        if mem.backend == "postgres":
            return self._postgres_memory_store()
        store = MemoryStore(
            self.home / "memories",
            memory_char_limit=mem.memory_char_limit,
            user_char_limit=mem.user_char_limit,
            memory_enabled=mem.memory_enabled,
            user_profile_enabled=mem.user_profile_enabled,
            write_origin="cli",
        )
        memories = self.home / "memories"
        if create or memories.is_dir() or memories.exists() or memories.is_symlink():
            try:
                store.load_from_disk()
            except Exception as exc:  # e.g. the builtin's UnsafeMemoryPath / MemoryFileError
                from hermes_memory_cli._files import explain_memory_error

                raise CLIError(explain_memory_error(exc, memories)) from None
        return store

    def _postgres_memory_store(self) -> MemoryStore:
        """``memory.backend: postgres``: the owner's curated store in PostgreSQL, loaded."""
        from hermes_memory_postgres import ArchiveUnavailable, memory_store

        mem = self.config.memory
        try:
            store = memory_store(
                self.config.raw,
                memory_char_limit=mem.memory_char_limit,
                user_char_limit=mem.user_char_limit,
                memory_enabled=mem.memory_enabled,
                user_profile_enabled=mem.user_profile_enabled,
                write_origin="cli",
            )
            store.load_from_disk(strict=True)
        except (ArchiveUnavailable, ValueError, RuntimeError) as exc:
            raise CLIError(
                _("cannot open the curated memory in PostgreSQL: {error}").format(error=exc)
            ) from None
        return store

    @property
    def db_path(self) -> Path:
        """The archive file: ``sessions.db_path``, default ``<home>/hermes-memory/sessions.db``."""
        return self.config.sessions.db_path

    @contextmanager
    def session_store(self, *, create: bool) -> Iterator[SessionArchive | None]:
        """Open the archive; with ``create=False`` a missing file yields ``None`` (no file made).

        ``sessions.backend: postgres`` opens the PostgreSQL archive of ``postgres.owner``.
        """
        import sqlite3

        from hermes_memory_cli._hermes_history import before_read

        if self.config.sessions.backend == "postgres":
            with self._postgres_archive() as archive:
                yield before_read(self, archive) or archive
            return

        from hermes_memory_sessions.storage import SessionStore, legacy_archive_notice

        if create:
            self.ensure_home()
        else:
            self.require_home()
        notice = legacy_archive_notice(self.home)  # read-only look; changes nothing
        if notice:
            self.note(notice)
        path = self.db_path
        if not path.exists():
            from hermes_memory_cli._files import blocking_ancestor

            blocker = blocking_ancestor(path)
            if blocker is not None:
                raise CLIError(
                    _(
                        "cannot open the session archive {path}: {blocker} is a file where a "
                        "folder should be: move it away (mv {source} {destination})"
                    ).format(
                        path=path,
                        blocker=blocker,
                        source=shlex.quote(str(blocker)),
                        destination=shlex.quote(str(blocker) + ".old"),
                    )
                )
        opened: SessionArchive | None = None
        try:
            if create or path.exists():
                opened = SessionStore(path)
            # reading: Hermes' state.db in the home is noticed, or followed (may create)
            opened = before_read(self, opened)
        except (sqlite3.Error, OSError) as exc:
            if opened is not None:
                opened.close()
            raise CLIError(
                _("cannot open the session archive {path}: {error}").format(path=path, error=exc)
            ) from None
        try:
            yield opened
        finally:
            if opened is not None:
                opened.close()

    @contextmanager
    def _postgres_archive(self) -> Iterator[SessionArchive]:
        from hermes_memory_postgres import ArchiveUnavailable, session_archive

        try:
            archive = session_archive(self.config.raw, self.home)
            archive.count_open_sessions()  # connects (and migrates) now: errors are one line
        except (ArchiveUnavailable, ValueError, RuntimeError) as exc:
            raise CLIError(
                _("cannot open the session archive in PostgreSQL: {error}").format(error=exc)
            ) from None
        try:
            yield archive
        finally:
            archive.close()

    # ------------------------------------------------------------------ output
    @cached_property
    def console(self) -> Console:
        """Rich console on stdout (plain text when stdout is not a terminal)."""
        from rich.console import Console

        class _Console(Console):
            def on_broken_pipe(self) -> None:
                # rich would exit with status 1; a reader that stopped early (`| head -1`)
                # is success: main() turns BrokenPipeError into a quiet exit 0.
                self.quiet = True
                raise BrokenPipeError

        return _Console(highlight=False, markup=False, emoji=False, soft_wrap=True)

    @property
    def is_terminal(self) -> bool:
        """True when stdout is an interactive terminal (not a pipe, a file or ``TERM=dumb``)."""
        return bool(self.console.is_terminal) and not self.console.is_dumb_terminal

    @cached_property
    def err_console(self) -> Console:
        """Rich console on stderr (progress bars, notes)."""
        from rich.console import Console

        return Console(stderr=True, highlight=False, markup=False, emoji=False)

    def say(self, text: Any = "", *, style: str | None = None) -> None:
        """Print ``text`` literally: never markup (``[bold]``), never emoji codes (``:x:``).

        On a terminal, control characters other than newline and tab are shown as
        ``\\xNN`` so stored text cannot move the cursor or recolour the screen; piped output
        is byte for byte what was stored.
        """
        if isinstance(text, str):
            if self.console.is_terminal:
                text = visible_controls(text)
            from rich.text import Text

            text = Text(text, style=style or "")
            style = None
        self.console.print(text, style=style, soft_wrap=True)

    def plain(self, line: str = "") -> None:
        """Write one line to stdout exactly as given (no rich processing at all)."""
        if self.console.is_terminal:
            line = visible_controls(line)
        sys.stdout.write(line + "\n")

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
            raise CLIError(
                _("{question} — refusing without confirmation: re-run with --yes").format(
                    question=question
                )
            )
        self.err_console.print(_("{question} [y/N] ").format(question=question), end="")
        try:
            answer = input()
        except EOFError:
            answer = ""
        if not sys.stderr.isatty():  # the typed answer was echoed elsewhere: end the line
            sys.stderr.write("\n")
        if answer.strip().lower() not in {"y", "yes", _("y"), _("yes")}:
            raise CLIError(_("cancelled; nothing was changed"))

    @contextmanager
    def progress(
        self, description: str, *, rate_unit: str | None = None
    ) -> Iterator[Callable[[int, int], None]]:
        """A ``progress(done, total)`` callback drawing a bar on stderr when it is a terminal.

        With ``rate_unit`` (a long job such as ``sessions embed``) the bar also shows the
        throughput, and when stderr is not a terminal a line with the count, throughput and
        time left is written every ``$HERMES_MEMORY_PROGRESS_INTERVAL`` seconds (default 10),
        so logs of a job that runs for hours show where it is.
        """
        console = self.err_console
        if os.environ.get("HERMES_MEMORY_NO_PROGRESS"):
            yield lambda done, total: None
            return
        if not console.is_terminal:
            if rate_unit is None:
                yield lambda done, total: None
            else:
                yield self._progress_lines(description, rate_unit)
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )

        columns: list[ProgressColumn | str] = [
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
        ]
        if rate_unit is not None:
            columns.append(TextColumn("{task.fields[rate]}"))
        columns.append(TimeRemainingColumn())
        with Progress(*columns, console=console, transient=True) as bar:
            task = bar.add_task(description, total=None, rate="")

            def update(done: int, total: int) -> None:
                speed = bar.tasks[task].speed if rate_unit is not None else None
                rate = f"{speed:,.1f} {rate_unit}/s" if speed else ""
                bar.update(task, completed=done, total=total or None, rate=rate)

            yield update

    def _progress_lines(self, description: str, unit: str) -> Callable[[int, int], None]:
        from hermes_memory_cli._throughput import Throughput, format_duration

        try:
            interval = float(os.environ.get("HERMES_MEMORY_PROGRESS_INTERVAL", "10"))
        except ValueError:
            interval = 10.0
        meter: Throughput | None = None
        last = 0.0

        def update(done: int, total: int) -> None:
            nonlocal meter, last
            if meter is None:
                meter = Throughput(total)
                last = meter.elapsed
            meter.total = total
            meter.update(done)
            if done == 0 or meter.elapsed - last < interval:
                return
            last = meter.elapsed
            left = meter.seconds_left
            self.err_console.print(
                _("{what}: {done} / {total} {unit}, {rate}/s, about {left} left").format(
                    what=description,
                    done=f"{done:,}",
                    total=f"{total:,}",
                    unit=unit,
                    rate=f"{meter.rate:,.1f}",
                    left=format_duration(left) if left is not None else "?",
                ),
                markup=False,
                highlight=False,
                soft_wrap=True,  # one line per report, whatever the width: logs grep it
            )

        return update
