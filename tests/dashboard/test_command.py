"""``hermes-memory dashboard`` as a command: start, status, stop, token, extras, imports."""

from __future__ import annotations

import http.client
import os
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from dashboard_helpers import LINE, SCRIPT, clean_env, start_server, stop_server


def run(home: Path, tmp: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    assert SCRIPT is not None
    return subprocess.run(
        [SCRIPT, "--home", str(home), "dashboard", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=clean_env(home, tmp),
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def imported_modules(code: str) -> str:
    """The ``-X importtime`` report of running ``code`` in a fresh interpreter."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return proc.stderr


@pytest.mark.parametrize(
    "code",
    [
        "import hermes_memory_cli._cli as c; c.build_parser()",
        "import hermes_memory_core",
        "import hermes_memory_cli._commands.memory, hermes_memory_cli._commands.sessions",
    ],
)
def test_nothing_else_imports_the_dashboard(code: str) -> None:
    report = imported_modules(code)
    for name in ("hermes_memory_cli._dashboard", "starlette", "uvicorn", "jinja2"):
        assert f" {name}\n" not in report and f" {name}." not in report, name


def test_status_and_stop_of_a_home_without_a_dashboard(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    status = run(home, tmp_path, "--status")
    assert status.returncode == 3
    assert "not running" in status.stdout
    stop = run(home, tmp_path, "--stop")
    assert stop.returncode == 0 and "nothing to stop" in stop.stdout


def test_a_missing_home_is_one_line_and_creates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "nowhere"
    result = run(home, tmp_path, "--no-browser", "--port", "0")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().startswith("hermes-memory: error:")
    assert not home.exists()


def test_without_the_extra_it_says_how_to_install_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    code = (
        "import sys; sys.modules['jinja2'] = None; "
        "from hermes_memory_cli._cli import main; "
        f"sys.exit(main(['--home', {str(home)!r}, 'dashboard', '--no-browser']))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 1
    assert "hermes-memory-cli[dashboard]" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (home / "dashboard").exists()


def test_the_token_is_private_and_stable_and_a_token_file_is_honoured(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    first = start_server(home, tmp_path)
    stop_server(first)
    token_file = home / "dashboard" / "token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
    assert token_file.read_text().strip() == first.token
    second = start_server(home, tmp_path)
    stop_server(second)
    assert second.token == first.token, "the same link keeps working after a restart"

    mine = tmp_path / "my-token"
    mine.write_text("t" * 40 + "\n")
    mine.chmod(0o600)
    third = start_server(home, tmp_path, "--token-file", str(mine))
    stop_server(third)
    assert third.token == "t" * 40

    mine.chmod(0o644)
    refused = run(home, tmp_path, "--no-browser", "--port", "0", "--token-file", str(mine))
    assert refused.returncode == 1
    assert "chmod 600" in refused.stderr and "Traceback" not in refused.stderr


def test_detach_status_and_stop(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    started = run(home, tmp_path, "--detach", "--no-browser", "--port", "0")
    assert started.returncode == 0, started.stderr
    line = started.stdout.strip().splitlines()[0]
    match = LINE.match(line)
    assert match, started.stdout
    try:
        with urllib.request.urlopen(f"{match.group(1)}/healthz", timeout=10) as response:
            assert response.status == 200
        status = run(home, tmp_path, "--status")
        assert status.returncode == 0
        assert status.stdout.splitlines()[0] == line
        again = run(home, tmp_path, "--no-browser", "--port", "0")
        assert again.returncode == 1 and "already running" in again.stderr
    finally:
        stopped = run(home, tmp_path, "--stop")
    assert stopped.returncode == 0 and "Stopped" in stopped.stdout
    assert run(home, tmp_path, "--status").returncode == 3
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{match.group(1)}/healthz", timeout=5)


def test_another_address_must_be_asked_for_and_warns(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    server = start_server(home, tmp_path, "--host", "0.0.0.0")
    try:
        assert server.base.startswith("http://127.0.0.1:")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{server.base}/memory", timeout=10)
        assert refused.value.code == 401
        refused.value.close()
    finally:
        warning = stop_server(server)
    assert "not on loopback" in warning


def test_state_file_is_removed_on_exit(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    server = start_server(home, tmp_path)
    assert (home / "dashboard" / "state.json").is_file()
    assert stat.S_IMODE((home / "dashboard" / "state.json").stat().st_mode) == 0o600
    stop_server(server)
    assert server.proc.returncode == 0
    assert not (home / "dashboard" / "state.json").exists()
    assert os.listdir(home) == ["dashboard"], "starting the dashboard writes nothing else"


def _get(server: Any, path: str, cookie: str = "") -> tuple[int, dict[str, str], str]:
    parts = urlsplit(server.base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request("GET", path, headers={"Cookie": cookie} if cookie else {})
        response = conn.getresponse()
        body = response.read().decode("utf-8", "replace")
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        conn.close()


def test_every_page_of_an_empty_home_reads_without_writing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    server = start_server(home, tmp_path)
    try:
        status, headers, _body = _get(server, f"//evil.example/?token={server.token}")
        assert status == 303
        assert headers["location"].startswith("/") and not headers["location"].startswith("//")
        cookie = headers["set-cookie"].split(";", 1)[0]
        assert server.token not in cookie
        for path in (
            "/memory",
            "/pending",
            "/sessions",
            "/sessions?q=数据库",
            "/providers",
            "/archive",
            "/settings",
        ):
            status, headers, body = _get(server, quote(path, safe="/?="), cookie)
            assert status == 200, (path, body[:500])
            assert "default-src 'self'" in headers["content-security-policy"]
            assert headers["x-frame-options"] == "DENY"
        status, _headers, body = _get(server, "/sessions/no-such-id", cookie)
        assert status == 404 and "No session matches" in body
    finally:
        stop_server(server)
    assert sorted(p.name for p in home.iterdir()) == ["dashboard"]
    assert sorted(p.name for p in (home / "dashboard").iterdir()) == ["token"]
