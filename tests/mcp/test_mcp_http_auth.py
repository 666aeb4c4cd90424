"""The HTTP transport's bearer token, seen from outside: the console script in a subprocess,
spoken to with the official ``mcp`` client (and raw ``http.client`` for status and headers).

Also the token file's safety checks, ``--no-auth``, ``--version`` and ``--debug``.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import socket
import stat
import subprocess
import time
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_helpers import SCRIPT

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(os.name != "posix", reason="POSIX modes"),
]

INIT_BODY = json.dumps(
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


class HttpServer:
    """``hermes-memory-mcp --http 0`` in a subprocess; `url` once it listens."""

    def __init__(self, home: Path, *args: str) -> None:
        self.stderr_path = home.parent / f"http-stderr-{time.monotonic_ns()}.txt"
        self._stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(
            [str(SCRIPT), "--home", str(home), "--http", "0", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
        )
        self.url = self._wait_for_url()
        self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])

    def stderr(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def _wait_for_url(self) -> str:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = re.search(r"listening on (http://\S+)", self.stderr())
            if found:
                return found.group(1)
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited with {self.proc.returncode}: {self.stderr()}")
            time.sleep(0.1)
        raise AssertionError(f"server did not announce its URL: {self.stderr()}")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._stderr.close()
        return self.proc.returncode

    def post(self, headers: dict[str, str]) -> tuple[int, dict[str, str], str]:
        """POST an initialize request; (status, lower-cased headers, body)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request(
                "POST",
                "/mcp",
                body=INIT_BODY,
                headers={
                    "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream",
                    **headers,
                },
            )
            response = conn.getresponse()
            body = response.read().decode("utf-8", errors="replace")
            return response.status, {k.lower(): v for k, v in response.getheaders()}, body
        finally:
            conn.close()


@pytest.fixture
def http_server(home: Path) -> Iterator[Any]:
    servers: list[HttpServer] = []

    def start(*args: str, on: Path | None = None) -> HttpServer:
        server = HttpServer(on or home, *args)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def list_tools(url: str, headers: dict[str, str] | None) -> tuple[set[str] | None, list[int]]:
    """Connect with the official client; (tool names or None when refused, HTTP statuses)."""
    statuses: list[int] = []

    async def record(response: Any) -> None:
        statuses.append(response.status_code)

    async def main() -> set[str] | None:
        with anyio.fail_after(30):
            async with create_mcp_http_client(headers=headers) as client:
                client.event_hooks["response"] = [record]
                try:
                    async with (
                        streamable_http_client(url, http_client=client) as (read, write),
                        ClientSession(read, write) as session,
                    ):
                        await session.initialize()
                        return {t.name for t in (await session.list_tools()).tools}
                except Exception as exc:
                    leaf: BaseException = exc
                    while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
                        leaf = leaf.exceptions[0]
                    if isinstance(leaf, MCPError):
                        return None
                    raise

    return anyio.run(main), statuses


def run_script(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def private_token_file(path: Path, token: str, mode: int = 0o600) -> Path:
    path.write_text(token + "\n", encoding="ascii")
    path.chmod(mode)
    return path


# --------------------------------------------------------------------------- token required
@pytest.mark.slow
def test_http_needs_the_generated_token(home, http_server):
    server = http_server()
    token_path = home / "mcp" / "http-token"
    token = token_path.read_text(encoding="ascii").strip()
    assert len(token) >= 43

    # The file and its directory are private.
    assert stat.S_IMODE(token_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(token_path.parent.stat().st_mode) == 0o700
    assert token_path.stat().st_uid == os.geteuid()

    # First start: the token is shown once, with configurations using the headers field.
    first = server.stderr()
    assert first.count(token) >= 1
    assert f'"Authorization": "Bearer {token}"' in first
    assert '"servers"' in first and '"mcpServers"' in first and server.url in first

    # No token / wrong token: the official client is refused with 401.
    names, statuses = list_tools(server.url, None)
    assert names is None and 401 in statuses
    for wrong in ("x" * len(token), token[:-1], token + "x", token.upper(), f"{token} extra"):
        names, statuses = list_tools(server.url, {"Authorization": f"Bearer {wrong}"})
        assert names is None and 401 in statuses, wrong
    names, statuses = list_tools(server.url, {"Authorization": f"Basic {token}"})
    assert names is None and 401 in statuses

    # The 401 carries the Bearer challenge; a wrong token is flagged as invalid_token.
    status, headers, _ = server.post({})
    assert status == 401 and headers["www-authenticate"].startswith("Bearer")
    status, _, _ = server.post({"Authorization": "Bearer"})
    assert status == 401
    status, headers, _ = server.post({"Authorization": "Bearer nope"})
    assert status == 401 and 'error="invalid_token"' in headers["www-authenticate"]

    # The right token: tools/list works (scheme is case-insensitive, as in RFC 7235).
    names, statuses = list_tools(server.url, {"Authorization": f"Bearer {token}"})
    assert names is not None and {"memory", "session_search"} <= names
    assert 401 not in statuses
    names, _ = list_tools(server.url, {"Authorization": f"bearer {token}"})
    assert names is not None

    assert server.stop() == 0

    # Later starts: same token, shown nowhere, only where it lives.
    again = http_server()
    later = again.stderr()
    assert token not in later
    assert str(token_path) in later
    assert token_path.read_text(encoding="ascii").strip() == token
    assert again.stop() == 0


@pytest.mark.slow
def test_token_file_option(home, tmp_path, http_server):
    mine = "t0ken-" + "Z" * 40
    path = private_token_file(tmp_path / "my token", mine)
    server = http_server("--token-file", str(path))
    assert mine not in server.stderr()
    assert not (home / "mcp").exists(), "--token-file must not generate a second token"
    names, statuses = list_tools(server.url, None)
    assert names is None and 401 in statuses
    names, _ = list_tools(server.url, {"Authorization": f"Bearer {mine}"})
    assert names is not None and "memory" in names


@pytest.mark.slow
def test_no_auth_warns_and_serves_without_token(home, http_server):
    server = http_server("--no-auth")
    assert "authentication is OFF" in server.stderr()
    assert "WARNING" in server.stderr()
    names, _ = list_tools(server.url, None)
    assert names is not None and "memory" in names
    assert not (home / "mcp").exists()
    # Origin checks stay on even without a token.
    status, _, _ = server.post({"Origin": "http://evil.example"})
    assert status == 403


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "127.0.0.2"])
def test_no_auth_refused_for_other_hosts(home, host):
    result = run_script("--home", str(home), "--http", "0", "--host", host, "--no-auth")
    assert result.returncode == 2
    assert "--no-auth is refused" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "listening" not in result.stderr


