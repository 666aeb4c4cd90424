"""One history from the first command: read commands look at the home's Hermes ``state.db``.

Before a read command (``sessions list``, ``show``, ``search``, ``stats``, ``export``, …)
shows the archive, `before_read` either follows Hermes (``sessions.follow_hermes: true``: an
incremental read-only import bounded in time) or, when ``state.db`` holds sessions the
archive lacks, prints ONE line on stderr with the exact command that brings them in. Never
on stdout, so ``--json`` output is unchanged.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from hermes_memory_cli._i18n import cli_gettext as _

if TYPE_CHECKING:
    from hermes_memory_cli._context import Context
    from hermes_memory_sessions.importers import PendingImport
    from hermes_memory_sessions.protocol import SessionArchive

__all__ = ["READ_HANDLERS", "before_read", "import_command", "pending_line"]

#: Handlers that show the archive: they notice (or follow) Hermes' ``state.db`` first.
READ_HANDLERS = frozenset(
    {
        "sessions:list_",
        "sessions:show",
        "sessions:search",
        "sessions:stats",
        "sessions:export",
        "sessions:browse",
        "sessions:resume",
    }
)


def import_command(ctx: Context) -> str:
    """``hermes-memory [--home H] [--profile P] sessions import --from-hermes`` for this run."""
    parts = ["hermes-memory"]
    home = getattr(ctx.args, "home", None)
    if home:
        parts += ["--home", shlex.quote(str(home))]
    profile = getattr(ctx.args, "profile", None)
    if profile:
        parts += ["--profile", shlex.quote(str(profile))]
    return " ".join([*parts, "sessions", "import", "--from-hermes"])


def pending_line(ctx: Context, pending: PendingImport) -> str:
    """The one line saying what ``state.db`` holds that the archive lacks, with the command."""
    count = f"{pending.missing:,}" + ("" if pending.complete else "+")
    if pending.missing:
        what = _("{state} (Hermes Agent) has {count} sessions that are not in this archive").format(
            state=pending.state_db, count=count
        )
    else:
        what = _("{state} (Hermes Agent) has new messages in {count} imported sessions").format(
            state=pending.state_db, count=f"{pending.updated:,}"
        )
    return _(
        "note: {what}; bring them in with '{command}' (or keep following it: "
        "'hermes-memory config set sessions.follow_hermes true')"
    ).format(what=what, command=import_command(ctx))


def before_read(ctx: Context, store: SessionArchive | None) -> SessionArchive | None:
    """Follow or notice Hermes' ``state.db`` for a read command; returns the store to use.

    With ``sessions.follow_hermes`` and no archive yet, the archive is created for the
    import (the user asked for it to follow Hermes). Failures never stop the command.
    """
    from hermes_memory_sessions.importers import (
        CLI_FOLLOW_BUDGET_S,
        follow_hermes,
        hermes_state_path,
        pending_hermes_import,
    )
    from hermes_memory_sessions.storage import inspect_database

    if getattr(ctx.args, "_handler", None) not in READ_HANDLERS:
        return store
    home = ctx.home
    if inspect_database(hermes_state_path(home)).kind != "hermes":
        return store
    if ctx.config.sessions.follow_hermes:
        if store is None:
            from hermes_memory_sessions.storage import SessionStore

            store = SessionStore(ctx.db_path)
        report = follow_hermes(
            home, store, time_budget_s=CLI_FOLLOW_BUDGET_S, lock_dir=ctx.db_path.parent
        )
        if report is not None and report.incomplete:
            ctx.note(
                _(
                    "note: still importing {state} (sessions.follow_hermes); the next command"
                    " continues"
                ).format(state=hermes_state_path(home))
            )
        return store
    pending = pending_hermes_import(home, store)
    if pending is not None and pending.behind:
        ctx.note(pending_line(ctx, pending))
    return store
