"""Process lifecycle of ``hermes-memory-mcp``: clean shutdown, bad config, HTTP on loopback.

These tests speak to the console script directly: raw JSON-RPC lines over pipes (the
protocol revision older clients such as Claude Desktop use), or the SDK's streamable-HTTP
client. A clean shutdown is observed through SQLite: the session archive's ``-wal`` file
exists while the server holds the database open and disappears only when the sessions
provider closes it (`MemoryManager.shutdown_all`); a killed server leaves it behind.
"""

from __future__ import annotations

import http.client
import json
import re
import selectors
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_helpers import SCRIPT, payload

from hermes_memory_core.config import sessions_db_path
from hermes_memory_mcp_server import new_session_id
from hermes_memory_mcp_server._ids import SESSION_ID_PATTERN
from hermes_memory_sessions.storage import SessionStore

pytestmark = pytest.mark.timeout(90)


class RawServer:
    """The console script on pipes, spoken to with hand-written JSON-RPC lines."""

    def __init__(self, home: Path, *args: str) -> None:
        self.stderr_path = home.parent / "raw-server-stderr.txt"
        self._stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(
            [str(SCRIPT), "--home", str(home), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._selector = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)
        self._buffer = b""
        self._next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any], timeout: float = 30) -> Any:
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            line = self._readline(deadline)
            message = json.loads(line)
            if message.get("id") == self._next_id:
                assert "error" not in message, message
                return message["result"]

    def _readline(self, deadline: float) -> bytes:
        assert self.proc.stdout is not None
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._selector.select(remaining):
                raise TimeoutError(f"no answer from the server; stderr: {self.stderr()}")
            chunk = self.proc.stdout.read1(65536)
            if not chunk:
                raise EOFError(f"server closed stdout; stderr: {self.stderr()}")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def initialize(self, protocol_version: str = "2025-06-18") -> Any:
        result = self.request(
            "initialize",
            {
                "protocolVersion": protocol_version,
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def stderr(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
        self._selector.close()
        self._stderr.close()


def seed_wal_archive(home: Path) -> Path:
    store = SessionStore(sessions_db_path(home))
    try:
        if store.journal_mode != "wal":
            pytest.skip("SQLite cannot use WAL on this filesystem; shutdown is not observable")
        session = store.create_session("20240105_080000_0a0b0c", source="cli")
        store.append_message(session, "user", "The deploy key lives in the team vault.")
    finally:
        store.close()
    return sessions_db_path(home).with_name(sessions_db_path(home).name + "-wal")


@pytest.fixture
def raw_server(home):
    servers: list[RawServer] = []

    def start(*args: str) -> RawServer:
        server = RawServer(home, *args)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def _search_opens_archive(server: RawServer, wal: Path) -> None:
    init = server.initialize()
    assert init["protocolVersion"] == "2025-06-18"
    assert init["serverInfo"]["name"] == "hermes-memory"
    result = server.request(
        "tools/call", {"name": "session_search", "arguments": {"query": "vault"}}
    )
    assert result["isError"] is False
    assert json.loads(result["content"][0]["text"])["count"] == 1
    assert wal.exists(), "the server should hold the archive open while serving"


def test_client_disconnect_shuts_providers_down(home, raw_server):
    wal = seed_wal_archive(home)
    server = raw_server()
    _search_opens_archive(server, wal)
    assert server.proc.stdin is not None
    server.proc.stdin.close()  # what an MCP client does when it quits
    assert server.proc.wait(15) == 0, server.stderr()
    assert not wal.exists(), "the archive was not closed: shutdown_all did not run"
    assert "Traceback" not in server.stderr()


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_shuts_providers_down(home, raw_server, signum):
    wal = seed_wal_archive(home)
    server = raw_server()
    _search_opens_archive(server, wal)
    server.proc.send_signal(signum)
    assert server.proc.wait(15) == 0, server.stderr()
    assert not wal.exists(), "the archive was not closed: shutdown_all did not run"
    assert "Traceback" not in server.stderr()


@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        ("memory: [unclosed", "config.yaml"),
        ("memory:\n  memory_char_limit: lots\n", "memory_char_limit"),
    ],
)
def test_bad_config_is_one_line_and_exit_status_2(home, config, fragment):
    (home / "config.yaml").write_text(config, encoding="utf-8")
    done = subprocess.run(
        [str(SCRIPT), "--home", str(home)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("hermes-memory-mcp: ") and fragment in lines[0]


def test_bad_port_is_a_usage_error(home):
    done = subprocess.run(
        [str(SCRIPT), "--home", str(home), "--http", "70000"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "70000" in done.stderr and "Traceback" not in done.stderr


def test_session_ids_have_the_hermes_format():
    ids = {new_session_id() for _ in range(50)}
    assert len(ids) == 50
    assert all(SESSION_ID_PATTERN.match(i) for i in ids)
    assert re.fullmatch(r"\d{8}_\d{6}_[0-9a-f]{6}", next(iter(ids)))


@pytest.mark.slow
def test_http_transport_on_loopback(home, tmp_path):
    stderr_path = tmp_path / "http-stderr.txt"
    with stderr_path.open("wb") as stderr:
        proc = subprocess.Popen(
            [str(SCRIPT), "--home", str(home), "--http", "0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            url = _wait_for_url(proc, stderr_path)
            assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            assert port > 0
            token = (home / "mcp" / "http-token").read_text(encoding="ascii").strip()
            bearer = {"Authorization": f"Bearer {token}"}

            async def talk() -> Any:
                with anyio.fail_after(30):
                    async with (
                        create_mcp_http_client(headers=bearer) as http,
                        streamable_http_client(url, http_client=http) as (read, write),
                        ClientSession(read, write) as session,
                    ):
                        await session.initialize()
                        names = {t.name for t in (await session.list_tools()).tools}
                        added = await session.call_tool(
                            "memory",
                            {"action": "add", "target": "user", "content": "Works from 深圳"},
                        )
                        user = await session.read_resource("hermes-memory://memories/USER.md")
                        return names, added, user

            names, added, user = anyio.run(talk)
            assert {"memory", "session_search"} <= names
            assert payload(added)["success"] is True
            assert user.contents[0].text == "Works from 深圳"
            assert (home / "memories" / "USER.md").read_text(encoding="utf-8") == "Works from 深圳"

            # DNS-rebinding protection: a page on another origin cannot reach the memory.
            status = _post_with_host(port, "evil.example:80", bearer)
            assert status in (403, 421), status
            assert _post_with_host(port, f"127.0.0.1:{port}", bearer) not in (403, 421)

            proc.send_signal(signal.SIGTERM)
            assert proc.wait(15) == 0, stderr_path.read_text()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
    assert "Traceback" not in stderr_path.read_text(encoding="utf-8", errors="replace")


def _wait_for_url(proc: subprocess.Popen[bytes], stderr_path: Path) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = stderr_path.read_text(encoding="utf-8", errors="replace")
        found = re.search(r"listening on (http://\S+)", text)
        if found:
            return found.group(1)
        if proc.poll() is not None:
            raise AssertionError(f"server exited with {proc.returncode}: {text}")
        time.sleep(0.1)
    raise AssertionError("server did not announce its URL")


def _post_with_host(port: int, host: str, extra: dict[str, str]) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "probe", "version": "1"},
                },
            }
        )
        conn.request(
            "POST",
            "/mcp",
            body=body,
            headers={
                "Host": host,
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                **extra,
            },
        )
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()
