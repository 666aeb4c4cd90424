"""A home that does not exist (a mistyped ``--home``) is not created until the first write.

The console script runs as a subprocess under the official ``mcp`` stdio client; its
``TMPDIR`` points into the test's directory, so the throw-away empty memory that answers
reads is visible, and its removal is checked.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import get_default_environment, stdio_client
from mcp_helpers import SCRIPT, payload

from hermes_memory_mcp_server import USER_URI

pytestmark = pytest.mark.timeout(90)


def _run(home: Path, tmpdir: Path, errlog_path: Path, body: Any) -> Any:
    env = {**get_default_environment(), "TMPDIR": str(tmpdir)}
    params = StdioServerParameters(command=str(SCRIPT), args=["--home", str(home)], env=env)

    async def main() -> Any:
        with errlog_path.open("w", encoding="utf-8") as errlog, anyio.fail_after(60):
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return await body(session)

    return anyio.run(main)


def test_reads_do_not_create_a_missing_home_the_first_write_does(tmp_path):
    home = tmp_path / "typo 家" / "hermes"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    errlog = tmp_path / "stderr.txt"
    seen: dict[str, Any] = {}

    async def body(session: ClientSession) -> None:
        names = {t.name for t in (await session.list_tools()).tools}
        assert {"memory", "session_search"} <= names
        found = payload(await session.call_tool("session_search", {"query": "vault"}))
        assert found["success"] is True and found["count"] == 0
        recent = payload(await session.call_tool("session_search", {}))
        assert recent["success"] is True
        user = await session.read_resource(USER_URI)
        assert user.contents[0].text == ""
        unknown = await session.call_tool("no_such_tool", {})
        assert unknown.is_error
        seen["after_reads"] = home.parent.exists()
        seen["scratch_during"] = sorted(p.name for p in scratch.iterdir())
        seen["log_before_write"] = errlog.read_text(encoding="utf-8")

        added = payload(
            await session.call_tool(
                "memory", {"action": "add", "target": "user", "content": "住在大阪, likes tea"}
            )
        )
        assert added["success"] is True
        seen["after_write"] = home.is_dir()
        again = payload(await session.call_tool("session_search", {"query": "tea"}))
        assert again["success"] is True
        user = await session.read_resource(USER_URI)
        seen["user"] = user.contents[0].text

    _run(home, scratch, errlog, body)
    log = errlog.read_text(encoding="utf-8")

    assert seen["after_reads"] is False, "reads must not create the home or its parents"
    assert "does not exist" in seen["log_before_write"] and str(home) in seen["log_before_write"]
    assert "created new memory home" not in seen["log_before_write"]
    assert any(name.startswith("hermes-memory-mcp-empty-") for name in seen["scratch_during"])

    assert seen["after_write"] is True
    assert f"created new memory home at {home}" in log
    assert log.count("created new memory home") == 1
    assert seen["user"] == "住在大阪, likes tea"
    assert (home / "memories" / "USER.md").read_text(encoding="utf-8") == "住在大阪, likes tea"
    if os.name == "posix":
        assert (home.stat().st_mode & 0o777) == 0o700
    # The throw-away empty memory is gone.
    assert list(scratch.iterdir()) == []


def test_session_without_writes_leaves_nothing_behind(tmp_path):
    home = tmp_path / "never" / "made"
    scratch = tmp_path / "tmp"
    scratch.mkdir()

    async def body(session: ClientSession) -> None:
        found = payload(await session.call_tool("session_search", {"query": "x"}))
        assert found["count"] == 0

    _run(home, scratch, tmp_path / "stderr.txt", body)
    assert not (tmp_path / "never").exists()
    assert list(scratch.iterdir()) == []
    assert "created new memory home" not in (tmp_path / "stderr.txt").read_text(encoding="utf-8")


def test_existing_home_is_not_announced_as_new(tmp_path, home):
    errlog = tmp_path / "stderr.txt"

    async def body(session: ClientSession) -> None:
        added = payload(
            await session.call_tool("memory", {"action": "add", "target": "memory", "content": "x"})
        )
        assert added["success"] is True

    _run(home, tmp_path, errlog, body)
    log = errlog.read_text(encoding="utf-8")
    assert "does not exist" not in log and "created new memory home" not in log
