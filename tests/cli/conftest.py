"""Fixtures for the CLI tests: every test runs the installed ``hermes-memory`` script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hermes_memory_core.config import sessions_db_path

SCRIPT = shutil.which("hermes-memory", path=str(Path(sys.executable).parent))


@dataclass
class Result:
    """A finished run of the console script."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)

    def assert_one_line_error(self, *fragments: str) -> None:
        """Failed, no traceback, and the last stderr line is the reason."""
        assert self.code != 0, (self.out, self.err)
        assert "Traceback" not in self.err, self.err
        lines = [line for line in self.err.splitlines() if line.strip()]
        assert lines, "no error line on stderr"
        assert lines[-1].startswith("hermes-memory"), lines
        for fragment in fragments:
            assert fragment in lines[-1], (fragment, lines[-1])


class CLI:
    """Runs ``hermes-memory`` against one temporary home."""

    def __init__(self, home: Path, tmp: Path) -> None:
        self.home = home
        self.tmp = tmp
        #: the home's session archive at its default location
        self.archive = sessions_db_path(home)
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("HERMES_", "MEM0_", "HONCHO_")) and k not in ("VISUAL", "EDITOR")
        }
        self.env.update(
            HERMES_HOME=str(home),
            HOME=str(tmp),
            PYTHONIOENCODING="utf-8",
            COLUMNS="200",
            HERMES_MEMORY_NO_PROGRESS="",
        )

    def __call__(
        self,
        *args: str,
        input: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 60,
        tty: bool = False,
    ) -> Result:
        """Run the script; ``tty=True`` gives it a pseudo-terminal as stdin (``input`` is
        typed into it), as a person at a terminal would."""
        assert SCRIPT is not None, "hermes-memory is not installed next to this Python"
        if tty:
            return self._on_tty_stdin(list(args), input or "", env or {}, timeout)
        proc = subprocess.run(
            [SCRIPT, *args],
            input=input,
            capture_output=True,
            text=True,
            encoding="utf-8",
            env={**self.env, **(env or {})},
            timeout=timeout,
            stdin=None if input is not None else subprocess.DEVNULL,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def _on_tty_stdin(
        self, args: list[str], typed: str, env: dict[str, str], timeout: float
    ) -> Result:
        import pty

        master, slave = pty.openpty()
        try:
            if typed:
                os.write(master, typed.encode())
            proc = subprocess.run(
                [str(SCRIPT), *args],
                stdin=slave,
                capture_output=True,
                text=True,
                encoding="utf-8",
                env={**self.env, **env},
                timeout=timeout,
            )
        finally:
            os.close(slave)
            os.close(master)
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def on_terminal(self, *args: str, env: dict[str, str] | None = None) -> str:
        """Run with stdout on a pseudo-terminal; returns what the terminal received."""
        import pty
        import select

        master, slave = pty.openpty()
        proc = subprocess.Popen(
            [str(SCRIPT), *args],
            stdin=subprocess.DEVNULL,
            stdout=slave,
            stderr=subprocess.PIPE,
            env={**self.env, **(env or {})},
        )
        os.close(slave)
        chunks: list[bytes] = []
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(master)
        assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
        return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")

    def ok(self, *args: str, **kw: Any) -> Result:
        result = self(*args, **kw)
        assert result.code == 0, (args, result.out, result.err)
        assert "Traceback" not in result.err
        return result


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "hermes"
    path.mkdir()
    return path


@pytest.fixture
def cli(home: Path, tmp_path: Path) -> CLI:
    return CLI(home, tmp_path)
