"""Who may talk to the dashboard: token login, cookie, Host, Origin and CSRF checks.

* **Login**: a URL carrying ``?token=`` (compared with `hmac.compare_digest`) sets an
  HttpOnly, SameSite=Strict cookie and redirects to the same page without the token, so the
  token does not stay in the address bar or the history. The cookie holds a value derived
  from the token (HMAC), never the token itself; it stays valid across restarts.
* **Host** (DNS rebinding): on loopback only ``127.0.0.1``, ``localhost`` and ``[::1]`` with
  the server's port are accepted; on a named address that address too.
* **Origin**: a request that changes something (any method but GET/HEAD) must carry an
  ``Origin`` (or ``Referer``) naming exactly this server; otherwise ``403``.
* **CSRF**: every form carries a hidden ``_csrf`` field derived from the token; `check_csrf`
  verifies it (constant time) before a handler runs.

The token, loopback test and the header helper are the MCP HTTP transport's
(`hermes_memory_mcp_server`).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from hermes_memory_mcp_server import is_loopback

__all__ = ["Guard", "Keys", "check_csrf"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Paths served without login: the stylesheet (so the refusal page is readable) and health.
PUBLIC_PREFIXES = ("/static/", "/healthz")
_SAFE_METHODS = {"GET", "HEAD"}


class Keys:
    """Values derived from the token: the login cookie and the CSRF field."""

    def __init__(self, token: str, port: int) -> None:
        self._token = token.encode("ascii")
        self.cookie_name = f"hm_dashboard_{port}"
        self.session = self._derive(b"session")
        self.csrf = self._derive(b"csrf")

    def _derive(self, purpose: bytes) -> str:
        return hmac.new(
            self._token, b"hermes-memory-dashboard:" + purpose, hashlib.sha256
        ).hexdigest()

    def token_ok(self, given: str) -> bool:
        return hmac.compare_digest(given.encode("utf-8", "replace"), self._token)

    def session_ok(self, given: str) -> bool:
        return hmac.compare_digest(given.encode("utf-8", "replace"), self.session.encode("ascii"))

    def csrf_ok(self, given: str) -> bool:
        return hmac.compare_digest(given.encode("utf-8", "replace"), self.csrf.encode("ascii"))


def check_csrf(keys: Keys, form: Any) -> bool:
    """Whether a submitted form carries the right ``_csrf`` value."""
    value = form.get("_csrf") if form is not None else None
    return isinstance(value, str) and keys.csrf_ok(value)


def _headers(scope: Scope) -> dict[bytes, bytes]:
    return {bytes(k).lower(): bytes(v) for k, v in scope.get("headers") or ()}


def _cookies(raw: bytes) -> dict[str, str]:
    found: dict[str, str] = {}
    for part in raw.decode("latin-1").split(";"):
        name, sep, value = part.strip().partition("=")
        if sep:
            found.setdefault(name, value)
    return found


class Guard:
    """ASGI middleware applying every check above before the application sees a request.

    :param refuse: ``refuse(scope, status, reason) -> (body, content_type)``: the page shown
        for a refusal (in the visitor's language).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        keys: Keys,
        host: str,
        port: int,
        refuse: Callable[[Scope, int, str], tuple[str, str]],
    ) -> None:
        self.app = app
        self.keys = keys
        self.refuse = refuse
        bare = host.strip("[]").lower()
        wildcard = bare in {"0.0.0.0", "::", ""}  # noqa: S104 - naming, not binding
        names = {"127.0.0.1", "localhost", "[::1]"}
        if not is_loopback(bare) and not wildcard:
            names.add(f"[{bare}]" if ":" in bare else bare)
        #: None: any Host (a wildcard bind cannot know its names; Origin must still match it).
        self.hosts: set[str] | None = None if wildcard else {f"{n}:{port}" for n in names}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        host = headers.get(b"host", b"").decode("latin-1").strip().lower()
        if self.hosts is not None and host not in self.hosts:
            await self._refuse(scope, send, 421, "host")
            return
        path = str(scope.get("path") or "/")
        method = str(scope.get("method") or "GET").upper()
        if method not in _SAFE_METHODS and not self._same_origin(headers, host):
            await self._refuse(scope, send, 403, "origin")
            return
        if path.startswith(PUBLIC_PREFIXES):
            await self.app(scope, receive, send)
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        given = query.get("token")
        if given is not None:
            if not self.keys.token_ok(given):
                await self._refuse(scope, send, 401, "token")
                return
            await self._login(scope, send, query)
            return
        cookie = _cookies(headers.get(b"cookie", b"")).get(self.keys.cookie_name, "")
        if not cookie or not self.keys.session_ok(cookie):
            await self._refuse(scope, send, 401, "login")
            return
        await self.app(scope, receive, send)

    @staticmethod
    def _same_origin(headers: dict[bytes, bytes], host: str) -> bool:
        expected = f"http://{host}"
        origin = headers.get(b"origin", b"").decode("latin-1").strip().lower()
        if origin:
            return hmac.compare_digest(origin.encode(), expected.encode())
        referer = headers.get(b"referer", b"").decode("latin-1").strip()
        if referer:
            parts = urlsplit(referer)
            return f"{parts.scheme}://{parts.netloc}".lower() == expected
        return False

    async def _login(self, scope: Scope, send: Send, query: dict[str, str]) -> None:
        rest = {k: v for k, v in query.items() if k != "token"}
        # One leading slash: "//host" would send the browser to another site after login.
        path = quote("/" + str(scope.get("path") or "/").lstrip("/\\"), safe="/")
        location = path + (f"?{urlencode(rest)}" if rest else "")
        cookie = f"{self.keys.cookie_name}={self.keys.session}; Path=/; HttpOnly; SameSite=Strict"
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", location.encode("utf-8")),
                    (b"set-cookie", cookie.encode("ascii")),
                    (b"cache-control", b"no-store"),
                    (b"referrer-policy", b"same-origin"),
                    (b"content-length", b"0"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    async def _refuse(self, scope: Scope, send: Send, status: int, reason: str) -> None:
        body, content_type = self.refuse(scope, status, reason)
        payload = body.encode("utf-8")
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", content_type.encode("ascii")),
                    (b"content-length", str(len(payload)).encode("ascii")),
                    (b"cache-control", b"no-store"),
                    (b"referrer-policy", b"same-origin"),
                    (b"x-frame-options", b"DENY"),
                    (b"content-security-policy", CSP.encode("ascii")),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})


#: No remote anything: scripts, styles, images, forms and frames from this server only.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
