"""The ``hermes-memory`` command line.

``hermes-memory [--home DIR] [--profile NAME] [--json] [--debug] COMMAND ...``

Command handlers live in `hermes_memory_cli._commands` and are imported only when their command
runs, so ``hermes-memory --help`` stays fast. Every failure ends with exit status 1 (2 for a
usage error) and one line on stderr; ``--debug`` adds the traceback. A missing command
(bare ``hermes-memory``, or ``hermes-memory sessions``) is a usage error: the help of that
level is printed on stderr, then the one-line error, exit status 2. A reader that goes away
(``hermes-memory sessions export | head``) ends the command quietly with status 0.

Other distributions contribute command groups through the ``hermes_memory.cli`` entry-point
group (``hermes-memory-mcp-server`` does so for ``mcp``): each entry point names
``register(subparsers, *, parents)``, called with this parser's sub-parser collection and the
list of parent parsers carrying the common options (``--home``, ``--profile``, ``--json``,
``--debug``); it adds its parser whose leaf parsers set ``func=handler`` with
``handler(args: argparse.Namespace) -> int | None``. ``args.home`` and ``args.profile`` are
what `hermes_memory_core.resolve_home` takes. Without that package, ``hermes-memory mcp
serve`` prints how to install it and exits 1.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import logging
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from hermes_memory_cli._i18n import cli_gettext as _

__all__ = ["build_parser", "main"]

PROG = "hermes-memory"
_SUPPRESS = argparse.SUPPRESS


class _Formatter(argparse.HelpFormatter):
    """Help in the user's language: texts are looked up in the ``cli`` catalogue when shown.

    The English help strings stay where the parsers are built; ``tools/i18n.py`` collects
    them from the parser itself. argparse's own words ("usage:", "options") come from the
    standard library's gettext domain, which no one installs, so they are ours here too.
    """

    def add_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, _("usage: ") if prefix is None else prefix)

    def add_text(self, text: str | None) -> None:
        super().add_text(_(text) if text and text != _SUPPRESS else text)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        return _(action.help) if action.help and action.help != _SUPPRESS else action.help

    def _split_lines(self, text: str, width: int) -> list[str]:
        if not _WIDE.search(text):
            return super()._split_lines(text, width)
        return _wrap_wide(" ".join(text.split()), width)


#: Characters a terminal draws two columns wide (CJK), which argparse's wrapping counts as one.
_WIDE = re.compile(
    r"[\u1100-\u115f\u2e80-\u303e\u3040-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]"
)
_NO_LINE_START = set("，。、；：！？）」』】》”’")
_NO_LINE_END = set("（「『【《“‘")
_TOKENS = re.compile(rf"{_WIDE.pattern}|[^\s{_WIDE.pattern[1:-1]}]+|\s+")


def _wrap_wide(text: str, width: int) -> list[str]:
    """Wrap text mixing CJK and Latin to ``width`` terminal columns.

    A CJK character may end a line anywhere and takes two columns; a Latin word (an option
    name, a path) is kept whole. As Chinese typesetting does, closing punctuation never
    starts a line and an opening bracket never ends one.
    """
    lines: list[str] = []
    line, used = "", 0
    for token in _TOKENS.findall(text):
        if token.isspace():
            if line:
                line, used = line + " ", used + 1
            continue
        size = 2 * len(token) if _WIDE.match(token) else len(token)
        if line and used + size > width and token not in _NO_LINE_START:
            carried = line[-1] if line[-1] in _NO_LINE_END else ""
            lines.append(line[: len(line) - len(carried)].rstrip())
            line, used = carried, 2 * len(carried)
        line, used = line + token, used + size
    if line.strip():
        lines.append(line.rstrip())
    return lines or [""]


class _Parser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line on stderr.

    A missing sub-command prints this level's help first (on stderr: it is still a usage
    error, exit status 2, as argparse does for every usage error).
    """

    def __init__(
        self, *args: Any, parents: Sequence[argparse.ArgumentParser] = (), **kw: Any
    ) -> None:
        kw.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kw)
        self._positionals.title = _("positional arguments")
        self._optionals.title = _("options")
        for action in self._actions:
            if isinstance(action, argparse._HelpAction):
                action.help = "show this help message and exit"  # translated when shown
        # Parents are added once the titles are translated, as argparse would add them, so
        # that their options join this parser's groups instead of a second "options" group.
        for parent in parents:
            self._add_container_actions(parent)
            self._defaults.update(parent._defaults)

    def error(self, message: str) -> NoReturn:
        label = _("error")
        if message.startswith("the following arguments are required: ") and (
            message.endswith(("COMMAND", "ACTION"))
        ):
            self.print_help(sys.stderr)
            sys.stderr.write("\n")
            word = "COMMAND" if message.endswith("COMMAND") else "ACTION"
            choose = _("choose a {word} from the list above").format(word=word)
            self.exit(2, f"{PROG}: {label}: {choose}\n")
        text = _("{message} (see '{prog} --help')").format(
            message=_argparse_message(message), prog=self.prog
        )
        self.exit(2, f"{self.prog}: {label}: {text}\n")


