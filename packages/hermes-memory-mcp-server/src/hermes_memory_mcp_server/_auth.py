"""Authentication of the HTTP transport: a bearer token in a private file, checked per request.

The streamable-HTTP server is a network listener, so every local user and process could talk
to it. It therefore requires ``Authorization: Bearer <token>`` on every request:

* `load_or_create_token` returns the token of a home, generating it on first use
  (``secrets.token_urlsafe(32)``) into ``<home>/mcp/http-token`` (file 0600, directory 0700);
* `read_token_file` reads a token file after checking it is private (not a symbolic link,
  a regular file owned by the current user, no group or other permission bits);
* `BearerAuthMiddleware` wraps an ASGI application and answers ``401`` with
  ``WWW-Authenticate: Bearer`` unless the header carries the token (compared with
  `hmac.compare_digest`);
* `SameOriginMiddleware` rejects cross-origin browser requests when the server is bound to a
  non-loopback address (on loopback the MCP SDK's DNS-rebinding protection does that).

Importing this module is cheap (standard library only).
"""

from __future__ import annotations

import errno
import hmac
import os
import secrets
import stat
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_memory_core.kit import make_private_dirs

__all__ = [
    "LOOPBACK_HOSTS",
    "LOOPBACK_ORIGINS",
    "MIN_TOKEN_LENGTH",
    "TOKEN_DIR",
    "TOKEN_FILE",
    "BearerAuthMiddleware",
    "HttpToken",
    "SameOriginMiddleware",
    "TokenError",
    "default_token_path",
    "is_loopback",
    "load_or_create_token",
    "read_token_file",
]

TOKEN_DIR = "mcp"  # noqa: S105 - a directory name, not a secret
"""Directory under the home that holds the generated token (mode 0700)."""
TOKEN_FILE = "http-token"  # noqa: S105 - a file name, not a secret
"""Name of the generated token file in `TOKEN_DIR` (mode 0600)."""
MIN_TOKEN_LENGTH = 32
"""Shortest token accepted from ``--token-file`` (a generated one has 43 characters)."""
LOOPBACK_ORIGINS = ("http://127.0.0.1", "http://localhost", "http://[::1]")
"""Origins (any port) that a loopback-only server accepts from browsers."""

_POSIX = os.name == "posix"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class TokenError(Exception):
    """The token cannot be used: unsafe or unreadable file, bad content, missing home."""


@dataclass(frozen=True)
class HttpToken:
    """A bearer token and where it lives.

    :ivar value: the token (printable ASCII, no whitespace).
    :ivar path: the file it was read from or written to.
    :ivar created: True when this call generated it (show it to the user once).
    """

    value: str
    path: Path
    created: bool


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
"""Bind addresses treated as loopback (``--no-auth`` is accepted only for these)."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` is one of `LOOPBACK_HOSTS` (``[::1]`` with brackets counts too).

    Other ``127.x.y.z`` addresses are loopback as well, but clients would send them as the
    ``Host`` header, which the DNS-rebinding protection refuses: they are treated like any
    other address (token required).
    """
    return host.strip().strip("[]").lower() in LOOPBACK_HOSTS


def default_token_path(home: Path) -> Path:
    """``<home>/mcp/http-token``."""
    return home / TOKEN_DIR / TOKEN_FILE


def _check_private(st: os.stat_result, path: Path, what: str) -> None:
    """Refuse ``path`` unless it is owned by us and has no group/other permission bits."""
    if not _POSIX:
        return
    uid = os.geteuid()
    if st.st_uid != uid:
        raise TokenError(
            f"{what} {path} is owned by uid {st.st_uid}, not by you (uid {uid}); refusing to use it"
        )
    if st.st_mode & 0o077:
        mode = stat.S_IMODE(st.st_mode)
        raise TokenError(
            f"{what} {path} is accessible to other users (mode {mode:o}); run: chmod 600 {path}"
        )


