"""Command-line entry points: ``hermes-memory-mcp`` and the ``hermes-memory mcp serve`` hook.

``hermes-memory-mcp [--home DIR] [--profile NAME] [--http PORT [--host ADDRESS]
[--token-file PATH | --no-auth]] [--verbose] [--debug] [--version]`` serves over stdio (what
MCP clients launch) or, with ``--http``, over streamable HTTP (127.0.0.1 by default, bearer
token required). The ``hermes-memory`` CLI (distribution ``hermes-memory-cli``) calls
`register` to add the same thing as ``mcp serve``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["add_serve_arguments", "main", "register", "run_serve"]


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}: give a number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"invalid port {value}: use 1-65535 (0 = any free port)")
    return value


def _host(text: str) -> str:
    import ipaddress

    value = text.strip()
    if value.lower() == "localhost":
        return "localhost"
    try:
        return str(ipaddress.ip_address(value.strip("[]")))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid address {text!r}: give an IP address such as 127.0.0.1, ::1 or 0.0.0.0"
        ) from None


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--http PORT``, ``--host``, ``--token-file``, ``--no-auth`` and ``--verbose``."""
    parser.add_argument(
        "--http",
        metavar="PORT",
        type=_port,
        default=None,
        help="serve streamable HTTP on http://127.0.0.1:PORT/mcp instead of stdio "
        "(0 picks a free port); clients must send 'Authorization: Bearer <token>'",
    )
    parser.add_argument(
        "--host",
        metavar="ADDRESS",
        type=_host,
        default=None,
        help="with --http: the address to bind (default 127.0.0.1; anything else exposes the "
        "server, token-protected but over plain HTTP, to that network)",
    )
    auth = parser.add_mutually_exclusive_group()
    auth.add_argument(
        "--token-file",
        metavar="PATH",
        default=None,
        help="with --http: read the bearer token from PATH (mode 0600, yours, not a symlink) "
        "instead of <home>/mcp/http-token, which is generated on first use",
    )
    auth.add_argument(
        "--no-auth",
        action="store_true",
        help="with --http on 127.0.0.1 or ::1 only: accept requests without a token "
        "(any local user or process can then use the memory)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="log what the server does to stderr (stdout carries the protocol)",
    )


def register(
    subparsers: Any, *, parents: Sequence[argparse.ArgumentParser] | None = None
) -> argparse.ArgumentParser:
    """Add ``mcp serve [--http PORT]`` to the ``hermes-memory`` CLI's subparsers.

    ``parents`` are the parsers carrying the CLI's common options (``--home``,
    ``--profile``, ``--debug``, ...), so they are accepted after ``serve`` too. The handler
    is stored as the ``func`` default: ``run_serve(args) -> int``. Returns the ``mcp``
    parser.
    """
    mcp_parser: argparse.ArgumentParser = subparsers.add_parser(
        "mcp",
        help="serve the memory to MCP clients (Claude Desktop, Cursor, VS Code, ...)",
        description="Model Context Protocol server for this home's memory.",
    )
    mcp_sub = mcp_parser.add_subparsers(dest="mcp_command", metavar="COMMAND")
    mcp_sub.required = True
    serve = mcp_sub.add_parser(
        "serve",
        parents=list(parents or []),
        help="serve over stdio (default) or local HTTP",
        description="Serve the memory tools (memory, session_search, the active provider's) "
        "and MEMORY.md / USER.md as resources. MCP clients launch this over stdio.",
    )
    add_serve_arguments(serve)
    serve.set_defaults(func=run_serve)
    return mcp_parser


def run_serve(args: Any) -> int:
    """Serve as ``args`` says (``home``, ``profile``, ``http``, ``verbose``, ``debug``).

    Returns the exit status: 0 after a clean shutdown, 2 for a bad configuration, 1 for
    any other failure, reported as one line on stderr (``--debug`` adds the traceback).
    ``args`` is an `argparse.Namespace`, or an object with an ``args`` attribute holding one.
    """
    namespace = args if isinstance(args, argparse.Namespace) else getattr(args, "args", args)
    from hermes_memory_core.config import ConfigError, resolve_home

    debug = bool(getattr(namespace, "debug", False)) or bool(os.environ.get("HERMES_MEMORY_DEBUG"))
    _configure_logging(verbose=bool(getattr(namespace, "verbose", False)), debug=debug)
    port = getattr(namespace, "http", None)
    host = getattr(namespace, "host", None)
    token_file = getattr(namespace, "token_file", None)
    no_auth = bool(getattr(namespace, "no_auth", False))
    if port is None:
        given = [
            name
            for name, value in (
                ("--host", host),
                ("--token-file", token_file),
                ("--no-auth", no_auth),
            )
            if value
        ]
        if given:
            print(f"hermes-memory-mcp: {', '.join(given)} needs --http PORT", file=sys.stderr)
            return 2
    try:
        home = resolve_home(
            getattr(namespace, "home", None), profile=getattr(namespace, "profile", None)
        )
        from hermes_memory_mcp_server._auth import TokenError, is_loopback
        from hermes_memory_mcp_server._server import HTTP_HOST, serve_http, serve_stdio

        if port is None:
            serve_stdio(home)
        else:
            host = host or HTTP_HOST
            if no_auth and not is_loopback(host):
                print(
                    f"hermes-memory-mcp: --no-auth is refused with --host {host}: it is "
                    "allowed only on 127.0.0.1 or ::1 (use the token instead)",
                    file=sys.stderr,
                )
                return 2
            try:
                serve_http(port, home, host=host, token_file=token_file, no_auth=no_auth)
            except TokenError as exc:
                print(f"hermes-memory-mcp: {exc}", file=sys.stderr)
                return 2
    except ConfigError as exc:
        print(f"hermes-memory-mcp: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if debug:
            logging.getLogger(__name__).exception("hermes-memory-mcp failed")
        cause = _first_leaf(exc)
        print(f"hermes-memory-mcp: {type(cause).__name__}: {cause}", file=sys.stderr)
        return 1
    return 0


def _first_leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (nested) exception groups raised by task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _configure_logging(*, verbose: bool, debug: bool) -> None:
    """Logs go to stderr (stdout carries the protocol); keep a handler the caller installed."""
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("hermes-memory-mcp: %(levelname)s: %(message)s"))
        root.addHandler(handler)
    if debug:
        root.setLevel(logging.DEBUG)
    elif verbose:
        root.setLevel(logging.INFO)
    elif root.level == logging.NOTSET or root.level > logging.WARNING:
        root.setLevel(logging.WARNING)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hermes-memory-mcp-server")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The parser of the ``hermes-memory-mcp`` console script."""
    parser = argparse.ArgumentParser(
        prog="hermes-memory-mcp",
        description="Serve hermes-memory over the Model Context Protocol (stdio by default).",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"hermes-memory-mcp (hermes-memory-mcp-server) {_version()}",
    )
    parser.add_argument(
        "--home",
        metavar="DIR",
        default=None,
        help="Hermes home directory (default: $HERMES_HOME or ~/.hermes)",
    )
    parser.add_argument("--profile", metavar="NAME", default=None, help="use <home>/profiles/NAME")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="log everything (DEBUG) to stderr and show the traceback of a failure "
        "(also HERMES_MEMORY_DEBUG=1)",
    )
    add_serve_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hermes-memory-mcp`` console script."""
    return run_serve(build_parser().parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