#: argparse's own error sentences (English in the standard library) -> our catalogue.
_ARGPARSE_MESSAGES: list[tuple[re.Pattern[str], Callable[[], str]]] = [
    (
        re.compile(r"the following arguments are required: (?P<args>.+)", re.S),
        lambda: _("the following arguments are required: {args}"),
    ),
    (
        re.compile(r"unrecognized arguments: (?P<args>.+)", re.S),
        lambda: _("unrecognized arguments: {args}"),
    ),
    (
        re.compile(r"one of the arguments (?P<args>.+) is required", re.S),
        lambda: _("one of the arguments {args} is required"),
    ),
    (
        re.compile(r"argument (?P<argument>[^:]+): (?P<detail>.+)", re.S),
        lambda: _("argument {argument}: {detail}"),
    ),
    (
        re.compile(r"invalid choice: (?P<value>.+?) \(choose from (?P<choices>.+)\)", re.S),
        lambda: _("invalid choice: {value} (choose from {choices})"),
    ),
    (
        re.compile(r"not allowed with argument (?P<other>.+)", re.S),
        lambda: _("not allowed with argument {other}"),
    ),
    (re.compile(r"expected one argument"), lambda: _("expected one argument")),
    (re.compile(r"expected at least one argument"), lambda: _("expected at least one argument")),
    (
        re.compile(r"ambiguous option: (?P<option>\S+) could match (?P<matches>.+)", re.S),
        lambda: _("ambiguous option: {option} could match {matches}"),
    ),
]


def _argparse_message(message: str) -> str:
    """An argparse error sentence in the user's language (unknown sentences stay as they are)."""
    for pattern, template in _ARGPARSE_MESSAGES:
        match = pattern.fullmatch(message)
        if match:
            parts = {
                k: _argparse_message(v) if k == "detail" else v
                for k, v in match.groupdict().items()
            }
            return template().format(**parts)
    return message


