"""A RetainDB service on 127.0.0.1, built from the REST API the adapter speaks.

Routes: ``GET /v1/memory/profile/{user}``, ``POST /v1/context/query``,
``POST /v1/memory/search``, ``POST /v1/memory``, ``DELETE /v1/memory/{id}``,
``POST /v1/memory/ingest/session``, and the file store (in memory): ``POST /v1/files``
(multipart), ``GET /v1/files``, ``GET /v1/files/{id}``, ``GET /v1/files/{id}/content``,
``POST /v1/files/{id}/ingest`` (stores each non-empty line as a memory),
``DELETE /v1/files/{id}``. Authentication: ``Authorization: Bearer <key>`` and
``X-API-Key: <key>`` must both carry the key (else 401). Ingest stores each user message as
a memory (the real service extracts facts with an LLM; storing the text is enough here).
Failure injection: ``status`` answers every request with that code; ``hang`` holds every
request until released. Every request is logged in ``requests``.
"""

from __future__ import annotations

import json
import re
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

KEY = "rdb-test-key-0123456789"
_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|\w{2,}")


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold()))


class FakeRetainDB:
    def __init__(self, key: str = KEY) -> None:
        self.key = key
        self.memories: dict[str, dict[str, Any]] = {}
        self.files: dict[str, dict[str, Any]] = {}
        self.blobs: dict[str, bytes] = {}
        self.requests: list[dict[str, Any]] = []
        self.status = 0
        self.hang = threading.Event()  # set: requests hang until `release`
        self.released = threading.Event()
        self.lock = threading.Lock()
        self._next = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self, status: int, payload: Any) -> None:
                raw = isinstance(payload, bytes)
                body = payload if raw else json.dumps(payload, ensure_ascii=False).encode()
                self.send_response(status)
                self.send_header(
                    "Content-Type", "application/octet-stream" if raw else "application/json"
                )
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                url = urllib.parse.urlsplit(self.path)
                kind = self.headers.get("Content-Type", "")
                if kind.startswith("multipart/form-data"):
                    body = multipart(raw, kind.split("boundary=", 1)[1].strip('"'))
                else:
                    body = json.loads(raw) if raw else {}
                entry = {"method": method, "path": url.path, "query": url.query, "body": body,
                         "headers": dict(self.headers)}  # fmt: skip
                with fake.lock:
                    fake.requests.append(entry)
                if fake.hang.is_set():
                    fake.released.wait(30)
                    return  # close without an answer
                if fake.status:
                    self._answer(fake.status, {"message": f"injected {fake.status}"})
                    return
                bearer = self.headers.get("Authorization", "")
                if bearer != f"Bearer {fake.key}" or self.headers.get("X-API-Key") != fake.key:
                    self._answer(401, {"message": "invalid api key"})
                    return
                status, payload = fake.route(method, url.path, body,
                                             urllib.parse.parse_qs(url.query))  # fmt: skip
                self._answer(status, payload)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_DELETE(self) -> None:
                self._handle("DELETE")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.handle_error = lambda request, address: None  # type: ignore[method-assign]
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # ------------------------------------------------------------------ state
    def add(self, user: str, content: str, memory_type: str = "factual", project: str = "p") -> str:
        with self.lock:
            self._next += 1
            mid = f"mem_{self._next}"
            self.memories[mid] = {"id": mid, "user_id": user, "project": project,
                                  "content": content, "memory_type": memory_type}  # fmt: skip
        return mid

    def contents(self) -> list[str]:
        with self.lock:
            return [m["content"] for m in self.memories.values()]

    def calls(self, path_prefix: str) -> list[dict[str, Any]]:
        with self.lock:
            return [r for r in self.requests if r["path"].startswith(path_prefix)]

    def _match(self, user: str, project: str, query: str) -> list[dict[str, Any]]:
        wanted = words(query)
        with self.lock:
            mine = [m for m in self.memories.values()
                    if m["user_id"] == user and m["project"] == project]  # fmt: skip
        scored = [(len(wanted & words(m["content"])), m) for m in mine]
        return [{**m, "score": s} for s, m in sorted(scored, key=lambda x: -x[0]) if s > 0]

    def route(self, method: str, path: str, body: dict[str, Any], query: dict[str, list[str]]):
        if path == "/v1/files" or path.startswith("/v1/files/"):
            return self.file_route(method, path, body, query)
        if method == "GET" and path.startswith("/v1/memory/profile/"):
            user = urllib.parse.unquote(path.rsplit("/", 1)[1])
            project = query.get("project", [""])[0]
            with self.lock:
                mine = [m for m in self.memories.values()
                        if m["user_id"] == user and m["project"] == project
                        and m["memory_type"] == "preference"]  # fmt: skip
            return 200, {"memories": mine}
        if method == "POST" and path in ("/v1/context/query", "/v1/memory/search"):
            if not isinstance(body.get("query"), str):
                return 422, {"message": "query is required"}
            hits = self._match(body["user_id"], body["project"], body["query"])
            return 200, {"results": hits[: int(body.get("top_k", 8))]}
        if method == "POST" and path == "/v1/memory":
            if not str(body.get("content", "")).strip():
                return 422, {"message": "content is required"}
            mid = self.add(body["user_id"], body["content"], body.get("memory_type", "factual"),
                           body["project"])  # fmt: skip
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
                record = {"id": fid, "name": upload["filename"], "path": body["path"],
                          "scope": body.get("scope", "PROJECT"), "project": body.get("project"),
                          "mime_type": upload["content_type"], "size": len(upload["data"]),
                          "rdb_uri": f"rdb://{body.get('project')}{body['path']}"}  # fmt: skip
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

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> FakeRetainDB:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


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
            out[params["name"]] = {"filename": urllib.parse.unquote(params["filename"]),
                                   "content_type": headers.get("Content-Type", ""),
                                   "data": data}  # fmt: skip
        else:
            out[params["name"]] = data.decode("utf-8")
    return out
