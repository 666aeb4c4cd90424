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

import json
import time
import unicodedata
from typing import Any
from urllib.parse import quote

import httpx

from hermes_memory_core.kit import Failure, FailureKind, classify_common, kind_for_status, one_line

__all__ = ["RetainDBClient", "RetainDBError", "classify", "path_segment"]


class RetainDBError(Exception):
    """RetainDB answered with an HTTP error, or with something that is not JSON."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def path_segment(value: str, what: str) -> str:
    """``value`` percent-encoded as one URL path segment.

    :raises ValueError: empty, ``.``/``..`` (they would move up the path), longer than 256
        characters, or holding control or invisible format characters.
    """
    text = value.strip()
    if not text or text in (".", "..") or len(text) > 256:
        raise ValueError(f"{what} {value!r} is not a valid identifier")
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in text):
        raise ValueError(f"{what} {value!r} holds control or invisible characters")
    return quote(text, safe="")


def classify(exc: BaseException) -> Failure:
    """Map what a call raised to a `Failure` with a user-facing message."""
    if isinstance(exc, RetainDBError):
        if exc.status == 0:
            return Failure(FailureKind.SERVER, str(exc))
        kind = kind_for_status(exc.status)
        if kind is FailureKind.AUTH:
            return Failure(kind, f"{exc} Check RETAINDB_API_KEY.", exc.status)
        return Failure(kind, str(exc), exc.status)
    common = classify_common(exc)
    if common is not None:
        return Failure(common.kind, f"RetainDB: {common.message}", common.status)
    if isinstance(exc, ValueError):
        return Failure(FailureKind.INVALID, f"RetainDB: {one_line(exc)}")
    return Failure(
        FailureKind.OTHER, f"RetainDB call failed: {type(exc).__name__}: {one_line(exc)}"
    )


class RetainDBClient:
    """A thin, typed client of the routes above.

    :param api_key: the key sent as Bearer token and ``X-API-Key`` (never logged).
    :param base_url: ``https://api.retaindb.com`` or a self-hosted endpoint.
    :param project: the project (data partition) every call is scoped to.
    :param timeout: seconds per request (connect at most 3 s).
    :param transport: replaces the network (tests).
    """

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str,
        project: str,
        timeout: float,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.project = project
        self._key = api_key.removeprefix("Bearer ").strip()
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"),
            timeout=httpx.Timeout(timeout, connect=min(timeout, 3.0)),
            transport=transport if transport is not None else httpx.HTTPTransport(retries=0),
            headers={
                "Authorization": f"Bearer {self._key}",
                "X-API-Key": self._key,
                "Accept": "application/json",
                "x-sdk-runtime": "hermes-memory",
            },
            follow_redirects=False,
            trust_env=False,
        )

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        body: dict[str, Any] | None = None,
        timeout: float | None = None,
        files: dict[str, tuple[str, bytes, str]] | None = None,
        form: dict[str, str] | None = None,
    ) -> Any:
        """One request (JSON body, or multipart ``files`` + ``form``); the decoded answer.

        :raises RetainDBError: an HTTP error status or an answer that is not JSON.
        :raises httpx.HTTPError: the request did not complete (timeout, refused...).
        """
        extra: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        if files is not None:
            extra.update(files=files, data=form or {})
        else:
            extra["json"] = body
        response = self._client.request(method, path, params=params, **extra)
        self._check(response, method, path)
        try:
            payload = response.json() if response.content else {}
        except ValueError:
            payload = None
        if payload is None:
            raise RetainDBError(0, f"RetainDB {method} {path}: the answer is not JSON")
        return payload

    def _check(self, response: httpx.Response, method: str, path: str) -> None:
        if response.status_code >= 400:
            response.read()
            try:
                payload = response.json() if response.content else {}
            except ValueError:
                payload = None
            detail = ""
            if isinstance(payload, dict):
                detail = str(payload.get("message") or payload.get("error") or "")
            detail = self._scrub(one_line(detail or response.text or response.reason_phrase, 200))
            raise RetainDBError(
                response.status_code,
                f"RetainDB {method} {path.split('?')[0]}: HTTP {response.status_code} {detail}",
            )

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
        body = self._scoped(user_id, session_id, query=query, include_memories=True,
                            max_tokens=1200)  # fmt: skip
        answer = self.request("POST", "/v1/context/query", body=body, timeout=timeout)
        return memories(answer, "results") or memories(answer, "memories")

    def search(self, user_id: str, session_id: str, query: str, top_k: int) -> list[dict[str, Any]]:
        """Ranked memories matching ``query``."""
        body = self._scoped(user_id, session_id, query=query, top_k=top_k, include_pending=True)
        return memories(self.request("POST", "/v1/memory/search", body=body), "results")

    def add(self, write: dict[str, Any]) -> dict[str, Any]:
        """Store one memory (``write``: user_id, session_id, content, memory_type, importance)."""
        body = self._scoped(
            str(write["user_id"]), str(write["session_id"]), content=write["content"],
            memory_type=write.get("memory_type", "factual"),
            importance=write.get("importance", 0.7), write_mode="sync",
        )  # fmt: skip
        answer = self.request("POST", "/v1/memory", body=body)
        return answer if isinstance(answer, dict) else {}

    def delete(self, memory_id: str) -> Any:
        """Delete one memory by id."""
        return self.request("DELETE", f"/v1/memory/{path_segment(memory_id, 'memory id')}")

    def ingest(self, write: dict[str, Any]) -> Any:
        """Hand a turn's messages to RetainDB's extraction (``write``: user_id, session_id,
        messages)."""
        body = self._scoped(str(write["user_id"]), str(write["session_id"]),
                            messages=write["messages"], write_mode="sync")  # fmt: skip
        return self.request("POST", "/v1/memory/ingest/session", body=body)

    # ------------------------------------------------------------------ files
    def upload_file(
        self, name: str, data: bytes, mime_type: str, remote_path: str, scope: str,
        *, timeout: float,
    ) -> dict[str, Any]:  # fmt: skip
        """Store ``data`` in the file store at ``remote_path``; the stored file's record."""
        form = {"path": remote_path, "scope": scope, "project": self.project}
        answer = self.request("POST", "/v1/files", files={"file": (name, data, mime_type)},
                              form=form, timeout=timeout)  # fmt: skip
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
        deadline = time.monotonic() + timeout
        headers = {"Accept": "*/*"}
        with self._client.stream("GET", path, headers=headers, timeout=timeout) as response:
            self._check(response, "GET", path)
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

    def ingest_file(self, file_id: str, user_id: str, *, timeout: float) -> dict[str, Any]:
        """Have RetainDB chunk, embed and extract memories from a stored file."""
        path = f"/v1/files/{path_segment(file_id, 'file id')}/ingest"
        answer = self.request("POST", path, body={"user_id": user_id, "project": self.project},
                              timeout=timeout)  # fmt: skip
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


def dumps(value: Any) -> str:
    """JSON for the model (CJK kept readable)."""
    return json.dumps(value, ensure_ascii=False, default=str)
