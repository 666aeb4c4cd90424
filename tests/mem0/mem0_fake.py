"""A stateful fake of mem0's HTTP APIs, for contract tests of the real SDK and our client.

Two dialects, built from the shared reference (external-providers.md §2.2, §2.4) and the
recordings in ``reference/recordings/``:

* ``platform`` — the hosted API used by ``mem0.MemoryClient`` 2.2.1: ``GET /v1/ping/``,
  ``POST /v3/memories/add/``, ``POST /v3/memories/search/``, ``POST /v3/memories/``,
  ``GET|PUT|DELETE /v1/memories/{id}/``; ``Authorization: Token <key>``. Response shapes
  follow mem0's published OpenAPI (the Platform recording only holds the SDK's requests).
* ``selfhosted`` — mem0's REST server: ``POST /memories``, ``GET /memories``,
  ``GET|PUT|DELETE /memories/{id}``, ``POST /search``; ``X-API-Key`` (rejected with 401 when
  the server runs with auth disabled), status codes and bodies as recorded.

Request bodies are checked against the field lists of those APIs (unknown fields → 422), so
a request our adapter or the SDK builds wrongly fails here as it would there.

Served either in-process (``transport()`` → ``httpx.MockTransport``) or on a real loopback
socket (``serve()``), with failure injection: a status for the next N requests, or a delay
(a hanging server).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx

_WORD = re.compile(r"[0-9a-z]+|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]", re.IGNORECASE)
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_ENTITY = ("user_id", "agent_id", "app_id", "run_id")

PLATFORM_ADD_FIELDS = {
    "messages", "user_id", "agent_id", "run_id", "app_id", "metadata", "infer",
    "custom_instructions", "custom_categories", "expiration_date", "timestamp", "includes",
    "excludes", "immutable", "async_mode", "output_format", "version", "filters",
}  # fmt: skip
PLATFORM_SEARCH_FIELDS = {
    "query", "filters", "top_k", "rerank", "threshold", "fields", "categories",
    "show_expired", "reference_date", "latest_only", "keyword_search",
}  # fmt: skip
SELFHOSTED_ADD_FIELDS = {"messages", "user_id", "agent_id", "run_id", "metadata", "infer"}
SELFHOSTED_SEARCH_FIELDS = {
    "query", "filters", "top_k", "threshold", "explain", "show_expired",
    "user_id", "agent_id", "run_id",
}  # fmt: skip


def tokens(text: str) -> set[str]:
    """Lower-cased words and single CJK characters (the fake's notion of similarity)."""
    return {t.lower() for t in _WORD.findall(text)}


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class Request:
    """One request as the fake saw it."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


@dataclass
class Fault:
    """An injected failure for the next ``count`` matching requests."""

    status: int = 500
    body: Any = None
    delay: float = 0.0
    count: int = 1
    path_contains: str = ""
    headers: dict[str, str] = field(default_factory=dict)


class FakeMem0:
    """An in-memory mem0 service.

    :param dialect: ``"platform"`` or ``"selfhosted"``.
    :param api_key: the key the service accepts (None: self-hosted with auth disabled).
    :param extract: turns an ``infer=True`` batch of messages into facts (the server's LLM);
        default: every user message becomes one fact.
    """

    def __init__(
        self,
        dialect: str = "platform",
        *,
        api_key: str | None = "m0-test-key",
        extract: Callable[[list[dict[str, str]]], list[str]] | None = None,
    ) -> None:
        assert dialect in ("platform", "selfhosted")
        self.dialect = dialect
        self.api_key = api_key
        self.extract = extract or (
            lambda msgs: [m["content"] for m in msgs if m.get("role") == "user"]
        )
        self.memories: dict[str, dict[str, Any]] = {}
        self.requests: list[Request] = []
        self.faults: list[Fault] = []
        self.org_id = "org_fake"
        self.project_id = "proj_fake"
        self._lock = threading.Lock()
        self.release = threading.Event()  # set to end every injected delay early

    # ------------------------------------------------------------------ test controls
    def fail(
        self,
        status: int,
        *,
        count: int = 1,
        body: Any = None,
        path: str = "",
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer the next ``count`` requests (whose path contains ``path``) with ``status``."""
        self.faults.append(Fault(status, body, 0.0, count, path, headers or {}))

    def hang(self, seconds: float, *, count: int = 1_000_000, path: str = "") -> None:
        """Delay the next ``count`` requests by ``seconds`` before answering normally."""
        self.faults.append(Fault(0, None, seconds, count, path))

    def clear_faults(self) -> None:
        """Back to normal service (also ends pending delays)."""
        self.faults.clear()
        self.release.set()

    def calls(self, method: str, path_prefix: str) -> list[Request]:
        """Recorded requests with this method whose path starts with ``path_prefix``."""
        return [r for r in self.requests if r.method == method and r.path.startswith(path_prefix)]

    def seed(self, memory: str, *, user_id: str = "u1", **extra: Any) -> str:
        """Store one memory directly; returns its id."""
        return self._store(memory, {"user_id": user_id, **extra}, None)["id"]

    # ------------------------------------------------------------------ state
    def _store(self, text: str, ids: dict[str, Any], metadata: Any) -> dict[str, Any]:
        memory_id = str(uuid.uuid4())
        now = _now()
        item = {
            "id": memory_id,
            "memory": text,
            "hash": hashlib.md5(text.encode()).hexdigest(),
            "metadata": metadata,
            "created_at": now,
            "updated_at": now,
            **{k: ids.get(k) for k in (*_ENTITY, "role") if ids.get(k) is not None},
        }
        self.memories[memory_id] = item
        return item

    def _matches(self, item: dict[str, Any], filters: dict[str, Any]) -> bool:
        for key, value in filters.items():
            if key in ("AND",):
                if not all(self._matches(item, f) for f in value):
                    return False
            elif key in _ENTITY and value != "*" and item.get(key) != value:
                return False
        return True

    def _search(self, query: str, filters: dict[str, Any], top_k: int) -> list[dict[str, Any]]:
        q = tokens(query)
        scored = []
        for item in self.memories.values():
            if not self._matches(item, filters):
                continue
            t = tokens(item["memory"])
            overlap = len(q & t)
            if overlap:
                scored.append((overlap / max(1, len(q | t)), item))
        scored.sort(key=lambda pair: -pair[0])
        return [{**item, "score": round(score, 4)} for score, item in scored[:top_k]]

    # ------------------------------------------------------------------ dispatch
    def handle(self, req: Request) -> tuple[int, Any, dict[str, str]]:
        """Answer one request: (status, JSON body, extra headers)."""
        with self._lock:
            self.requests.append(req)
            fault = next(
                (f for f in self.faults if f.count > 0 and f.path_contains in req.path), None
            )
            if fault is not None:
                fault.count -= 1
        if fault is not None and fault.delay:
            self.release.wait(fault.delay)
        elif fault is not None:
            return fault.status, fault.body or {"detail": f"injected {fault.status}"}, fault.headers
        with self._lock:
            if self.dialect == "platform":
                return self._platform(req)
            return self._selfhosted(req)

    @staticmethod
    def _error(status: int, detail: str) -> tuple[int, Any, dict[str, str]]:
        return status, {"detail": detail}, {}

    # ------------------------------------------------------------------ Platform dialect
    def _platform(self, req: Request) -> tuple[int, Any, dict[str, str]]:
        if req.headers.get("authorization") != f"Token {self.api_key}":
            return self._error(401, "Invalid API key")
        body = req.body if isinstance(req.body, dict) else {}
        path, method = req.path, req.method
        if method == "GET" and path == "/v1/ping/":
            return (
                200,
                {
                    "status": "ok",
                    "org_id": self.org_id,
                    "project_id": self.project_id,
                    "user_email": "dev@example.com",
                },
                {},
            )
        if method == "POST" and path == "/v3/memories/add/":
            unknown = set(body) - PLATFORM_ADD_FIELDS
            if unknown:
                return self._error(422, f"Unknown fields: {sorted(unknown)}")
            messages = body.get("messages")
            if not isinstance(messages, list) or not all(
                isinstance(m, dict) and {"role", "content"} <= set(m) for m in messages
            ):
                return self._error(400, "messages must be a list of {role, content}")
            if not any(body.get(k) for k in _ENTITY):
                return self._error(
                    400, "At least one entity ID (user_id, agent_id, app_id, run_id) is required."
                )
            if body.get("infer", True):
                # The Platform extracts asynchronously; the fake does it at once.
                for fact in self.extract(messages):
                    self._store(fact, body, body.get("metadata"))
                return 200, {"status": "PENDING", "event_id": str(uuid.uuid4())}, {}
            results = [
                {"id": item["id"], "memory": item["memory"], "event": "ADD"}
                for item in (
                    self._store(m["content"], body, body.get("metadata"))
                    for m in messages
                    if m.get("role") != "system"
                )
            ]
            return 200, {"message": "Memories added successfully", "results": results}, {}
        if method == "POST" and path == "/v3/memories/search/":
            unknown = set(body) - PLATFORM_SEARCH_FIELDS
            if unknown:
                return self._error(422, f"Unknown fields: {sorted(unknown)}")
            filters = body.get("filters")
            if not isinstance(filters, dict) or not filters:
                return self._error(400, "filters is required")
            if not str(body.get("query") or "").strip():
                return self._error(400, "query is required")
            return (
                200,
                {"results": self._search(body["query"], filters, int(body.get("top_k") or 10))},
                {},
            )
        if method == "POST" and path == "/v3/memories/":
            items = [
                i for i in self.memories.values() if self._matches(i, body.get("filters") or {})
            ]
            return 200, {"count": len(items), "next": None, "previous": None, "results": items}, {}
        m = re.fullmatch(r"/v1/memories/([^/]+)/", path)
        if m:
            memory_id = m.group(1)
            if not _UUID.match(memory_id):
                return self._error(400, "memory_id should be a valid UUID")
            item = self.memories.get(memory_id)
            if item is None:
                return self._error(404, "Memory not found")
            if method == "GET":
                return 200, item, {}
            if method == "PUT":
                if set(body) - {"text", "metadata", "expiration_date", "timestamp"}:
                    return self._error(422, "Unknown fields")
                if "text" in body:
                    item["memory"] = body["text"]
                item["updated_at"] = _now()
                return 200, item, {}
            if method == "DELETE":
                del self.memories[memory_id]
                return 200, {"message": "Memory deleted successfully!"}, {}
        return self._error(404, "Not Found")

    # ------------------------------------------------------------------ self-hosted dialect
    def _selfhosted(self, req: Request) -> tuple[int, Any, dict[str, str]]:
        sent = req.headers.get("x-api-key")
        if (self.api_key is None and sent is not None) or (
            self.api_key is not None and sent != self.api_key
        ):
            return self._error(401, "Invalid API key.")
        body = req.body if isinstance(req.body, dict) else {}
        path, method = req.path, req.method
        if path == "/memories" and method == "POST":
            if set(body) - SELFHOSTED_ADD_FIELDS:
                return self._error(422, "Unknown fields")
            if not any(body.get(k) for k in ("user_id", "agent_id", "run_id")):
                return self._error(
                    400, "At least one identifier (user_id, agent_id, run_id) is required."
                )
            messages = body.get("messages") or []
            if body.get("infer", True):
                facts = self.extract(messages)
                stored = [self._store(f, body, body.get("metadata")) for f in facts]
                return (
                    200,
                    {
                        "results": [
                            {"id": s["id"], "memory": s["memory"], "event": "ADD"} for s in stored
                        ]
                    },
                    {},
                )
            stored = [
                self._store(m["content"], {**body, "role": m.get("role")}, body.get("metadata"))
                for m in messages
                if m.get("role") != "system"
            ]
            return (
                200,
                {
                    "results": [
                        {
                            "id": s["id"],
                            "memory": s["memory"],
                            "event": "ADD",
                            "actor_id": None,
                            "role": s.get("role"),
                        }
                        for s in stored
                    ]
                },
                {},
            )
        if path == "/memories" and method == "GET":
            items = [i for i in self.memories.values() if self._matches(i, req.query)]
            return 200, {"results": items}, {}
        if path == "/search" and method == "POST":
            if set(body) - SELFHOSTED_SEARCH_FIELDS:
                return self._error(422, "Unknown fields")
            filters = dict(body.get("filters") or {})
            for key in ("user_id", "agent_id", "run_id"):
                if body.get(key):
                    filters[key] = body[key]
            if not filters:
                return self._error(400, "At least one identifier is required.")
            return (
                200,
                {
                    "results": self._search(
                        str(body.get("query", "")), filters, int(body.get("top_k") or 10)
                    )
                },
                {},
            )
        m = re.fullmatch(r"/memories/([^/]+)", path)
        if m:
            memory_id = m.group(1)
            item = self.memories.get(memory_id)
            if item is None:
                return self._error(404, f"Memory with id {memory_id} not found")
            if method == "GET":
                return 200, {**item, "score": None}, {}
            if method == "PUT":
                item["memory"] = body.get("text", item["memory"])
                item["updated_at"] = _now()
                return 200, {"message": "Memory updated successfully!"}, {}
            if method == "DELETE":
                del self.memories[memory_id]
                return 200, {"message": "Memory deleted successfully"}, {}
        return self._error(404, "Not Found")

    # ------------------------------------------------------------------ transports
    def _from_httpx(self, request: httpx.Request) -> Request:
        raw = request.content
        body = json.loads(raw) if raw else None
        url = request.url
        return Request(
            request.method,
            url.path,
            dict(parse_qsl(url.query.decode())),
            {k.lower(): v for k, v in request.headers.items()},
            body,
        )

    def transport(self) -> httpx.MockTransport:
        """The fake as an in-process httpx transport."""

        def handler(request: httpx.Request) -> httpx.Response:
            status, body, headers = self.handle(self._from_httpx(request))
            return httpx.Response(status, json=body, headers=headers)

        return httpx.MockTransport(handler)

    @contextlib.contextmanager
    def serve(self) -> Iterator[str]:
        """Serve the fake on 127.0.0.1 (a real socket); yields the base URL."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                split = urlsplit(self.path)
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                req = Request(
                    self.command,
                    split.path,
                    dict(parse_qsl(split.query)),
                    {k.lower(): v for k, v in self.headers.items()},
                    json.loads(raw) if raw else None,
                )
                status, body, headers = fake.handle(req)
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (timeout)

            do_GET = do_POST = do_PUT = do_DELETE = _answer

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            self.release.set()
            server.shutdown()
            server.server_close()
            thread.join(5)


def refused_url() -> str:
    """A loopback URL where nothing listens (connections are refused)."""
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"


def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()