class _Version(argparse.Action):
    """``--version``: the installed distributions' versions, read only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=_SUPPRESS, **kw)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kw: Any) -> None:
        from importlib.metadata import PackageNotFoundError, version

        def of(dist: str) -> str:
            try:
                return version(dist)
            except PackageNotFoundError:
                return "not installed"

        parts = ", ".join(
            f"{name} {of('hermes-memory-' + name)}" for name in ("core", "builtin", "sessions")
        )
        sys.stdout.write(f"{PROG} {of('hermes-memory-cli')} ({parts})\n")
        parser.exit()


def _common(*, suppress: bool) -> argparse.ArgumentParser:
    """The options accepted before the command and again after it."""
    parent = _Parser(add_help=False)
    default: Any = _SUPPRESS if suppress else None
    parent.add_argument(
        "--home",
        metavar="DIR",
        default=default,
        help="Hermes home directory (default: $HERMES_HOME or ~/.hermes)",
    )
    parent.add_argument(
        "--profile", metavar="NAME", default=default, help="use <home>/profiles/NAME"
    )
    parent.add_argument(
        "--json",
        action="store_true",
        default=_SUPPRESS if suppress else False,
        help="machine-readable JSON output",
    )
    parent.add_argument(
        "--debug",
        action="store_true",
        default=_SUPPRESS if suppress else False,
        help="show logs and tracebacks",
    )
    return parent


def _handler(parser: argparse.ArgumentParser, target: str) -> None:
    parser.set_defaults(_handler=target)


def _yes(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")


def build_parser() -> argparse.ArgumentParser:
    """The complete argument parser (command handlers are referenced, not imported)."""
    parser = _Parser(
        prog=PROG,
        description="Long-term memory for LLM agents: curated memory, session archive, plugins.",
        parents=[_common(suppress=False)],
    )
    parser.add_argument("--version", action=_Version, help="show the installed versions and exit")
    common = [_common(suppress=True)]
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def add(group: Any, name: str, help_text: str, **kw: Any) -> argparse.ArgumentParser:
        result: argparse.ArgumentParser = group.add_parser(
            name, help=help_text, description=help_text, parents=common, **kw
        )
        return result

    # ---------------------------------------------------------------- memory
    memory = add(sub, "memory", "curated memory: MEMORY.md (agent notes) and USER.md (profile)")
    msub = memory.add_subparsers(dest="memory_command", metavar="ACTION", parser_class=_Parser)
    msub.required = True
    target_help = "memory (MEMORY.md, default) or user (USER.md)"

    p = add(msub, "show", "entries, usage and the snapshot the next session will see")
    p.add_argument("--target", choices=["memory", "user"], help="only this file (default: both)")
    _handler(p, "memory:show")

    allow_help = (
        "write it even though the threat scan flags it (you wrote it and trust it; the "
        "approval is recorded with the entry)"
    )
    p = add(msub, "add", "add an entry (same rules as the agent's memory tool)")
    p.add_argument("content", help="the entry text ('-' reads standard input)")
    p.add_argument("--target", choices=["memory", "user"], default="memory", help=target_help)
    p.add_argument("--allow-flagged", action="store_true", help=allow_help)
    _handler(p, "memory:add")

    p = add(msub, "replace", "replace the entry containing OLD_TEXT with NEW_CONTENT")
    p.add_argument("old_text", help="the entry, or a short unique part of it")
    p.add_argument("content", help="the complete new entry ('-' reads standard input)")
    p.add_argument("--target", choices=["memory", "user"], default="memory", help=target_help)
    p.add_argument("--allow-flagged", action="store_true", help=allow_help)
    _yes(p)
    _handler(p, "memory:replace")

    p = add(msub, "remove", "remove the entry containing OLD_TEXT")
    p.add_argument("old_text", help="the entry, or a short unique part of it")
    p.add_argument("--target", choices=["memory", "user"], default="memory", help=target_help)
    _yes(p)
    _handler(p, "memory:remove")

    p = add(msub, "edit", "edit the file in $EDITOR (needs a terminal); validated before saving")
    p.add_argument("--target", choices=["memory", "user"], default="memory", help=target_help)
    p.add_argument(
        "--allow-flagged",
        action="store_true",
        help="keep entries the threat scan "
        "flags (you wrote them and trust them; the approval is recorded)",
    )
    _handler(p, "memory:edit")

    p = add(msub, "pending", "changes staged for approval (background review, write_approval)")
    p.add_argument(
        "pending_action",
        nargs="?",
        choices=["list", "apply", "reject"],
        metavar="list|apply|reject",
        help="list proposals (default), apply one, or reject one",
    )
    p.add_argument("pending_id", nargs="?", help="the proposal's id (shown by list)")
    _handler(p, "memory:pending")

    p = add(msub, "export", "write MEMORY.md and USER.md (Hermes format) into a directory")
    p.add_argument("directory", help="where to write the files (created when missing)")
    p.add_argument("--force", action="store_true", help="overwrite files already there")
    _handler(p, "memory_files:export_")

    p = add(msub, "import", "load MEMORY.md / USER.md from a directory (memory.backend: postgres)")
    p.add_argument("directory", help="a directory holding MEMORY.md and/or USER.md")
    _yes(p)
    _handler(p, "memory_files:import_")

    # ---------------------------------------------------------------- sessions
    sessions = add(sub, "sessions", "the session archive (<home>/hermes-memory/sessions.db)")
    ssub = sessions.add_subparsers(dest="sessions_command", metavar="ACTION", parser_class=_Parser)
    ssub.required = True

    p = add(ssub, "list", "list sessions, newest first")
    p.add_argument(
        "--limit",
        type=_bounded(1, MAX_LIST),
        default=20,
        help=f"at most N, 1 to {MAX_LIST:,} (default 20)",
    )
    p.add_argument("--all", action="store_true", help="every session (overrides --limit)")
    p.add_argument("--source", help="only sessions from this source (cli, telegram, ...)")
    _time_filters(p, "sessions")
    p.add_argument(
        "--role",
        action="append",
        type=_role,
        metavar="ROLE",
        help="only sessions with messages of this role (repeatable, or comma-separated)",
    )
    _handler(p, "sessions:list_")

    p = add(ssub, "show", "a session and its messages")
    p.add_argument("session_id", metavar="ID", help="session id or a unique prefix of it")
    p.add_argument(
        "--around", type=_positive_int, metavar="MESSAGE_ID", help="only messages near this one"
    )
    p.add_argument(
        "--window",
        type=_bounded(0, MAX_WINDOW),
        default=5,
        help=f"messages each side of --around, 0 to {MAX_WINDOW} (default 5)",
    )
    _handler(p, "sessions:show")

    p = add(ssub, "search", "full-text search over every message (any language)")
    p.add_argument(
        "query", nargs="+", help='words, "a phrase", prefix*, OR, NOT; CJK works as typed'
    )
    p.add_argument(
        "--limit",
        type=_bounded(1, MAX_SEARCH),
        default=10,
        help=f"show the N best hits, 1 to {MAX_SEARCH:,} (default 10)",
    )
    p.add_argument(
        "--role",
        action="append",
        type=_role,
        metavar="ROLE",
        help=f"only messages of this role: {', '.join(ROLES)} (repeatable, or comma-separated)",
    )
    p.add_argument("--source", help="only sessions from this source (cli, telegram, ...)")
    _time_filters(p, "messages")
    p.add_argument(
        "--lexical",
        action="store_true",
        help="rank by the words only, even when an embedder is configured",
    )
    _handler(p, "sessions:search")

    p = add(ssub, "rename", "set a session's title")
    p.add_argument("session_id", metavar="ID", help="session id or a unique prefix of it")
    p.add_argument("title", help="the new title ('' clears it)")
    _handler(p, "sessions:rename")

    p = add(ssub, "delete", "delete a session and its messages")
    p.add_argument("session_id", metavar="ID", help="session id or a unique prefix of it")
    _yes(p)
    _handler(p, "sessions:delete")

    p = add(ssub, "prune", "delete ended sessions older than DAYS days")
    p.add_argument(
        "--older-than", type=_days, required=True, metavar="DAYS", help="age in days (e.g. 90)"
    )
    _yes(p)
    _handler(p, "sessions:prune")

    p = add(ssub, "export", "write sessions as JSON Lines (all, or the given ids)")
    p.add_argument("session_ids", nargs="*", metavar="ID", help="session ids or unique prefixes")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write here (default: standard output); with --format markdown and several"
        " sessions, a directory that gets one FILE per session",
    )
    p.add_argument(
        "--format",
        choices=["jsonl", "markdown"],
        default="jsonl",
        help="jsonl (default: the re-importable export) or markdown (to read)",
    )
    _yes(p)
    _handler(p, "sessions:export")

    p = add(ssub, "import", "import a JSONL export, or a Hermes state.db with --from-hermes")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("file", nargs="?", metavar="FILE", help="a JSONL export ('-' = stdin)")
    src.add_argument(
        "--from-hermes",
        metavar="PATH",
        nargs="?",
        const="",
        help="a Hermes Agent state.db (default: the home's own <home>/state.db)",
    )
    _handler(p, "sessions:import_")

    p = add(ssub, "end", "end a session left open (a crashed host), or every one idle HOURS")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("session_id", nargs="?", metavar="ID", help="session id or unique prefix")
    which.add_argument(
        "--stale", type=_days, metavar="HOURS", help="every open session idle for HOURS hours"
    )
    _handler(p, "sessions:end")

    p = add(
        ssub,
        "migrate-out",
        "move an archive an earlier release kept inside Hermes' state.db into our own file",
    )
    p.add_argument(
        "--from-hermes", metavar="PATH", help="Hermes' database (default: <home>/state.db)"
    )
    _yes(p)
    _handler(p, "sessions:migrate_out")

    p = add(
        ssub,
        "migrate",
        "copy the archive to another backend (PostgreSQL DSN or SQLite file), resumable",
    )
    p.add_argument(
        "--to",
        required=True,
        metavar="TARGET",
        help="postgresql://... (rows of postgres.owner, or --owner) or a SQLite file path",
    )
    p.add_argument("--owner", help="owner key in the PostgreSQL target (default: postgres.owner)")
    _handler(p, "sessions:migrate")

    p = add(ssub, "stats", "counts and sizes of the archive")
    _handler(p, "sessions:stats")

    # `sessions browse`: the interactive picker (prompt_toolkit, imported when it runs)
    p = add(ssub, "browse", "pick a session interactively: filter, preview, rename, delete")
    p.add_argument(
        "--limit",
        type=_bounded(1, MAX_LIST),
        default=None,
        help="at most N newest sessions (picker: 1,000; list output: 20)",
    )
    p.add_argument("--all", action="store_true", help="every session (overrides --limit)")
    p.add_argument("--source", help="only sessions from this source (cli, telegram, ...)")
    _handler(p, "_browse:browse")

    p = add(
        ssub,
        "embed",
        "embed messages that have no vector yet (hybrid recall; needs sessions.embedder)",
    )
    p.add_argument(
        "--limit",
        type=int,
        help="embed at most N messages with the quality model (default: all; the fast"
        " tier always embeds every pending message)",
    )
    p.add_argument("--batch-size", type=int, default=32, help="messages per embedder call")
    p.add_argument(
        "--reset",
        action="store_true",
        help="drop every stored vector first (after changing the model); without an"
        " embedder configured, only drops them",
    )
    _handler(p, "_embed:embed")

    _add_resume_undo(add, ssub)

    # ---------------------------------------------------------------- plugins / provider
    p = add(sub, "plugins", "installed memory providers and plugins that failed to load")
    p.add_argument(
        "action",
        nargs="?",
        choices=["list", "install"],
        help="'list' is the same as no action; 'install NAME' adds a plugin",
    )
    p.add_argument(
        "name",
        nargs="?",
        metavar="NAME",
        help="install: a provider (mem0, honcho, ...) or a distribution name",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="install: print the command that would run, and run nothing",
    )
    _handler(p, "plugins:plugins")

    provider = add(sub, "provider", "the external memory provider (memory.provider)")
    psub = provider.add_subparsers(dest="provider_command", metavar="ACTION", parser_class=_Parser)
    psub.required = True
    p = add(psub, "status", "the configured provider, its availability and health")
    _handler(p, "plugins:provider_status")
    p = add(psub, "use", "select provider NAME in config.yaml (comments and other keys kept)")
    p.add_argument("name", help="a provider name shown by 'hermes-memory plugins'")
    _handler(p, "plugins:provider_use")
    p = add(psub, "off", "use only the builtin memory and the session archive")
    _handler(p, "plugins:provider_off")

    # ---------------------------------------------------------------- doctor / demo / mcp
    p = add(sub, "doctor", "check the home, files, SQLite, locks, config and providers")
    _handler(p, "doctor:doctor")

    p = add(sub, "demo", "a scripted multi-session conversation on a temporary home")
    p.add_argument("--keep", action="store_true", help="keep the temporary home and print it")
    _handler(p, "demo:demo")

    _add_everyday(sub, add)

    # ---------------------------------------------------------------- dashboard
    p = add(sub, "dashboard", "local web dashboard: memory, pending, sessions (needs [dashboard])")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=_bounded(0, 65535), default=9119, help="0 picks a free port")
    p.add_argument("--no-browser", action="store_true", help="do not open a web browser")
    p.add_argument(
        "--token-file", metavar="FILE", help="login token (default <home>/dashboard/token)"
    )
    p.add_argument("--detach", action="store_true", help="run in the background")
    p.add_argument("--child", action="store_true", help=_SUPPRESS)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--status", action="store_true", help="show the running dashboard's link")
    which.add_argument("--stop", action="store_true", help="stop the running dashboard")
    _handler(p, "dashboard:dashboard")

    _register_contributed(sub, common)
    return parser


def _add_resume_undo(add: Any, ssub: Any) -> None:
    """``sessions resume`` and ``sessions undo`` (the conversation loop's commands)."""
    p = add(ssub, "resume", "print a conversation to resume it, at its compression tip")
    p.add_argument(
        "target", nargs="?", metavar="ID|TITLE", help="session id, unique prefix, or title"
    )
    p.add_argument(
        "--latest", action="store_true", help="the most recently active session with messages"
    )
    p.add_argument("--source", help="with --latest: only sessions from this source (cli, ...)")
    _handler(p, "sessions:resume")

    p = add(ssub, "undo", "take back the last N exchanges of a conversation (default 1)")
    p.add_argument("session_id", metavar="ID", help="session id or a unique prefix of it")
    p.add_argument("n", nargs="?", type=_positive_int, default=1, metavar="N", help="exchanges")
    _handler(p, "sessions:undo")


def _add_everyday(sub: Any, add: Any) -> None:
    """``config`` and ``completion``."""
    config = add(sub, "config", "read and change config.yaml (typed, comments kept)")
    csub = config.add_subparsers(dest="config_command", metavar="ACTION", parser_class=_Parser)
    csub.required = True
    p = add(csub, "get", "the value in effect of KEY (from the file, else the default)")
    p.add_argument("key", metavar="KEY", help="section.key, e.g. memory.nudge_interval")
    _handler(p, "config:get")
    p = add(csub, "set", "set KEY to VALUE (checked; only that line of the file changes)")
    p.add_argument("key", metavar="KEY", help="section.key, e.g. sessions.follow_hermes")
    p.add_argument("value", metavar="VALUE", help="true/false, a number or text, as the key takes")
    _handler(p, "config:set_")
    p = add(csub, "unset", "remove KEY from the file (its default applies again)")
    p.add_argument("key", metavar="KEY", help="section.key")
    _handler(p, "config:unset")
    p = add(csub, "list", "every key with its value; unknown keys in the file are reported")
    p.add_argument("prefix", nargs="?", metavar="SECTION", help="only this section (or key)")
    _handler(p, "config:list_")

    p = add(sub, "completion", "print a shell completion script (bash, zsh or fish)")
    p.add_argument("shell", choices=["bash", "zsh", "fish"], help="the shell to complete in")
    _handler(p, "completion:completion")


def _time_filters(parser: argparse.ArgumentParser, what: str) -> None:
    """``--since`` / ``--until`` (YYYY-MM-DD or ISO 8601, local time unless it says)."""
    parser.add_argument(
        "--since",
        type=_moment(end=False),
        metavar="DATE",
        help=f"only {what} from DATE on (YYYY-MM-DD or ISO 8601, e.g. 2026-03-05T09:00)",
    )
    parser.add_argument(
        "--until",
        type=_moment(end=True),
        metavar="DATE",
        help=f"only {what} up to DATE, inclusive (a bare date means its whole day)",
    )


def _moment(*, end: bool) -> Any:
    """An argparse type: a date or date-time as epoch seconds (a bare date at the end
    of its day when ``end``)."""

    def parse(text: str) -> float:
        from datetime import datetime, timedelta

        value = text.strip()
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a date as YYYY-MM-DD or ISO 8601 (2026-03-05T09:00), got {text!r}"
            ) from None
        if end and len(value) == 10:  # YYYY-MM-DD: the whole day
            moment += timedelta(days=1)
            return moment.timestamp() - 1e-6
        return moment.timestamp()

    return parse


