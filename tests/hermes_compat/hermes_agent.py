"""The real Hermes Agent, run beside ours: a private virtual environment and a runner.

The package is installed from the registry into a venv of its own (never into ours: it pins
dozens of libraries), once per test session, with the uv that runs the suite. Each call runs a
short Python program in that venv with ``HERMES_HOME`` pointing at a test home and returns
what the program stored in ``result`` (JSON).
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

HERMES_AGENT_VERSION = "0.19.0"


def install_hermes_agent(where: Path) -> Path:
    """Create ``where`` as a venv holding ``hermes-agent``; return its Python."""
    uv = os.environ.get("UV")
    in_ci = os.environ.get("CI") == "true"
    if not uv:
        if in_ci:
            pytest.fail("UV is not set: run the suite with `uv run` as the README says")
        pytest.skip("the compatibility suite needs uv (run the suite with `uv run`)")
    python = where / "bin" / "python"
    steps = [
        [uv, "venv", "--quiet", "--python", "3.11", str(where)],
        [
            uv,
            "pip",
            "install",
            "--quiet",
            "--python",
            str(python),
            f"hermes-agent=={HERMES_AGENT_VERSION}",
        ],
    ]
    for step in steps:
        proc = subprocess.run(step, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            reason = f"could not install hermes-agent {HERMES_AGENT_VERSION}: {proc.stderr.strip()[-400:]}"
            if in_ci:
                pytest.fail(reason)
            pytest.skip(reason)
    return python


class HermesAgent:
    """Runs programs against the real ``hermes_state`` / ``tools.*`` modules."""

    def __init__(self, python: Path) -> None:
        self.python = python

    def run(self, program: str, home: Path, **inputs: Any) -> Any:
        """Run ``program`` with ``HERMES_HOME=home``; ``inputs`` arrive as globals.

        The program sets ``result`` to something JSON can encode.
        """
        wrapper = (
            "import json, sys\n"
            "globals().update(json.loads(sys.stdin.read()))\n"
            "result = None\n"
            + textwrap.dedent(program)
            + "\nprint('\\n@@RESULT@@' + json.dumps(result, ensure_ascii=False, default=str))\n"
        )
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("VIRTUAL_ENV", "PYTHON", "UV_"))
        }
        env.update(HERMES_HOME=str(home), HOME=str(home.parent), NO_COLOR="1")
        proc = subprocess.run(
            [str(self.python), "-c", wrapper],
            input=json.dumps(inputs),
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            cwd=home.parent,
        )
        assert proc.returncode == 0, f"hermes program failed:\n{proc.stderr[-3000:]}"
        _, _, tail = proc.stdout.rpartition("\n@@RESULT@@")
        return json.loads(tail)
