"""The command that installs a package into *this* installation of hermes-memory.

``pip install hermes-memory-mem0`` is wrong advice for most people: with pipx or ``uv tool``
the CLI lives in its own virtual environment, and a plain ``pip`` installs somewhere the CLI
never looks. The environment is recognised by the files those tools leave in it:

* pipx: ``pipx_metadata.json`` in the venv → ``pipx inject hermes-memory-cli DIST``;
* uv tool: ``uv-receipt.toml`` in the venv → ``uv tool install hermes-memory-cli --with …``
  (repeating the ``--with`` packages already installed, which uv would otherwise drop);
* anything else: ``python -m pip install DIST`` with the interpreter running this code
  (``uv pip install --python …`` when that environment has no pip, as uv-made venvs do).

Every hint that tells a person to install something (a missing plugin, the embedder extra,
the PostgreSQL backend) comes from here, so it is right for how they installed.
"""

from __future__ import annotations

import importlib.util
import shlex
import shutil
import sys
from pathlib import Path

__all__ = ["CLI_DIST", "install_argv", "install_command", "installer_kind"]

CLI_DIST = "hermes-memory-cli"


def _uv_tool_extras(receipt: Path) -> list[str]:
    """The ``--with`` requirements recorded in a uv tool receipt (besides the CLI itself)."""
    import tomllib

    try:
        data = tomllib.loads(receipt.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    extras: list[str] = []
    for item in data.get("tool", {}).get("requirements", []):
        name = item.get("name") if isinstance(item, dict) else None
        if isinstance(name, str) and name.lower().replace("_", "-") != CLI_DIST:
            extras.append(name)
    return extras


def installer_kind(prefix: str | None = None) -> str:
    """How the environment at ``prefix`` (default ``sys.prefix``) was made: ``"pipx"``,
    ``"uv-tool"``, ``"uv-pip"`` (a venv without pip, uv at hand) or ``"pip"``."""
    root = Path(prefix or sys.prefix)
    if (root / "pipx_metadata.json").is_file():
        return "pipx"
    if (root / "uv-receipt.toml").is_file():
        return "uv-tool"
    if prefix is None and importlib.util.find_spec("pip") is None and shutil.which("uv"):
        return "uv-pip"
    return "pip"


def install_argv(*dists: str, prefix: str | None = None) -> list[str]:
    """The command (an argument list, no shell) that adds ``dists`` to the environment."""
    root = Path(prefix or sys.prefix)
    kind = installer_kind(prefix)
    if kind == "pipx":
        return ["pipx", "inject", CLI_DIST, *dists]
    if kind == "uv-tool":
        wanted = list(dict.fromkeys([*_uv_tool_extras(root / "uv-receipt.toml"), *dists]))
        withs = [part for d in wanted for part in ("--with", d)]
        return ["uv", "tool", "install", CLI_DIST, *withs]
    python = sys.executable if prefix is None else str(root / "bin" / "python")
    if kind == "uv-pip":
        return ["uv", "pip", "install", "--python", python, *dists]
    return [python, "-m", "pip", "install", *dists]


def _python() -> str:
    """How to name the running interpreter in a command: ``python`` when that is it."""
    found = shutil.which("python")
    try:
        if found and Path(found).resolve() == Path(sys.executable).resolve():
            return "python"
    except OSError:
        pass
    return shlex.quote(sys.executable)


def install_command(*dists: str, prefix: str | None = None) -> str:
    """`install_argv` as one line to show a person (``python -m pip`` when ``python`` is
    the running interpreter)."""
    argv = install_argv(*dists, prefix=prefix)
    if prefix is None and argv[1:3] == ["-m", "pip"] and argv[0] == sys.executable:
        return " ".join([_python(), *(shlex.quote(a) for a in argv[1:])])
    return shlex.join(argv)