#: Entry-point group through which other distributions add command groups.
CLI_ENTRY_POINT_GROUP = "hermes_memory.cli"


def _register_contributed(sub: Any, common: list[argparse.ArgumentParser]) -> None:
    """Command groups of other distributions (entry points of `CLI_ENTRY_POINT_GROUP`).

    Each entry point names ``register(subparsers, *, parents)``. One that fails to load or
    to register becomes a stub command saying why; ``mcp`` without its distribution is a
    stub saying how to install it.
    """
    from importlib.metadata import entry_points

    from hermes_memory_cli._install import install_command

    problems: dict[str, str] = {}
    registered: set[str] = set()
    for ep in entry_points(group=CLI_ENTRY_POINT_GROUP):
        dist = getattr(getattr(ep, "dist", None), "name", None) or ep.value
        try:
            register = ep.load()
            params = inspect.signature(register).parameters
            register(sub, **({"parents": common} if "parents" in params else {}))
        except ModuleNotFoundError as exc:  # the metadata is there, the package is not
            missing = exc.name is not None and ep.module.startswith(exc.name)
            problems[ep.name] = (
                _("install {dist}: {command}").format(dist=dist, command=install_command(dist))
                if missing
                else _("{dist} failed to load: {error}").format(dist=dist, error=exc)
            )
            continue
        except Exception as exc:
            problems[ep.name] = _("{dist} failed to register its commands: {error}").format(
                dist=dist, error=f"{type(exc).__name__}: {exc}"
            )
            continue
        registered.add(ep.name)
    if "mcp" not in registered and "mcp" not in problems:
        problems["mcp"] = _("install {dist}: {command}").format(
            dist="hermes-memory-mcp-server", command=install_command("hermes-memory-mcp-server")
        )
    for name, problem in problems.items():
        if name in registered:
            continue
        stub = sub.add_parser(name, help=_("unavailable: {problem}").format(problem=problem))
        ssub = stub.add_subparsers(dest=f"{name}_command", metavar="ACTION", parser_class=_Parser)
        ssub.required = True
        serve = ssub.add_parser("serve", help="serve over stdio", parents=common)
        serve.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        serve.set_defaults(_missing=problem)


