"""`JsonClient`: the HTTP plumbing of a JSON REST adapter, on ``httpx``.

What every remote adapter that speaks JSON over HTTP needs, written once:

* one ``httpx.Client`` per provider: a base URL, fixed headers (the API key among them),
  bounded timeouts (the connect phase at most 3 s), no redirects followed, no proxy or
  ``.netrc`` taken from the environment, no transport-level retries (the `Guard` retries);
* `path_segment`: an identifier percent-encoded as one URL path segment, refused when it
  could move the path (``.``, ``..``) or hides control / invisible characters;
* `ServiceError`: the service answered with an HTTP error (or with something that is not
  JSON), its message one line with the API key masked;
* `classify_http`: any of that, and httpx's own timeouts and connection errors, in the kit's
  failure taxonomy (`Failure`), with the service's name in every message.

``httpx`` is not a dependency of hermes-memory-core: this module imports it only when a
`JsonClient` is built (or a download is streamed), so an adapter that uses the class
declares ``httpx`` in its own ``pyproject.toml``. Subclass `JsonClient` per service, add
one method per route, and override `error_detail` / `unwrap` where the service's answers
have an envelope::

    class NotesClient(JsonClient):
        def search(self, query: str) -> list[str]:
            answer = self.request("GET", "/notes", params={"q": query})
            return [str(n) for n in answer.get("notes", [])]

    client = NotesClient("https://notes.example", service="Notes", timeout=5.0,
                         headers={"Authorization": f"Bearer {key}"}, secret=key)
    guard = Guard("notes", lambda exc: classify_http(exc, "Notes", auth_hint="NOTES_API_KEY"))
"""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from hermes_memory_core.kit._failures import (
    Failure,
    FailureKind,
    classify_common,
    kind_for_status,
    one_line,
)

if TYPE_CHECKING:
    import httpx

__all__ = [
    "JsonClient",
    "ServiceError",
    "check_visible",
    "classify_http",
    "path_segment",
    "user_agent",
]

#: Seconds the TCP/TLS connect phase may take at most (the request timeout may be longer).
CONNECT_TIMEOUT = 3.0


class ServiceError(Exception):
    """The service answered with an HTTP error status, or with something that is not JSON.

    :param status: the HTTP status (``0``: the answer was not what the service speaks).
    :param message: one line, the API key already masked.
    :param code: the service's own error code, when its answer names one.
    """

    def __init__(self, status: int, message: str, code: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def check_visible(text: str, what: str) -> None:
    """Refuse ``text`` holding control, invisible format or line/paragraph separators.

    :raises ValueError: naming ``what``.
    """
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in text):
        raise ValueError(f"{what} {text!r} holds control or invisible characters")


def user_agent(distribution: str) -> str:
    """``<distribution>/<its installed version>`` for a ``User-Agent`` header (``/0`` when
    it runs from a source checkout that is not installed)."""
    from importlib import metadata

    try:
        version = metadata.version(distribution)
    except metadata.PackageNotFoundError:  # pragma: no cover - from a checkout
        version = "0"
    return f"{distribution}/{version}"


def path_segment(value: str, what: str) -> str:
    """``value`` percent-encoded as one URL path segment (``/`` included).

    :param what: the identifier's name in the error message (``"memory id"``).
    :raises ValueError: empty, ``.``/``..`` (they would move up the path), longer than 256
        characters, or holding control or invisible format characters.
    """
    text = value.strip()
    if not text or text in (".", "..") or len(text) > 256:
        raise ValueError(f"{what} {value!r} is not a valid identifier")
    check_visible(text, what)
    return quote(text, safe="")


def classify_http(exc: BaseException, service: str, *, auth_hint: str = "") -> Failure:
    """Map what a `JsonClient` call raised to a `Failure` with a user-facing message.

    :param service: the service's name, put in front of transport messages.
    :param auth_hint: the setting to check on bad credentials (``"NOTES_API_KEY"``),
        appended to 401/403 messages as ``Check NOTES_API_KEY.``
    """
    if isinstance(exc, ServiceError):
        if exc.status == 0:
            return Failure(FailureKind.SERVER, str(exc))
        kind = kind_for_status(exc.status)
        if kind is FailureKind.AUTH and auth_hint:
            return Failure(kind, f"{exc} Check {auth_hint}.", exc.status)
        return Failure(kind, str(exc), exc.status)
    common = classify_common(exc)
    if common is not None:
        return Failure(common.kind, f"{service}: {common.message}", common.status)
    if isinstance(exc, ValueError):
        return Failure(FailureKind.INVALID, f"{service}: {one_line(exc)}")
    return Failure(
        FailureKind.OTHER, f"{service} call failed: {type(exc).__name__}: {one_line(exc)}"
    )


