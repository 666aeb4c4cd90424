"""A loopback Supermemory server speaking the routes the ``supermemory`` 5.x SDK calls.

Routes and shapes are those of the SDK's generated client: ``POST /ns/{ns}/document``
(``{content, id?, metadata?, date?}`` → ``{id, status}``; a known id appends),
``POST /ns/{ns}/search`` (``{query, limit, searchMode}`` → ``{results:[{id, memory,
metadata, similarity, isLatest, isInference, system{updatedAt}}], searchTime}``),
``POST /ns/{ns}/profile`` (→ ``{profile:{static, dynamic, buckets}}``),
``DELETE /ns/{ns}/memories`` (``{ids}``) and ``DELETE /ns/{ns}/memories/semantic``
(``{query, dryRun}``) → ``{count, errors, matches}``. Every request is recorded (method,
path, headers, JSON body). Faults: statuses to answer next, and a hang (held until set).
A memory here is one line of a stored document.
"""

from __future__ import annotations

import json
import socket
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Seen:
    """One request as the fake received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Doc:
    ns: str
    id: str
    content: str
    metadata: dict[str, Any] | None = None
    adds: int = 1


@dataclass
class FakeSupermemory:
    fail: list[int] = field(default_factory=list)
    hang: threading.Event | None = None
    garbage: bytes = b""  # answer every request 200 with these bytes instead
    docs: list[Doc] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    forgotten: set[str] = field(default_factory=set)
    static: list[str] = field(default_factory=lambda: ["Lives in 京都"])
    dynamic: list[str] = field(default_factory=lambda: ["Planning a trip to Oslo"])

    def __post_init__(self) -> None:
        fake = self
        self._lock = threading.Lock()
        self._n = 0

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self, status: int, payload: Any) -> None:
                body = json.dumps(payload, ensure_ascii=False).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
                with fake._lock:
                    fake.seen.append(Seen(method, path, dict(self.headers.items()), body))
                    status = fake.fail.pop(0) if fake.fail else 0
                if fake.hang is not None:
                    fake.hang.wait(30)
                if status:
                    self._answer(status, {"error": f"injected {status}"})
                    return
                if fake.garbage:
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(fake.garbage)))
                    self.end_headers()
                    self.wfile.write(fake.garbage)
                    return
                parts = path.strip("/").split("/")
                if len(parts) < 3 or parts[0] != "ns":
                    self._answer(404, {"error": "Not Found"})
                    return
                ns, rest = parts[1], parts[2:]
                if method == "POST" and rest == ["document"]:
                    self._answer(200, {"id": fake._add(ns, body), "status": "queued"})
                elif method == "POST" and rest == ["search"]:
                    found = fake._search(ns, body["query"], int(body.get("limit") or 10))
                    self._answer(200, {"results": found, "searchTime": 1.5})
                elif method == "POST" and rest == ["profile"]:
                    self._answer(200, {"profile": fake._profile()})
                elif method == "DELETE" and rest == ["memories"]:
                    self._answer(200, fake._forget(ns, ids=body["ids"]))
                elif method == "DELETE" and rest == ["memories", "semantic"]:
                    self._answer(200, fake._forget(ns, query=body["query"],
                                                   dry=bool(body["dryRun"])))  # fmt: skip
                else:
                    self._answer(404, {"error": "Not Found"})

            def do_POST(self) -> None:
                self._handle("POST")

            def do_DELETE(self) -> None:
                self._handle("DELETE")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def _add(self, ns: str, body: dict[str, Any]) -> str:
        with self._lock:
            doc_id = body.get("id")
            for doc in self.docs:
                if doc_id and doc.ns == ns and doc.id == doc_id:
                    doc.content += "\n" + body["content"]
                    doc.adds += 1
                    return doc.id
            self._n += 1
            doc = Doc(ns, doc_id or f"doc{self._n}", body["content"], body.get("metadata"))
            self.docs.append(doc)
            return doc.id

    def _memories(self, ns: str) -> list[tuple[str, str]]:
        out = []
        for d, doc in enumerate(self.docs):
            if doc.ns == ns:
                for n, line in enumerate(doc.content.split("\n")):
                    mid = f"m{d}.{n}"
                    if line.strip() and mid not in self.forgotten:
                        out.append((mid, line))
        return out

    def _matches(self, ns: str, query: str) -> list[tuple[str, str]]:
        words = [w for w in query.casefold().split() if len(w) > 2] or [query.casefold()]
        return [(i, t) for i, t in self._memories(ns) if any(w in t.casefold() for w in words)]

    def _search(self, ns: str, query: str, limit: int) -> list[dict[str, Any]]:
        with self._lock:
            found = self._matches(ns, query)[:limit]
        return [{"id": i, "memory": t, "metadata": {}, "similarity": 0.9, "isLatest": True,
                 "isInference": False, "system": {"updatedAt": "2026-01-01T00:00:00Z"}}
                for i, t in found]  # fmt: skip

    def _profile(self) -> dict[str, Any]:
        def facts(items: list[str]) -> list[dict[str, str]]:
            return [{"id": f"p{n}", "memory": t} for n, t in enumerate(items)]

        return {"static": facts(self.static), "dynamic": facts(self.dynamic), "buckets": {}}

    def _forget(self, ns: str, *, ids: list[str] | None = None, query: str = "",
                dry: bool = False) -> dict[str, Any]:  # fmt: skip
        with self._lock:
            known = dict(self._memories(ns))
            if ids is not None:
                hit = [(i, known[i]) for i in ids if i in known]
                errors = [{"id": i, "error": "not found"} for i in ids if i not in known]
            else:
                hit, errors = self._matches(ns, query), []
            if not dry:
                self.forgotten.update(i for i, _ in hit)
        return {"count": len(hit), "errors": errors,
                "matches": [{"id": i, "memory": t} for i, t in hit]}  # fmt: skip

    def paths(self) -> list[str]:
        return [f"{s.method} {s.path}" for s in self.seen]

    def close(self) -> None:
        if self.hang is not None:
            self.hang.set()
        self.server.shutdown()
        self.server.server_close()


class SilentServer:
    """A socket that accepts connections and never answers (a hung server)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def close(self) -> None:
        self.sock.close()


def refused_url() -> str:
    """A loopback URL nobody listens on."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"