# -------------------------------------------------------------------- argument types
#: Largest ``sessions list --limit`` (``--all`` lists everything).
MAX_LIST = 100_000
#: Largest ``sessions search --limit``.
MAX_SEARCH = 1_000
#: Largest ``sessions show --window``.
MAX_WINDOW = 1_000
#: Message roles of the archive (``sessions search --role``).
ROLES = ("user", "assistant", "tool", "system")


def _bounded(low: int, high: int) -> Any:
    """An argparse type: a whole number from ``low`` to ``high``."""

    def parse(text: str) -> int:
        value = _int(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                _("expected a number from {low} to {high:,}, got {text!r}").format(
                    low=low, high=high, text=text
                )
            )
        return value

    return parse


def _role(text: str) -> list[str]:
    roles = [part.strip().lower() for part in text.split(",") if part.strip()]
    bad = [r for r in roles if r not in ROLES]
    if bad or not roles:
        raise argparse.ArgumentTypeError(
            _("unknown role {role}; choose from {roles}").format(
                role=", ".join(bad) or repr(text), roles=", ".join(ROLES)
            )
        )
    return roles


def _int(text: str) -> int:
    try:
        return int(text.strip().replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("expected a whole number, got {text!r}").format(text=text)
        ) from None


def _positive_int(text: str) -> int:
    value = _int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(
            _("expected a number greater than 0, got {text!r}").format(text=text)
        )
    return value


