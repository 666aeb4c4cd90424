"""Fixtures for the MCP server tests: a Hermes home and a real stdio client session.

Every test talks to the installed ``hermes-memory-mcp`` console script, started as a
subprocess by the official ``mcp`` client (``stdio_client`` + ``ClientSession``).
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp_helpers import SCRIPT, payload, server_params  # noqa: F401


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty Hermes home directory (default config: builtin + sessions)."""
    path = tmp_path / "hermes home"  # a space in the path, as on many desktops
    path.mkdir()
    return path


@pytest.fixture
def run_session(tmp_path: Path) -> Callable[..., Any]:
    """``run_session(home, body, *extra_args, timeout=30)``: start the server, initialise a
    `ClientSession`, ``await body(session)``, disconnect, return what ``body`` returned.

    The server's stderr is written to ``tmp_path / "server-stderr.txt"`` and shown when the
    body fails.
    """
    errlog_path = tmp_path / "server-stderr.txt"

    def run(
        home: Path,
        body: Callable[[ClientSession], Awaitable[Any]],
        *extra: str,
        timeout: float = 30,
    ) -> Any:
        async def main() -> Any:
            with errlog_path.open("a", encoding="utf-8") as errlog, anyio.fail_after(timeout):
                async with (
                    stdio_client(server_params(home, *extra), errlog=errlog) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    return await body(session)

        try:
            return anyio.run(main)
        except BaseException:
            sys.stderr.write("--- server stderr ---\n" + errlog_path.read_text(encoding="utf-8"))
            raise

    return run