class JsonClient:
    """One ``httpx.Client`` for one JSON service; subclass it and add a method per route.

    :param base_url: the service's root, e.g. ``https://api.example.com`` (a trailing ``/``
        is dropped).
    :param service: its name in error messages (``"RetainDB"``).
    :param timeout: seconds per request; the connect phase gets at most `CONNECT_TIMEOUT`.
    :param headers: sent with every request (``Accept: application/json`` is added).
    :param secret: masked as ``***`` wherever an error message could quote it.
    :param transport: an ``httpx.BaseTransport`` replacing the network (tests).

    Redirects are not followed (an API key must not travel to another host), proxies and
    ``.netrc`` from the environment are ignored, and the transport does not retry: retries
    belong to the `Guard`, which counts them.
    """

    def __init__(
        self,
        base_url: str,
        *,
        service: str,
        timeout: float,
        headers: Mapping[str, str] | None = None,
        secret: str = "",
        transport: Any = None,
    ) -> None:
        import httpx

        self.service = service
        self._secret = secret
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"),
            timeout=httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT)),
            transport=transport if transport is not None else httpx.HTTPTransport(retries=0),
            headers={"Accept": "application/json", **(headers or {})},
            follow_redirects=False,
            trust_env=False,
        )

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    def scrub(self, text: str) -> str:
        """``text`` with the secret masked."""
        return text.replace(self._secret, "***") if self._secret else text

    # ------------------------------------------------------------------ answers
    def error_detail(self, payload: Any) -> tuple[str, str]:
        """``(code, message)`` the service put in an error answer (``payload``: its JSON,
        None when it was not JSON). Override for the service's error shape."""
        if isinstance(payload, dict):
            for key in ("message", "error", "detail"):
                value = payload.get(key)
                if value:
                    return "", str(value)
        return "", ""

    def answer_failed(self, payload: Any) -> bool:
        """Whether a 2xx answer says it failed (an envelope with an error status): it is
        then raised as a `ServiceError` with status 500. Override for such a service."""
        return False

    def unwrap(self, payload: Any, method: str, path: str) -> Any:
        """The useful part of a successful JSON answer (override for an envelope).

        :raises ServiceError: the answer is not what the service speaks.
        """
        return payload

    def fail(self, response: httpx.Response, method: str, path: str, payload: Any) -> ServiceError:
        """The `ServiceError` for an error answer (``payload``: its JSON or None)."""
        status = response.status_code if response.status_code >= 400 else 500
        code, detail = self.error_detail(payload)
        text = self.scrub(one_line(detail or response.text or response.reason_phrase, 200))
        where = path.split("?")[0]
        message = f"{self.service} {method} {where}: HTTP {status} {code} {text}"
        return ServiceError(status, " ".join(message.split()), code)

    def check(self, response: httpx.Response, method: str, path: str) -> None:
        """Raise the `ServiceError` of an HTTP error status (streamed bodies are read)."""
        if response.status_code >= 400:
            response.read()
            raise self.fail(response, method, path, _json(response))

    # ------------------------------------------------------------------ requests
    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        timeout: float | None = None,
        files: Mapping[str, tuple[str, bytes, str]] | None = None,
        form: Mapping[str, str] | None = None,
    ) -> Any:
        """One request (a JSON ``body``, or multipart ``files`` and ``form``); the answer's
        JSON through `unwrap`. ``path`` segments that come from callers must be made with
        `path_segment`.

        :param timeout: seconds for this request instead of the client's.
        :raises ServiceError: an HTTP error status, or an answer that is not JSON.
        :raises httpx.HTTPError: the request did not complete (timeout, refused...).
        """
        extra: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        if files is not None:
            extra.update(files=dict(files), data=dict(form or {}))
        else:
            extra["json"] = body
        response = self._client.request(method, path, params=params, **extra)
        payload = _json(response)
        if response.status_code >= 400 or self.answer_failed(payload):
            raise self.fail(response, method, path, payload)
        if payload is None:
            raise ServiceError(0, f"{self.service} {method} {path}: the answer is not JSON")
        return self.unwrap(payload, method, path)

    def download(self, path: str, max_bytes: int, *, timeout: float) -> tuple[bytes, bool]:
        """At most ``max_bytes`` of the body of ``GET path``, and whether that is all of it.

        The whole download is bounded by ``timeout`` seconds, not only each read.

        :raises ServiceError: an HTTP error status.
        :raises httpx.ReadTimeout: the body took longer than ``timeout``.
        """
        import httpx

        deadline = time.monotonic() + timeout
        headers = {"Accept": "*/*"}
        with self._client.stream("GET", path, headers=headers, timeout=timeout) as response:
            self.check(response, "GET", path)
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size > max_bytes:
                    return b"".join(chunks)[:max_bytes], False
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout(f"the download took longer than {timeout:g} s")
            return b"".join(chunks), True


def _json(response: httpx.Response) -> Any:
    """The answer's JSON (``{}`` for an empty body), None when it is not JSON."""
    try:
        return response.json() if response.content else {}
    except ValueError:
        return None
