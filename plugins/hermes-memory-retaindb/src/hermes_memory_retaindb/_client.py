"""The RetainDB REST API through one `httpx.Client`, and its failures in the kit's taxonomy.

Routes used (all JSON; ``Authorization: Bearer <key>`` and ``X-API-Key: <key>``):

* ``GET /v1/memory/profile/{user}?project=`` → ``{"memories": [...]}``
* ``POST /v1/context/query`` → ``{"results": [...]}`` (and optionally ``"context"``)
* ``POST /v1/memory/search`` → ``{"results": [...]}``
* ``POST /v1/memory`` → the stored memory (``{"id": ...}`` or ``{"memory": {"id": ...}}``)
* ``DELETE /v1/memory/{id}``
* ``POST /v1/memory/ingest/session`` with ``{"messages": [...]}``
* ``POST /v1/files`` (multipart: ``file``, ``path``, ``scope``) → ``{"file": {...}}``
* ``GET /v1/files?limit=&prefix=`` → ``{"files": [...]}``
* ``GET /v1/files/{id}`` → ``{"file": {...}}``; ``GET /v1/files/{id}/content`` → the bytes
* ``POST /v1/files/{id}/ingest`` with ``{"user_id": ...}``
* ``DELETE /v1/files/{id}``

A memory is a mapping with at least ``content``; ``id``, ``memory_type`` and ``score`` are
passed on when present.
"""

from __future__ import annotations

from typing import Any

from hermes_memory_core.kit import Failure, JsonClient, ServiceError, classify_http, path_segment

__all__ = ["RetainDBClient", "RetainDBError", "classify", "path_segment"]

#: RetainDB answered with an HTTP error, or with something that is not JSON.
RetainDBError = ServiceError


def classify(exc: BaseException) -> Failure:
    """Map what a call raised to a `Failure` with a user-facing message."""
    return classify_http(exc, "RetainDB", auth_hint="RETAINDB_API_KEY")


