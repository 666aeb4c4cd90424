"""Bind, announce and serve the dashboard with uvicorn until interrupted."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import time
from pathlib import Path

from hermes_memory_cli._context import CLIError, Context
from hermes_memory_core.kit import make_private_dirs

__all__ = ["serve"]


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket (listening before the URL is printed: no refused first request)."""
    address = "127.0.0.1" if host.lower() == "localhost" else host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, port))
        sock.listen(socket.SOMAXCONN)
    except OSError as exc:
        sock.close()
        raise CLIError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def _shown(host: str) -> str:
    host = host.strip("[]")
    if host in {"0.0.0.0", "::"}:  # noqa: S104 - naming the wildcard, not binding it
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def serve(ctx: Context, state_dir: Path) -> int:
    """Serve in this process; returns 0 after Ctrl-C or SIGTERM."""
    import uvicorn

    from hermes_memory_cli._dashboard._app import build_app
    from hermes_memory_cli._dashboard._state import STATE_FILE, announce
    from hermes_memory_cli._dashboard._token import token_for
    from hermes_memory_core.kit import atomic_write_text
    from hermes_memory_mcp_server import is_loopback

    host: str = ctx.args.host
    port: int = ctx.args.port
    if not is_loopback(host):
        ctx.note(
            f"warning: the dashboard listens on {host}, not on loopback: anyone who can reach "
            "this address and has the link can read and change your memory. Prefer the "
            "default 127.0.0.1 with an SSH tunnel."
        )
    make_private_dirs(state_dir)
    token = token_for(ctx, state_dir, create=True)
    sock = _bind(host, port)
    actual = int(sock.getsockname()[1])
    app = build_app(ctx, token=token, host=host, port=actual)
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="on", server_header=False
    )
    server = uvicorn.Server(config)
    # From here a signal must stop us cleanly (state file removed, exit 0), also one that
    # arrives before uvicorn installs its handlers or that it re-raises after shutting down.
    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        state = {"pid": os.getpid(), "host": host, "port": actual, "started": time.time()}
        atomic_write_text(state_dir / STATE_FILE, json.dumps(state) + "\n", mode=0o600)
        url = f"http://{_shown(host)}:{actual}/?token={token}"
        announce(url)
        if not ctx.args.no_browser:
            import webbrowser

            webbrowser.open(url)
        server.run(sockets=[sock])
    except _Stopped:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()
        current = _read(state_dir / STATE_FILE)
        if current is not None and current.get("pid") == os.getpid():
            with contextlib.suppress(OSError):
                (state_dir / STATE_FILE).unlink()
    return 0


class _Stopped(Exception):
    """Ctrl-C or SIGTERM: stop serving and exit 0."""


def _stop(signum: int, frame: object) -> None:
    raise _Stopped


def _read(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