def _validate(text: str, path: Path) -> str:
    token = text.strip()
    if not token:
        raise TokenError(f"token file {path} is empty")
    if len(token) < MIN_TOKEN_LENGTH:
        raise TokenError(
            f"token in {path} is too short ({len(token)} characters; at least "
            f"{MIN_TOKEN_LENGTH}): generate one with "
            "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )
    if not all("!" <= ch <= "~" for ch in token):
        raise TokenError(
            f"token in {path} must be printable ASCII without spaces (it is sent in an HTTP header)"
        )
    return token


def read_token_file(path: str | Path) -> str:
    """Read a token from ``path`` after checking the file is private.

    The file is opened without following symbolic links and checked on the open descriptor
    (no race between check and read): it must be a regular file owned by the current user
    with no permission bits for group or others (POSIX). The token is its content without
    surrounding whitespace: at least `MIN_TOKEN_LENGTH` printable ASCII characters.

    :raises TokenError: with a one-line explanation of what is wrong and how to fix it.
    """
    path = Path(path).expanduser()
    try:
        if path.is_symlink():
            raise TokenError(f"token file {path} is a symbolic link; refusing to follow it")
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise TokenError(f"token file {path} does not exist") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            message = f"token file {path} is a symbolic link; refusing to follow it"
            raise TokenError(message) from None
        raise TokenError(f"cannot open token file {path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TokenError(f"token file {path} is not a regular file")
        _check_private(st, path, "token file")
        data = os.read(fd, 4097)
    except OSError as exc:
        raise TokenError(f"cannot read token file {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > 4096:
        raise TokenError(f"token file {path} is too large to hold a token")
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise TokenError(
            f"token in {path} must be printable ASCII without spaces (it is sent in an HTTP header)"
        ) from None
    return _validate(text, path)


def _ensure_private_dir(directory: Path) -> None:
    """Create ``directory`` with mode 0700, or check an existing one is ours and not shared."""
    if directory.is_symlink():
        raise TokenError(f"token directory {directory} is a symbolic link; refusing to use it")
    try:
        make_private_dirs(directory)  # 0700, and so is any missing folder above it
    except OSError as exc:
        raise TokenError(f"cannot create {directory}: {exc.strerror or exc}") from None
    st = directory.lstat()
    if not stat.S_ISDIR(st.st_mode):
        raise TokenError(f"{directory} is not a directory")
    if _POSIX:
        if st.st_uid != os.geteuid():
            raise TokenError(f"token directory {directory} is not owned by you; refusing to use it")
        if st.st_mode & 0o022:
            raise TokenError(
                f"token directory {directory} is writable by other users; run: chmod 700 "
                f"{directory}"
            )


def load_or_create_token(home: str | Path, *, path: str | Path | None = None) -> HttpToken:
    """The HTTP token of ``home``: read ``<home>/mcp/http-token``, or generate it.

    ``path`` names another file inside ``home`` for another listener of the same home (the
    web dashboard keeps ``<home>/dashboard/token``); its directory gets the same checks.

    A new token is ``secrets.token_urlsafe(32)``, written with ``O_CREAT | O_EXCL`` and mode
    0600 into ``<home>/mcp`` (created with mode 0700), so two servers starting at once agree
    on one token. An existing file is read with `read_token_file` (same checks). The home
    itself is never created: a home that does not exist is most likely a mistyped ``--home``.

    :raises TokenError: the home does not exist, or the file or directory is unsafe.
    """
    home = Path(home).expanduser()
    if not home.is_dir():
        raise TokenError(
            f"memory home {home} does not exist; check --home (or HERMES_HOME). To start a new "
            f"memory, create it first (mkdir -p {home}) or pass --token-file"
        )
    path = default_token_path(home) if path is None else Path(path).expanduser()
    _ensure_private_dir(path.parent)
    token = secrets.token_urlsafe(32)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        return HttpToken(read_token_file(path), path, created=False)
    except OSError as exc:
        raise TokenError(f"cannot create token file {path}: {exc.strerror or exc}") from None
    try:
        os.write(fd, (token + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return HttpToken(token, path, created=True)


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return bytes(value)
    return None


async def _plain_response(
    send: Send, status: int, body: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    payload = body.encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(payload)).encode("ascii")),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class BearerAuthMiddleware:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``.

    Missing header, another scheme or a wrong token: ``401`` with
    ``WWW-Authenticate: Bearer realm="hermes-memory"`` (plus ``error="invalid_token"`` when
    a token was given), and the wrapped application never sees the request. The comparison
    is `hmac.compare_digest` on bytes. Lifespan events pass through; WebSocket connections
    are closed (the MCP transport does not use them).

    :param app: the ASGI application to protect.
    :param token: the expected token.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("token must not be empty")
        self.app = app
        self._expected = token.encode("ascii")

    def _authorized(self, scope: Scope) -> bool | None:
        """True: right token; False: wrong token; None: no bearer token at all."""
        raw = _header(scope, b"authorization")
        if raw is None:
            return None
        scheme, _, credentials = raw.strip().partition(b" ")
        if scheme.lower() != b"bearer" or not credentials.strip():
            return None
        return hmac.compare_digest(credentials.strip(), self._expected)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind == "lifespan":
            await self.app(scope, receive, send)
            return
        verdict = self._authorized(scope)
        if verdict:
            await self.app(scope, receive, send)
            return
        if kind == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        challenge = b'Bearer realm="hermes-memory"'
        if verdict is False:
            challenge += b', error="invalid_token"'
        await _plain_response(
            send,
            401,
            "Unauthorized: send 'Authorization: Bearer <token>' (see hermes-memory-mcp --help)\n",
            [(b"www-authenticate", challenge)],
        )


class SameOriginMiddleware:
    """ASGI middleware for a server bound to a non-loopback address.

    The ``Host`` a client uses cannot be known in advance there, so the MCP SDK's Host check
    is off; instead a request that carries an ``Origin`` header (i.e. comes from a browser)
    must come from the same origin (``http://<Host header>``) or a loopback origin
    (`LOOPBACK_ORIGINS`, any port), else it gets ``403``. Requests without ``Origin``
    (ordinary MCP clients) pass.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") == "http":
            origin = (_header(scope, b"origin") or b"").decode("latin-1").strip().lower()
            if origin and not self._allowed(origin, scope):
                await _plain_response(send, 403, "Invalid Origin header\n")
                return
        await self.app(scope, receive, send)

    @staticmethod
    def _allowed(origin: str, scope: Scope) -> bool:
        host = (_header(scope, b"host") or b"").decode("latin-1").strip().lower()
        if host and origin == f"http://{host}":
            return True
        for allowed in LOOPBACK_ORIGINS:
            if origin == allowed or origin.startswith(allowed + ":"):
                rest = origin[len(allowed) + 1 :]
                if origin == allowed or rest.isdigit():
                    return True
        return False
