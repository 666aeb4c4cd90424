"""`BearerAuthMiddleware` and `SameOriginMiddleware` as ASGI components, called directly.

The end-to-end behaviour (real server, official client) is in ``test_mcp_http_auth.py``;
this checks the edge cases of header parsing and the non-loopback origin rule.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

import anyio
import pytest
from mcp_helpers import SCRIPT

from hermes_memory_mcp_server import (
    BearerAuthMiddleware,
    SameOriginMiddleware,
    TokenError,
    is_loopback,
    load_or_create_token,
    read_token_file,
)

TOKEN = "k" * 20 + "Q9-_" + "z" * 20


class Inner:
    """An ASGI app that answers 200 and remembers what reached it."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.seen.append(scope["type"])
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})


def call(app: Any, scope_type: str = "http", headers: list[tuple[bytes, bytes]] | None = None):
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": scope_type, "headers": headers or [], "path": "/mcp", "method": "POST"}
    anyio.run(app, scope, receive, send)
    start = next((m for m in sent if m["type"] == "http.response.start"), None)
    status = start["status"] if start else None
    hdrs = {k.decode(): v.decode() for k, v in (start["headers"] if start else [])}
    return status, hdrs, sent


@pytest.mark.parametrize(
    ("header", "status"),
    [
        (None, 401),
        (b"Bearer " + TOKEN.encode(), 200),
        (b"bearer " + TOKEN.encode(), 200),
        (b"BEARER   " + TOKEN.encode() + b"  ", 200),
        (b"Bearer " + TOKEN[:-1].encode(), 401),
        (b"Bearer " + TOKEN.encode() + b"x", 401),
        (b"Bearer " + TOKEN.upper().encode(), 401),
        (b"Bearer", 401),
        (b"Basic " + TOKEN.encode(), 401),
        (TOKEN.encode(), 401),
        (b"Bearer " + TOKEN.encode().replace(b"Q", "Ｑ".encode()), 401),  # full-width look-alike
        (b"Bearer " + TOKEN.encode()[:10] + b"\xe2\x80\x8b" + TOKEN.encode()[10:], 401),  # ZWSP
    ],
)
def test_bearer_header_variants(header, status):
    inner = Inner()
    headers = [] if header is None else [(b"authorization", header)]
    got, hdrs, _ = call(BearerAuthMiddleware(inner, TOKEN), headers=headers)
    assert got == status
    assert (inner.seen == ["http"]) is (status == 200)
    if status == 401:
        assert hdrs["www-authenticate"].startswith("Bearer realm=")


def test_wrong_token_is_flagged_invalid_missing_is_not():
    _, missing, _ = call(BearerAuthMiddleware(Inner(), TOKEN))
    _, wrong, _ = call(
        BearerAuthMiddleware(Inner(), TOKEN), headers=[(b"authorization", b"Bearer x")]
    )
    assert "invalid_token" not in missing["www-authenticate"]
    assert 'error="invalid_token"' in wrong["www-authenticate"]


def test_lifespan_passes_and_websocket_is_closed():
    inner = Inner()
    app = BearerAuthMiddleware(inner, TOKEN)
    call(app, "lifespan")
    assert inner.seen == ["lifespan"]
    _, _, sent = call(app, "websocket")
    assert sent == [{"type": "websocket.close", "code": 1008}]
    assert inner.seen == ["lifespan"]


def test_empty_token_is_refused():
    with pytest.raises(ValueError):
        BearerAuthMiddleware(Inner(), "")


@pytest.mark.parametrize(
    ("host", "origin", "status"),
    [
        ("10.0.0.5:8765", None, 200),
        ("10.0.0.5:8765", "http://10.0.0.5:8765", 200),
        ("10.0.0.5:8765", "http://127.0.0.1:3000", 200),
        ("10.0.0.5:8765", "http://localhost:3000", 200),
        ("10.0.0.5:8765", "http://[::1]:3000", 200),
        ("10.0.0.5:8765", "http://evil.example", 403),
        ("10.0.0.5:8765", "http://127.0.0.1.evil.example", 403),
        ("10.0.0.5:8765", "http://localhost:3000.evil.example", 403),
        ("10.0.0.5:8765", "http://10.0.0.5:8765.evil.example", 403),
        ("10.0.0.5:8765", "null", 403),
    ],
)
def test_same_origin_rule_off_loopback(host, origin, status):
    inner = Inner()
    headers = [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    got, _, _ = call(SameOriginMiddleware(inner), headers=headers)
    assert got == status


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("0.0.0.0", False),
        ("::", False),
        ("127.0.0.2", False),
        ("192.168.1.2", False),
        ("127.0.0.1.nip.io", False),
    ],
)
def test_is_loopback(host, loopback):
    assert is_loopback(host) is loopback


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_generated_token_is_stable_and_private(tmp_path):
    first = load_or_create_token(tmp_path)
    second = load_or_create_token(tmp_path)
    assert first.created and not second.created
    assert first.value == second.value == read_token_file(first.path)
    assert first.path == tmp_path / "mcp" / "http-token"
    assert (first.path.stat().st_mode & 0o777) == 0o600
    with pytest.raises(TokenError, match="does not exist"):
        load_or_create_token(tmp_path / "missing")
    assert not (tmp_path / "missing").exists()


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_fifo_token_file_does_not_hang(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    with pytest.raises(TokenError, match="not a regular file"):
        read_token_file(fifo)


def test_cli_serve_refuses_no_auth_on_other_hosts(tmp_path):
    cli = shutil.which("hermes-memory", path=str(SCRIPT.parent))
    if cli is None:
        pytest.skip("hermes-memory-cli is not installed")
    result = subprocess.run(
        [
            cli,
            "--home",
            str(tmp_path),
            "mcp",
            "serve",
            "--http",
            "0",
            "--host",
            "0.0.0.0",
            "--no-auth",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert "--no-auth is refused" in result.stderr