@pytest.mark.parametrize("args", [["--no-auth"], ["--token-file", "x"], ["--host", "::1"]])
def test_http_options_need_http(home, args):
    result = run_script("--home", str(home), *args)
    assert result.returncode == 2
    assert "needs --http" in result.stderr


def test_bad_host_is_a_usage_error(home):
    result = run_script("--home", str(home), "--http", "0", "--host", "evil.example")
    assert result.returncode == 2
    assert "invalid address" in result.stderr
    assert "Traceback" not in result.stderr


# --------------------------------------------------------------------------- unsafe token files
def _refused(home: Path, *args: str) -> str:
    result = run_script("--home", str(home), "--http", "0", *args)
    assert result.returncode == 2, result.stderr
    assert "listening" not in result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o602, 0o660])
def test_token_file_readable_by_others_is_refused(home, tmp_path, mode):
    path = private_token_file(tmp_path / "tok", "a" * 43, mode)
    assert "accessible to other users" in _refused(home, "--token-file", str(path))


def test_generated_token_file_with_loose_mode_is_refused(home):
    (home / "mcp").mkdir(mode=0o700)
    private_token_file(home / "mcp" / "http-token", "b" * 43, 0o644)
    line = _refused(home)
    assert "accessible to other users" in line and "chmod 600" in line


def test_token_file_symlink_is_refused(home, tmp_path):
    target = private_token_file(tmp_path / "real", "c" * 43)
    link = tmp_path / "link"
    link.symlink_to(target)
    assert "symbolic link" in _refused(home, "--token-file", str(link))
    # The generated location, too: a planted link is never followed.
    (home / "mcp").mkdir(mode=0o700)
    (home / "mcp" / "http-token").symlink_to(target)
    assert "symbolic link" in _refused(home)


def test_token_directory_symlink_or_shared_is_refused(home, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (home / "mcp").symlink_to(elsewhere, target_is_directory=True)
    assert "symbolic link" in _refused(home)
    assert list(elsewhere.iterdir()) == []
    (home / "mcp").unlink()
    (home / "mcp").mkdir()
    (home / "mcp").chmod(0o777)
    assert "writable by other users" in _refused(home)
    assert not (home / "mcp" / "http-token").exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_token_file_owned_by_someone_else_is_refused(home, tmp_path):
    path = private_token_file(tmp_path / "theirs", "d" * 43)
    os.chown(path, 65534, 65534)
    assert "not by you" in _refused(home, "--token-file", str(path))


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("", "is empty"),
        ("short", "too short"),
        ("令牌" * 20, "printable ASCII"),
        ("has space " + "e" * 40, "printable ASCII"),
    ],
)
def test_bad_token_content_is_refused(home, tmp_path, content, fragment):
    path = tmp_path / "tok"
    path.write_text(content, encoding="utf-8")
    path.chmod(0o600)
    assert fragment in _refused(home, "--token-file", str(path))


def test_missing_or_directory_token_file(home, tmp_path):
    assert "does not exist" in _refused(home, "--token-file", str(tmp_path / "nope"))
    folder = tmp_path / "folder"
    folder.mkdir(mode=0o700)
    assert "not a regular file" in _refused(home, "--token-file", str(folder))


def test_http_on_missing_home_does_not_create_it(tmp_path):
    home = tmp_path / "typo" / "home"
    line = _refused(home)
    assert "does not exist" in line and "--home" in line
    assert not (tmp_path / "typo").exists()


# --------------------------------------------------------------------------- --version / --debug
def test_version_prints_the_distribution_version():
    result = run_script("--version")
    assert result.returncode == 0
    assert result.stdout.split()[-1] == version("hermes-memory-mcp-server")
    assert "hermes-memory-mcp-server" in result.stdout


def test_debug_adds_the_traceback_and_debug_logs(home):
    # A failure after start-up: the port is already taken by another socket.
    with http_socket() as port:
        plain = run_script("--home", str(home), "--http", str(port), "--no-auth")
        debug = run_script("--home", str(home), "--http", str(port), "--no-auth", "--debug")
    assert plain.returncode == 1 and debug.returncode == 1
    assert "Traceback" not in plain.stderr
    assert "DEBUG" not in plain.stderr
    last = plain.stderr.strip().splitlines()[-1]
    assert last.startswith("hermes-memory-mcp: OSError") and "in use" in last
    assert "Traceback" in debug.stderr
    assert "DEBUG" in debug.stderr


@contextlib.contextmanager
def http_socket() -> Iterator[int]:
    """A listening loopback socket: the port it holds is busy for the server under test."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        yield sock.getsockname()[1]


def test_help_mentions_token_options():
    result = run_script("--help")
    for option in ("--token-file", "--no-auth", "--host", "--version", "--debug"):
        assert option in result.stdout
