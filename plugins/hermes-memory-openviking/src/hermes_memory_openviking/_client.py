"""The OpenViking REST API through one `httpx.Client`, and its failures in the kit's taxonomy.

Routes used (JSON; every answer is the envelope ``{"status": "ok", "result": ...}`` or
``{"status": "error", "error": {"code": ..., "message": ...}}`` with an HTTP error status):

* ``GET /api/v1/system/status`` → ``{"initialized": bool, "user": str}``
* ``POST /api/v1/search/find`` ``{"query", "limit", "target_uri"}`` →
  ``{"memories": [...], "resources": [...], "skills": [...], "total": n}``; each item has
  ``uri``, ``context_type``, ``score``, ``abstract``
* ``GET /api/v1/content/read?uri=`` → the text; ``/content/abstract`` and
  ``/content/overview`` → the L0 / L1 summaries
* ``GET /api/v1/fs/ls?uri=`` → a list of entries (``uri``, ``isDir``, ``abstract``...)
* ``POST /api/v1/content/write`` ``{"uri", "content", "mode"}``
* ``DELETE /api/v1/fs?uri=``
* ``POST /api/v1/resources`` ``{"path", "to"?, "wait": false}``
* ``POST /api/v1/sessions/{id}/messages/batch`` ``{"messages": [{"role", "content"}]}``
  (the session is created on first add) and ``POST /api/v1/sessions/{id}/commit``

Identity: ``X-API-Key`` when a key is set, ``X-OpenViking-Account`` / ``X-OpenViking-User``
when an account / user is set.
"""

from __future__ import annotations

import json
from typing import Any

from hermes_memory_core.kit import (
    Failure,
    JsonClient,
    ServiceError,
    check_visible,
    classify_http,
    path_segment,
    user_agent,
)

__all__ = ["OpenVikingClient", "OpenVikingError", "check_uri", "classify", "path_segment"]

SCHEME = "viking://"
_ROOTS = ("user", "agent", "resources", "session", "skills", "~")

#: OpenViking answered with an HTTP error, or with something that is not its envelope.
OpenVikingError = ServiceError


def check_uri(uri: str, *, min_depth: int = 0) -> str:
    """``uri`` if it is a plain ``viking://`` URI under one of OpenViking's roots.

    :param min_depth: path segments required after the scheme (``2`` refuses a root such as
        ``viking://user`` or ``viking://resources`` - what a deletion must never target).
    :raises ValueError: another scheme, ``.``/``..`` or empty segments, control or invisible
        characters, an unknown root, too few segments, more than 1000 characters.
    """
    text = uri.strip()
    if not text.startswith(SCHEME) or len(text) > 1000:
        raise ValueError(f"{uri!r} is not a viking:// URI")
    check_visible(text, "URI")
    parts = text[len(SCHEME) :].rstrip("/").split("/") if text != SCHEME else []
    if any(p in ("", ".", "..") or "\\" in p for p in parts):
        raise ValueError(f"{uri!r}: empty, '.' or '..' path segments are not allowed")
    if parts and parts[0] not in _ROOTS:
        raise ValueError(f"{uri!r}: the first segment must be one of {', '.join(_ROOTS)}")
    if len(parts) < min_depth:
        raise ValueError(f"{uri!r} is too broad (a whole root or the top of a space)")
    return text


def classify(exc: BaseException) -> Failure:
    """Map what a call raised to a `Failure` with a user-facing message."""
    return classify_http(exc, "OpenViking", auth_hint="OPENVIKING_API_KEY")


