"""``hermes-memory dashboard``: start, stop or check the local web dashboard.

Only this module's handler imports the web stack (`hermes_memory_cli._dashboard`), and only
when a server actually starts: ``--status`` and ``--stop`` need nothing but the standard
library, and without the ``dashboard`` extra the command says how to install it.

State lives in ``<home>/dashboard/`` (mode 0700): ``token`` (0600, made on first use),
``state.json`` (pid, host and port of the running server) and ``dashboard.log`` (a
detached server's output).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from hermes_memory_cli._context import CLIError, Context
from hermes_memory_cli._dashboard._state import LOG_FILE, STATE_DIR, STATE_FILE, announce
from hermes_memory_cli._i18n import cli_gettext as _
from hermes_memory_core.kit import make_private_dirs

#: Modules the server needs, with the distribution that provides each.
_NEEDED = {
    "starlette": "starlette",
    "uvicorn": "uvicorn",
    "jinja2": "jinja2",
    "multipart": "python-multipart",
    "hermes_memory_mcp_server": "hermes-memory-mcp-server",
}
_START_WAIT_S = 30.0
_STOP_WAIT_S = 10.0


def dashboard(ctx: Context) -> int:
    """Run the dashboard (foreground or ``--detach``), or ``--status`` / ``--stop`` it."""
    home = ctx.require_home()
    state_dir = home / STATE_DIR
    if ctx.args.stop:
        return _stop(ctx, state_dir)
    if ctx.args.status:
        return _status(ctx, state_dir)
    _check_installed()
    running = _running(state_dir)
    if running is not None:
        raise CLIError(
            _(
                "a dashboard for {home} is already running at {url} (pid {pid}); see it with "
                "`hermes-memory dashboard --status`, stop it with `hermes-memory dashboard --stop`"
            ).format(home=home, url=_base(running), pid=running["pid"])
        )
    if ctx.args.detach and not ctx.args.child:
        return _detach(ctx, state_dir)
    from hermes_memory_cli._dashboard._server import serve

    return serve(ctx, state_dir)


def _check_installed() -> None:
    import importlib.util

    missing = []
    for module, dist in _NEEDED.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ModuleNotFoundError, ValueError):  # ValueError: a module blocked in sys.modules
            found = False
        if not found:
            missing.append(dist)
    if missing:
        from hermes_memory_cli._install import install_command

        raise CLIError(
            _("the dashboard needs {packages}: install the extra with {command}").format(
                packages=", ".join(missing), command=install_command("hermes-memory-cli[dashboard]")
            )
        )


# ---------------------------------------------------------------------- state file
def read_state(state_dir: Path) -> dict[str, Any] | None:
    """The recorded server (``pid``, ``host``, ``port``), or None."""
    try:
        data = json.loads((state_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("pid"), int):
        return None
    if not isinstance(data.get("port"), int) or not isinstance(data.get("host"), str):
        return None
    return data


def _base(state: dict[str, Any]) -> str:
    host = str(state["host"])
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    if host in {"0.0.0.0", "[::]"}:  # noqa: S104 - naming the wildcard, not binding it
        host = "127.0.0.1"
    return f"http://{host}:{state['port']}/"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _healthz(state: dict[str, Any]) -> dict[str, Any] | None:
    """The server's own ``/healthz`` answer (it names its pid), or None."""
    url = _base(state) + "healthz"
    try:
        with urllib.request.urlopen(url, timeout=3) as response:  # noqa: S310 - http://loopback
            data = json.loads(response.read().decode("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _running(state_dir: Path) -> dict[str, Any] | None:
    """The recorded server when it is alive and answers as itself; a stale record is removed."""
    state = read_state(state_dir)
    if state is None:
        return None
    if _alive(state["pid"]):
        health = _healthz(state)
        if health is not None and health.get("pid") == state["pid"]:
            return state
    with contextlib.suppress(OSError):
        (state_dir / STATE_FILE).unlink()
    return None


def _token_value(ctx: Context, state_dir: Path) -> str | None:
    from hermes_memory_cli._dashboard._token import token_for

    try:
        return token_for(ctx, state_dir, create=False)
    except CLIError:
        return None


def _status(ctx: Context, state_dir: Path) -> int:
    state = _running(state_dir)
    if ctx.json:
        ctx.emit_json(
            {"running": state is not None, **({"url": _base(state), **state} if state else {})}
        )
        return 0 if state is not None else 3
    if state is None:
        ctx.say(_("The dashboard is not running (start it with `hermes-memory dashboard`)."))
        return 3
    token = _token_value(ctx, state_dir)
    announce(_base(state) + (f"?token={token}" if token else ""))
    ctx.say(
        _("running, pid {pid}, since {started}").format(
            pid=state["pid"], started=time.ctime(float(state.get("started", 0)))
        )
    )
    return 0


def _stop(ctx: Context, state_dir: Path) -> int:
    state = _running(state_dir)
    if state is None:
        if ctx.json:
            ctx.emit_json({"stopped": False, "running": False})
        else:
            ctx.say(_("The dashboard is not running; nothing to stop."))
        return 0
    pid = int(state["pid"])
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    except PermissionError:
        raise CLIError(
            _("the dashboard (pid {pid}) belongs to another user; cannot stop it").format(pid=pid)
        ) from None
    deadline = time.monotonic() + _STOP_WAIT_S
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.1)
    if _alive(pid):
        raise CLIError(
            _("the dashboard (pid {pid}) did not stop within {seconds} s").format(
                pid=pid, seconds=f"{_STOP_WAIT_S:g}"
            )
        )
    with contextlib.suppress(OSError):
        (state_dir / STATE_FILE).unlink()
    if ctx.json:
        ctx.emit_json({"stopped": True, "pid": pid})
    else:
        ctx.say(_("Stopped the dashboard (pid {pid}).").format(pid=pid))
    return 0


def _detach(ctx: Context, state_dir: Path) -> int:
    """Start the server as a background process; print its line once it listens."""
    from hermes_memory_cli._dashboard._token import token_for

    make_private_dirs(state_dir)
    token_for(ctx, state_dir, create=True)  # token problems are reported here, not in a log
    args = [sys.executable, "-m", "hermes_memory_cli._cli"]
    if getattr(ctx.args, "home", None) is not None:
        args += ["--home", str(ctx.home)]
    if getattr(ctx.args, "profile", None):
        args += ["--profile", str(ctx.args.profile)]
    args += ["dashboard", "--host", ctx.args.host, "--port", str(ctx.args.port), "--no-browser"]
    if ctx.args.token_file:
        args += ["--token-file", str(Path(ctx.args.token_file).expanduser().resolve())]
    args += ["--detach", "--child"]
    log = state_dir / LOG_FILE
    with contextlib.suppress(OSError):
        (state_dir / STATE_FILE).unlink()
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "ab") as out:
        child = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
            close_fds=True,
        )
    deadline = time.monotonic() + _START_WAIT_S
    while time.monotonic() < deadline:
        state = read_state(state_dir)
        if state is not None and state["pid"] == child.pid:
            break
        if child.poll() is not None:
            raise CLIError(
                _("the dashboard did not start (exit status {status}); see {log}").format(
                    status=child.returncode, log=log
                )
            )
        time.sleep(0.1)
    else:
        child.terminate()
        raise CLIError(
            _("the dashboard did not start within {seconds} s; see {log}").format(
                seconds=f"{_START_WAIT_S:g}", log=log
            )
        )
    token = token_for(ctx, state_dir, create=False)
    url = _base(state) + f"?token={token}"
    announce(url)
    ctx.note(
        _(
            "Running in the background (pid {pid}); stop it with `hermes-memory dashboard --stop`."
        ).format(pid=child.pid)
    )
    if not ctx.args.no_browser:
        import webbrowser

        webbrowser.open(url)
    return 0
