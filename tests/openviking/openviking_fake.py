"""An OpenViking server on 127.0.0.1, built from the routes and request/response models of the
``openviking`` 0.5.2 server (read from its wheel; the real server needs embedding and LLM
endpoints, so it cannot run here offline).

Facts kept: every answer is ``{"status": "ok", "result": ...}`` or
``{"status": "error", "error": {"code", "message"}}`` with the code's HTTP status
(UNAUTHENTICATED 401, NOT_FOUND 404, ALREADY_EXISTS 409); a body that fails the request model
is a FastAPI 422 ``{"detail": [...]}``; the API key comes as ``X-API-Key`` or
``Authorization: Bearer``; ``X-OpenViking-Account`` / ``-User`` name the tenant; session
messages create the session on first add; ``content/write`` with ``mode=create`` refuses an
existing file; ``search/find`` answers ``memories`` / ``resources`` / ``skills`` lists of
``{uri, context_type, level, score, abstract}``. Search here is word overlap (CJK by
character) instead of embeddings; ``commit`` stores each committed user message as a memory
file instead of running LLM extraction.

The plumbing is the kit's `FakeService`: ``status`` answers every request with that code,
``drop`` holds every request until ``released`` and closes it unanswered; every request is
recorded in ``seen``.
"""

from __future__ import annotations

import hashlib
import re
import urllib.parse
from typing import Any

from hermes_memory_testing import FakeService, Seen

KEY = "ov-test-key-0123456789"
_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|\w{2,}")
_CODES = {
    401: "UNAUTHENTICATED",
    404: "NOT_FOUND",
    409: "ALREADY_EXISTS",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold()))


def error(status: int, message: str) -> tuple[int, dict[str, Any]]:
    code = _CODES.get(status, "UNKNOWN")
    return status, {"status": "error", "error": {"code": code, "message": message}}


def ok(result: Any) -> tuple[int, dict[str, Any]]:
    return 200, {"status": "ok", "result": result}


