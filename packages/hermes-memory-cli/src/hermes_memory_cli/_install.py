"""The command that installs a plugin into *this* installation of the CLI.

``pip install hermes-memory-mem0`` is wrong advice for most people: with pipx or ``uv tool``
the CLI lives in its own virtual environment, and a plain ``pip`` installs somewhere the CLI
never looks. The environment is recognised by the files those tools leave in it:

* pipx: ``pipx_metadata.json`` in the venv → ``pipx inject hermes-memory-cli DIST``;
* uv tool: ``uv-receipt.toml`` in the venv → ``uv tool install hermes-memory-cli --with …``
  (repeating the ``--with`` packages already installed, which uv would otherwise drop);
* anything else: ``python -m pip install DIST`` with the interpreter running the CLI
  (``uv pip install --python …`` when that environment has no pip, as uv-made venvs do).
"""

from __future__ import annotations

import importlib.util
import shlex
import shutil
import sys
from pathlib import Path

__all__ = ["install_command"]

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
    """The shell command that adds ``dists`` to the environment running this CLI.

    ``prefix`` is the environment to inspect (default ``sys.prefix``).
    """
    root = Path(prefix or sys.prefix)
    names = " ".join(shlex.quote(d) for d in dists)
    if (root / "pipx_metadata.json").is_file():
        return f"pipx inject {CLI_DIST} {names}"
    receipt = root / "uv-receipt.toml"
    if receipt.is_file():
        wanted = list(dict.fromkeys([*_uv_tool_extras(receipt), *dists]))
        withs = " ".join(f"--with {shlex.quote(d)}" for d in wanted)
        return f"uv tool install {CLI_DIST} {withs}"
    if prefix is None and importlib.util.find_spec("pip") is None and shutil.which("uv"):
        return f"uv pip install --python {shlex.quote(sys.executable)} {names}"
    return f"{_python()} -m pip install {names}"
