"""A RetainDB service on 127.0.0.1, built from the REST API the adapter speaks.

Routes: ``GET /v1/memory/profile/{user}``, ``POST /v1/context/query``,
``POST /v1/memory/search``, ``POST /v1/memory``, ``DELETE /v1/memory/{id}``,
``POST /v1/memory/ingest/session``, and the file store (in memory): ``POST /v1/files``
(multipart), ``GET /v1/files``, ``GET /v1/files/{id}``, ``GET /v1/files/{id}/content``,
``POST /v1/files/{id}/ingest`` (stores each non-empty line as a memory),
``DELETE /v1/files/{id}``. Authentication: ``Authorization: Bearer <key>`` and
``X-API-Key: <key>`` must both carry the key (else 401). Ingest stores each user message as
a memory (the real service extracts facts with an LLM; storing the text is enough here).
The plumbing is the kit's `FakeService`: ``status`` answers every request with that code,
``drop`` holds every request until ``released`` and closes it unanswered; every request is
recorded in ``seen``.
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

from hermes_memory_testing import FakeService, Raw, Seen

KEY = "rdb-test-key-0123456789"
_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|\w{2,}")


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold()))


class FakeRetainDB(FakeService):
    def __init__(self, key: str = KEY) -> None:
        super().__init__(start=False)
        self.key = key
        self.memories: dict[str, dict[str, Any]] = {}
        self.files: dict[str, dict[str, Any]] = {}
        self.blobs: dict[str, bytes] = {}
        self._next = 0

    def error_body(self, status: int, message: str) -> Any:
        return {"message": message}

    def route(self, seen: Seen) -> tuple[int, Any]:
        kind = seen.headers.get("Content-Type", "")
        if kind.startswith("multipart/form-data"):
            seen.body = multipart(seen.raw, kind.split("boundary=", 1)[1].strip('"'))
        elif seen.body is None:
            seen.body = {}
        if (
            seen.headers.get("Authorization", "") != f"Bearer {self.key}"
            or seen.headers.get("X-API-Key") != self.key
        ):
            return 401, {"message": "invalid api key"}
        status, payload = self.answer(
            seen.method, seen.path, seen.body, urllib.parse.parse_qs(seen.raw_query)
        )
        return status, Raw(payload) if isinstance(payload, bytes) else payload

    # ------------------------------------------------------------------ state
    def add(self, user: str, content: str, memory_type: str = "factual", project: str = "p") -> str:
        with self.lock:
            self._next += 1
            mid = f"mem_{self._next}"
            self.memories[mid] = {
                "id": mid,
                "user_id": user,
                "project": project,
                "content": content,
                "memory_type": memory_type,
            }
        return mid

    def contents(self) -> list[str]:
        with self.lock:
            return [m["content"] for m in self.memories.values()]

    def _match(self, user: str, project: str, query: str) -> list[dict[str, Any]]:
        wanted = words(query)
        with self.lock:
            mine = [
                m
                for m in self.memories.values()
                if m["user_id"] == user and m["project"] == project
            ]
        scored = [(len(wanted & words(m["content"])), m) for m in mine]
        return [{**m, "score": s} for s, m in sorted(scored, key=lambda x: -x[0]) if s > 0]

    def answer(
        self, method: str, path: str, body: dict[str, Any], query: dict[str, list[str]]
    ) -> tuple[int, Any]:
        if path == "/v1/files" or path.startswith("/v1/files/"):
            return self.file_route(method, path, body, query)
        if method == "GET" and path.startswith("/v1/memory/profile/"):
            user = urllib.parse.unquote(path.rsplit("/", 1)[1])
            project = query.get("project", [""])[0]
            with self.lock:
                mine = [
                    m
                    for m in self.memories.values()
                    if m["user_id"] == user
                    and m["project"] == project
                    and m["memory_type"] == "preference"
                ]
            return 200, {"memories": mine}
        if method == "POST" and path in ("/v1/context/query", "/v1/memory/search"):
            if not isinstance(body.get("query"), str):
                return 422, {"message": "query is required"}
            hits = self._match(body["user_id"], body["project"], body["query"])
            return 200, {"results": hits[: int(body.get("top_k", 8))]}
        if method == "POST" and path == "/v1/memory":
            if not str(body.get("content", "")).strip():
                return 422, {"message": "content is required"}
            mid = self.add(
                body["user_id"],
                body["content"],
                body.get("memory_type", "factual"),
                body["project"],
            )
            return 200, {"memory": self.memories[mid]}
        if method == "DELETE" and path.startswith("/v1/memory/"):
            mid = urllib.parse.unquote(path.rsplit("/", 1)[1])
            with self.lock:
                if self.memories.pop(mid, None) is None:
                    return 404, {"message": f"memory {mid} not found"}
            return 200, {"deleted": True}
        if method == "POST" and path == "/v1/memory/ingest/session":
            for message in body.get("messages", []):
                if message.get("role") == "user":
                    self.add(body["user_id"], message["content"], "factual", body["project"])
            return 200, {"ok": True}
        return 404, {"message": f"no route {method} {path}"}

    def file_route(
        self, method: str, path: str, body: dict[str, Any], query: dict[str, list[str]]
    ) -> tuple[int, Any]:
        if path == "/v1/files" and method == "POST":
            upload = body.get("file")
            if not isinstance(upload, dict) or not body.get("path"):
                return 422, {"message": "file and path are required"}
            with self.lock:
                self._next += 1
                fid = f"file_{self._next}"
                record = {
                    "id": fid,
                    "name": upload["filename"],
                    "path": body["path"],
                    "scope": body.get("scope", "PROJECT"),
                    "project": body.get("project"),
                    "mime_type": upload["content_type"],
                    "size": len(upload["data"]),
                    "rdb_uri": f"rdb://{body.get('project')}{body['path']}",
                }
                self.files[fid] = record
                self.blobs[fid] = upload["data"]
            return 200, {"file": record}
        if path == "/v1/files" and method == "GET":
            prefix = query.get("prefix", [""])[0]
            limit = int(query.get("limit", ["50"])[0])
            with self.lock:
                found = [f for f in self.files.values() if f["path"].startswith(prefix)]
            return 200, {"files": found[:limit]}
        parts = path.split("/")  # "", v1, files, id[, content|ingest]
        fid = urllib.parse.unquote(parts[3])
        with self.lock:
            record = self.files.get(fid)
            data = self.blobs.get(fid, b"")
        if record is None or len(parts) > 5:
            return 404, {"message": f"file {fid} not found"}
        tail = parts[4] if len(parts) == 5 else ""
        if method == "GET" and tail == "":
            return 200, {"file": record}
        if method == "GET" and tail == "content":
            return 200, data
        if method == "POST" and tail == "ingest":
            lines = [ln.strip() for ln in data.decode("utf-8", "replace").splitlines()]
            for line in filter(None, lines):
                self.add(body.get("user_id", ""), line, "factual", body.get("project") or "p")
            return 200, {"ok": True, "memories": sum(1 for ln in lines if ln)}
        if method == "DELETE" and tail == "":
            with self.lock:
                self.files.pop(fid, None)
                self.blobs.pop(fid, None)
            return 200, {"deleted": True}
        return 404, {"message": f"no route {method} {path}"}


_PARAM = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def multipart(raw: bytes, boundary: str) -> dict[str, Any]:
    """A multipart/form-data body: text fields as str, file fields as
    ``{"filename", "content_type", "data"}`` (names read as UTF-8, as browsers send them)."""
    out: dict[str, Any] = {}
    for part in raw.split(b"--" + boundary.encode())[1:]:
        if part.startswith(b"--"):
            break
        head, _, data = part[2:].partition(b"\r\n\r\n")
        data = data.removesuffix(b"\r\n")
        headers = dict(
            line.split(": ", 1) for line in head.decode("utf-8").split("\r\n") if ": " in line
        )
        params = dict(_PARAM.findall(headers.get("Content-Disposition", "")))
        if "filename" in params:
            out[params["name"]] = {
                "filename": urllib.parse.unquote(params["filename"]),
                "content_type": headers.get("Content-Type", ""),
                "data": data,
            }
        else:
            out[params["name"]] = data.decode("utf-8")
    return out