def _non_negative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(
            _("expected 0 or a positive number, got {text!r}").format(text=text)
        )
    return value


def _days(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("expected a number of days, got {text!r}").format(text=text)
        ) from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(
            _("expected 0 or more days, got {text!r}").format(text=text)
        )
    return value


# -------------------------------------------------------------------- running
class _OneLine(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = " ".join(record.getMessage().split())
        return f"{PROG}: {record.levelname.lower()}: {text}"


def _setup_logging(debug: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if debug:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    else:
        handler.setFormatter(_OneLine())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if debug else logging.WARNING)
    if not debug:
        # Plugin load failures are shown by `plugins`, `provider` and `doctor` themselves,
        # and an unreadable memory file by the command that needed it (once, with the fix).
        logging.getLogger("hermes_memory_core.plugins").setLevel(logging.ERROR)
        logging.getLogger("hermes_memory_builtin").setLevel(logging.ERROR)


def _run(args: argparse.Namespace) -> int:
    from hermes_memory_cli._context import CLIError, Context

    missing = getattr(args, "_missing", None)
    if missing:
        raise CLIError(missing)
    target = getattr(args, "_handler", None)
    if target is None:
        func = getattr(args, "func", None)
        if func is None:
            raise CLIError(_("no command given (see 'hermes-memory --help')"), code=2)
        return int(func(args) or 0)
    module_name, func_name = target.split(":")
    module = importlib.import_module(f"hermes_memory_cli._commands.{module_name}")
    return int(getattr(module, func_name)(Context(args)) or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (the console script exits with it)."""
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    debug = bool(getattr(args, "debug", False)) or bool(os.environ.get("HERMES_MEMORY_DEBUG"))
    _setup_logging(debug)
    from hermes_memory_cli._context import CLIError

    try:
        return _run(args)
    except CLIError as exc:
        if debug:
            import traceback

            traceback.print_exc()
        _fail(str(exc))
        return exc.code
    except KeyboardInterrupt:
        _fail(_("interrupted"))
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): it has what it wanted. Stop quietly, exit 0,
        # and point stdout at /dev/null so the final flush at exit cannot fail again.
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:
        if debug:
            import traceback

            traceback.print_exc()
        detail = " ".join(str(exc).split())
        _fail(
            _("unexpected error: {error} (run with --debug for the traceback)").format(
                error=f"{type(exc).__name__}: {detail}"
            )
        )
        return 1


def _fail(message: str) -> None:
    text = " ".join(message.split())
    label = _("error")
    sys.stderr.write(f"{PROG}: {label}: {text}\n")
    sys.stderr.flush()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