class OpenVikingClient(JsonClient):
    """A thin, typed client of the routes above (the plumbing is the kit's `JsonClient`).

    :param base_url: the server, e.g. ``http://127.0.0.1:1933``.
    :param api_key: sent as ``X-API-Key`` when not empty (never logged).
    :param account: ``X-OpenViking-Account`` when not empty.
    :param user: ``X-OpenViking-User`` when not empty.
    :param timeout: seconds per request (connect at most 3 s).
    :param transport: replaces the network (tests).
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        account: str,
        user: str,
        timeout: float,
        transport: Any = None,
    ) -> None:
        key = api_key.removeprefix("Bearer ").strip()
        headers = {"User-Agent": user_agent("hermes-memory-openviking")}
        if key:
            headers["X-API-Key"] = key
        if account:
            headers["X-OpenViking-Account"] = account
        if user:
            headers["X-OpenViking-User"] = user
        super().__init__(
            base_url,
            service="OpenViking",
            timeout=timeout,
            headers=headers,
            secret=key,
            transport=transport,
        )

    def error_detail(self, payload: Any) -> tuple[str, str]:
        """The envelope's ``error: {code, message}`` (or FastAPI's ``detail``)."""
        error = payload.get("error") if isinstance(payload, dict) else None
        if isinstance(error, dict):
            return str(error.get("code") or ""), str(error.get("message") or "")
        return "", str(payload.get("detail") or "") if isinstance(payload, dict) else ""

    def answer_failed(self, payload: Any) -> bool:
        """``{"status": "error", ...}`` even with a 2xx status."""
        return isinstance(payload, dict) and payload.get("status") == "error"

    def unwrap(self, payload: Any, method: str, path: str) -> Any:
        """The envelope's ``result``."""
        if not isinstance(payload, dict):
            raise ServiceError(0, f"OpenViking {method} {path}: the answer is not JSON")
        return payload.get("result")

    # ------------------------------------------------------------------ routes
    def status(self, *, timeout: float | None = None) -> dict[str, Any]:
        """The server's status (``initialized``, ``user``)."""
        answer = self.request("GET", "/api/v1/system/status", timeout=timeout)
        return answer if isinstance(answer, dict) else {}

    def find(
        self, query: str, *, limit: int, target_uri: str = "", timeout: float | None = None
    ) -> list[dict[str, Any]]:
        """Memories, resources and skills matching ``query``, best first."""
        body = {"query": query, "limit": limit, "target_uri": target_uri}
        answer = self.request("POST", "/api/v1/search/find", body=body, timeout=timeout)
        found: list[dict[str, Any]] = []
        if isinstance(answer, dict):
            for key in ("memories", "resources", "skills"):
                items = answer.get(key)
                if isinstance(items, list):
                    found += [
                        i for i in items if isinstance(i, dict) and isinstance(i.get("uri"), str)
                    ]
        found.sort(key=lambda i: -float(i.get("score") or 0.0))
        return found

    def read(self, uri: str, level: str = "read", *, timeout: float | None = None) -> str:
        """The content of ``uri`` (``level``: ``read`` full text, ``abstract``, ``overview``)."""
        answer = self.request(
            "GET", f"/api/v1/content/{level}", params={"uri": uri}, timeout=timeout
        )
        if isinstance(answer, dict):
            answer = answer.get("content", "")
        return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)

    def ls(self, uri: str) -> list[dict[str, Any]]:
        """The entries of directory ``uri``."""
        params = {"uri": uri, "output": "agent", "node_limit": 200}
        answer = self.request("GET", "/api/v1/fs/ls", params=params)
        return [e for e in answer if isinstance(e, dict)] if isinstance(answer, list) else []

    def write(self, uri: str, content: str, mode: str = "create") -> Any:
        """Write ``content`` to ``uri`` (``create`` refuses an existing file: HTTP 409)."""
        body = {"uri": uri, "content": content, "mode": mode}
        return self.request("POST", "/api/v1/content/write", body=body)

    def remove(self, uri: str) -> Any:
        """Delete one file (never recursive)."""
        return self.request("DELETE", "/api/v1/fs", params={"uri": uri, "recursive": "false"})

    def add_resource(self, source: str, to: str = "") -> Any:
        """Ask OpenViking to import ``source`` (an http(s) URL), optionally at ``to``."""
        body: dict[str, Any] = {"path": source, "wait": False}
        if to:
            body["to"] = to
        return self.request("POST", "/api/v1/resources", body=body)

    def add_messages(self, session_id: str, messages: list[dict[str, str]]) -> Any:
        """Append messages to session ``session_id`` (created on first add)."""
        path = f"/api/v1/sessions/{path_segment(session_id, 'session id')}/messages/batch"
        return self.request("POST", path, body={"messages": messages})

    def commit(self, session_id: str) -> Any:
        """Commit session ``session_id``: OpenViking archives it and extracts memories."""
        path = f"/api/v1/sessions/{path_segment(session_id, 'session id')}/commit"
        return self.request("POST", path, body={})