class FakeOpenViking(FakeService):
    def __init__(self, key: str = KEY) -> None:
        super().__init__(start=False)
        self.key = key
        self.files: dict[str, str] = {}
        self.sessions: dict[str, list[dict[str, Any]]] = {}
        self.commits: list[str] = []
        self.resources: list[dict[str, Any]] = []

    def error_body(self, status: int, message: str) -> Any:
        return error(status, message)[1]

    def route(self, seen: Seen) -> tuple[int, Any]:
        bearer = seen.headers.get("Authorization", "").removeprefix("Bearer ")
        if self.key and self.key not in (seen.headers.get("X-API-Key"), bearer):
            return error(401, "Invalid API Key")
        body = seen.body if seen.raw else {}
        if not isinstance(body, dict):
            return 422, {"detail": [{"msg": "body must be a JSON object"}]}
        return self.answer(seen.method, seen.path, body, seen.query)

    # ------------------------------------------------------------------ helpers
    def put(self, uri: str, content: str) -> None:
        with self.lock:
            self.files[uri] = content

    def _find(self, query: str, limit: int, target: str) -> dict[str, Any]:
        wanted = words(query)
        with self.lock:
            files = dict(self.files)
        out: dict[str, list[dict[str, Any]]] = {"memories": [], "resources": [], "skills": []}
        for uri, text in files.items():
            if target and not uri.startswith(target):
                continue
            score = len(wanted & words(text))
            if not score:
                continue
            kind = (
                "resource"
                if uri.startswith("viking://resources")
                else ("skill" if uri.startswith("viking://skills") else "memory")
            )
            out[kind + "s" if kind != "memory" else "memories"].append(
                {
                    "context_type": kind,
                    "uri": uri,
                    "level": 2,
                    "score": score / 10,
                    "abstract": text[:120],
                    "tags": [],
                }
            )
        for items in out.values():
            items.sort(key=lambda i: -i["score"])
            del items[limit:]
        return {**out, "total": sum(len(v) for v in out.values())}

    def answer(
        self, method: str, path: str, body: dict[str, Any], query: dict[str, str]
    ) -> tuple[int, Any]:
        if method == "GET" and path == "/api/v1/system/status":
            return ok({"initialized": True, "user": "default"})
        if method == "POST" and path == "/api/v1/search/find":
            if not isinstance(body.get("query", ""), str) or int(body.get("limit", 10)) < 1:
                return 422, {"detail": [{"msg": "invalid find request"}]}
            return ok(
                self._find(
                    body.get("query", ""),
                    int(body.get("limit", 10)),
                    str(body.get("target_uri") or ""),
                )
            )
        if method == "GET" and path.startswith("/api/v1/content/"):
            uri = query.get("uri")
            if uri is None:
                return 422, {"detail": [{"msg": "uri is required"}]}
            with self.lock:
                text = self.files.get(uri)
            if text is None:
                return error(404, f"File not found: {uri}")
            level = path.rsplit("/", 1)[1]
            return ok(text if level == "read" else text[:80])
        if method == "GET" and path == "/api/v1/fs/ls":
            base = query.get("uri", "").rstrip("/") + "/"
            with self.lock:
                uris = list(self.files)
            children: dict[str, bool] = {}
            for uri in uris:
                if uri.startswith(base):
                    rest = uri[len(base) :]
                    children[base + rest.split("/")[0]] = "/" in rest
            if not children:
                return error(404, f"Directory not found: {base}")
            entries = [
                {"uri": u, "isDir": d, "abstract": "" if d else self.files.get(u, "")[:40]}
                for u, d in sorted(children.items())
            ]
            return 200, {"status": "ok", "result": entries, "has_more": False}
        if method == "POST" and path == "/api/v1/content/write":
            uri, content, mode = body.get("uri"), body.get("content"), body.get("mode", "replace")
            if not isinstance(uri, str) or not isinstance(content, str):
                return 422, {"detail": [{"msg": "uri and content are required"}]}
            with self.lock:
                if mode == "create" and uri in self.files:
                    return error(409, f"Resource already exists: {uri}")
                self.files[uri] = content
            return ok({"uri": uri, "mode": mode})
        if method == "DELETE" and path == "/api/v1/fs":
            uri = query.get("uri", "")
            with self.lock:
                if self.files.pop(uri, None) is None:
                    return error(404, f"File not found: {uri}")
            return ok({"uri": uri})
        if method == "POST" and path == "/api/v1/resources":
            if not body.get("path"):
                return error(400, "path or temp_file_id is required")  # INVALID_ARGUMENT
            with self.lock:
                self.resources.append(body)
            return ok({"root_uri": body.get("to") or "viking://resources/imported"})
        parts = path.split("/")
        if method == "POST" and path.startswith("/api/v1/sessions/") and len(parts) >= 6:
            session = urllib.parse.unquote(parts[4])
            if parts[5:] == ["messages", "batch"]:
                messages = body.get("messages")
                if not isinstance(messages, list) or not all(
                    isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages
                ):
                    return 422, {"detail": [{"msg": "messages must be a list"}]}
                with self.lock:
                    self.sessions.setdefault(session, []).extend(messages)
                return ok({"session_id": session, "message_count": len(self.sessions[session])})
            if parts[5:] == ["commit"]:
                with self.lock:
                    if session not in self.sessions:
                        return error(404, f"Session not found: {session}")
                    self.commits.append(session)
                    for message in self.sessions[session]:
                        if message["role"] == "user":
                            digest = hashlib.sha1(message["content"].encode()).hexdigest()[:12]
                            self.files[f"viking://user/memories/events/{digest}.md"] = message[
                                "content"
                            ]
                return ok({"session_id": session, "status": "committed", "task_id": "t1"})
        return error(404, f"no route {method} {path}")