class RetainDBClient(JsonClient):
    """A thin, typed client of the routes above (the plumbing is the kit's `JsonClient`).

    :param api_key: the key sent as Bearer token and ``X-API-Key`` (never logged).
    :param base_url: ``https://api.retaindb.com`` or a self-hosted endpoint.
    :param project: the project (data partition) every call is scoped to.
    :param timeout: seconds per request (connect at most 3 s).
    :param transport: replaces the network (tests).
    """

    def __init__(
        self, *, api_key: str, base_url: str, project: str, timeout: float, transport: Any = None
    ) -> None:
        self.project = project
        key = api_key.removeprefix("Bearer ").strip()
        headers = {
            "Authorization": f"Bearer {key}",
            "X-API-Key": key,
            "x-sdk-runtime": "hermes-memory",
        }
        super().__init__(
            base_url,
            service="RetainDB",
            timeout=timeout,
            headers=headers,
            secret=key,
            transport=transport,
        )

    def error_detail(self, payload: Any) -> tuple[str, str]:
        """RetainDB's ``message`` (or ``error``)."""
        if isinstance(payload, dict):
            return "", str(payload.get("message") or payload.get("error") or "")
        return "", ""

    # ------------------------------------------------------------------ routes
    def profile(self, user_id: str, *, timeout: float | None = None) -> list[dict[str, Any]]:
        """The user's profile memories."""
        path = f"/v1/memory/profile/{path_segment(user_id, 'user id')}"
        params = {"project": self.project, "include_pending": "true"}
        return memories(self.request("GET", path, params=params, timeout=timeout), "memories")

    def context(
        self, user_id: str, session_id: str, query: str, *, timeout: float | None = None
    ) -> list[dict[str, Any]]:
        """Memories relevant to ``query`` (the context overlay)."""
        body = self._scoped(
            user_id, session_id, query=query, include_memories=True, max_tokens=1200
        )
        answer = self.request("POST", "/v1/context/query", body=body, timeout=timeout)
        return memories(answer, "results") or memories(answer, "memories")

    def search(self, user_id: str, session_id: str, query: str, top_k: int) -> list[dict[str, Any]]:
        """Ranked memories matching ``query``."""
        body = self._scoped(user_id, session_id, query=query, top_k=top_k, include_pending=True)
        return memories(self.request("POST", "/v1/memory/search", body=body), "results")

    def add(self, write: dict[str, Any]) -> dict[str, Any]:
        """Store one memory (``write``: user_id, session_id, content, memory_type, importance)."""
        body = self._scoped(
            str(write["user_id"]),
            str(write["session_id"]),
            content=write["content"],
            memory_type=write.get("memory_type", "factual"),
            importance=write.get("importance", 0.7),
            write_mode="sync",
        )
        answer = self.request("POST", "/v1/memory", body=body)
        return answer if isinstance(answer, dict) else {}

    def delete(self, memory_id: str) -> Any:
        """Delete one memory by id."""
        return self.request("DELETE", f"/v1/memory/{path_segment(memory_id, 'memory id')}")

    def ingest(self, write: dict[str, Any]) -> Any:
        """Hand a turn's messages to RetainDB's extraction (``write``: user_id, session_id,
        messages)."""
        body = self._scoped(
            str(write["user_id"]),
            str(write["session_id"]),
            messages=write["messages"],
            write_mode="sync",
        )
        return self.request("POST", "/v1/memory/ingest/session", body=body)

    # ------------------------------------------------------------------ files
    def upload_file(
        self,
        name: str,
        data: bytes,
        mime_type: str,
        remote_path: str,
        scope: str,
        *,
        timeout: float,
    ) -> dict[str, Any]:
        """Store ``data`` in the file store at ``remote_path``; the stored file's record."""
        form = {"path": remote_path, "scope": scope, "project": self.project}
        answer = self.request(
            "POST", "/v1/files", files={"file": (name, data, mime_type)}, form=form, timeout=timeout
        )
        return _file(answer)

    def list_files(self, prefix: str | None, limit: int) -> list[dict[str, Any]]:
        """Stored files, optionally under ``prefix``."""
        params = {"limit": str(limit), "project": self.project}
        if prefix:
            params["prefix"] = prefix
        answer = self.request("GET", "/v1/files", params=params)
        items = answer.get("files") if isinstance(answer, dict) else answer
        return [f for f in items if isinstance(f, dict)] if isinstance(items, list) else []

    def get_file(self, file_id: str) -> dict[str, Any]:
        """One stored file's record."""
        return _file(self.request("GET", f"/v1/files/{path_segment(file_id, 'file id')}"))

    def file_content(self, file_id: str, max_bytes: int, *, timeout: float) -> tuple[bytes, bool]:
        """At most ``max_bytes`` of a stored file, and whether that is all of it.

        The whole download is bounded by ``timeout`` seconds, not only each read.
        """
        path = f"/v1/files/{path_segment(file_id, 'file id')}/content"
        return self.download(path, max_bytes, timeout=timeout)

    def ingest_file(self, file_id: str, user_id: str, *, timeout: float) -> dict[str, Any]:
        """Have RetainDB chunk, embed and extract memories from a stored file."""
        path = f"/v1/files/{path_segment(file_id, 'file id')}/ingest"
        answer = self.request(
            "POST", path, body={"user_id": user_id, "project": self.project}, timeout=timeout
        )
        return answer if isinstance(answer, dict) else {}

    def delete_file(self, file_id: str) -> Any:
        """Delete a stored file."""
        return self.request("DELETE", f"/v1/files/{path_segment(file_id, 'file id')}")

    def _scoped(self, user_id: str, session_id: str, **extra: Any) -> dict[str, Any]:
        return {"project": self.project, "user_id": user_id, "session_id": session_id, **extra}


def memories(answer: Any, key: str) -> list[dict[str, Any]]:
    """The memory mappings under ``answer[key]`` that have text content."""
    items = answer.get(key) if isinstance(answer, dict) else None
    if not isinstance(items, list):
        return []
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("content"), str):
            out.append(item)
        elif isinstance(item, str):
            out.append({"content": item})
    return out


def _file(answer: Any) -> dict[str, Any]:
    if not isinstance(answer, dict):
        return {}
    inner = answer.get("file")
    return inner if isinstance(inner, dict) else answer


def memory_id(answer: dict[str, Any]) -> str:
    """The id of a stored memory in ``answer`` (``""`` when absent)."""
    inner = answer.get("memory")
    for source in (answer, inner if isinstance(inner, dict) else {}):
        value = source.get("id") or source.get("memory_id")
        if isinstance(value, str | int):
            return str(value)
    return ""
