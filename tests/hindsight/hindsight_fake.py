"""A loopback Hindsight server speaking the routes ``hindsight-client`` 1.1 calls.

Routes and shapes are those of the client's generated API (``hindsight_client_api``):
``GET /version`` → ``{api_version, features{…}}``; ``POST /v1/default/banks/{bank}/memories``
(``{items:[{content, timestamp, context, metadata, document_id, update_mode, …}], async}``
→ ``{success, bank_id, items_count, async}``); ``POST …/memories/recall`` (``{query, budget,
max_tokens, …}`` → ``{results:[{id, text, type, …}]}``); ``POST …/reflect`` (``{query,
budget, …}`` → ``{text}``). Every request is recorded (method, path, headers, JSON body) so
tests can assert on exactly what the real client sent. Faults: a list of statuses to
answer next, a hang (held until released), and ``version=None`` for a server without
``/version`` (404).
"""

from __future__ import annotations

import json
import socket
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FEATURES = {
    "observations": False,
    "mcp": False,
    "worker": True,
    "bank_config_api": False,
    "bank_llm_health": False,
    "file_upload_api": False,
    "document_export_api": False,
    "document_import_api": False,
    "audit_log": False,
    "llm_trace": False,
    "store_document_text": True,
}


@dataclass
class Seen:
    """One request as the fake received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Doc:
    bank: str
    document_id: str | None
    content: str
    context: str | None
    metadata: dict[str, str] | None


@dataclass
class FakeHindsight:
    version: str | None = "0.6.2"
    fail: list[int] = field(default_factory=list)
    hang: threading.Event | None = None
    docs: list[Doc] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    reflect_text: str = "The user keeps bees."

    def __post_init__(self) -> None:
        fake = self
        self._lock = threading.Lock()

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
                    self._answer(status, {"detail": f"injected {status}"})
                    return
                self._route(method, path, body)

            def _route(self, method: str, path: str, body: Any) -> None:
                if method == "GET" and path == "/version":
                    if fake.version is None:
                        self._answer(404, {"detail": "Not Found"})
                    else:
                        self._answer(200, {"api_version": fake.version, "features": FEATURES})
                    return
                parts = path.strip("/").split("/")
                if len(parts) < 5 or parts[:3] != ["v1", "default", "banks"]:
                    self._answer(404, {"detail": "Not Found"})
                    return
                bank, rest = parts[3], parts[4:]
                if method == "POST" and rest == ["memories"]:
                    fake._retain(bank, body)
                    items = len(body["items"])
                    self._answer(200, {"success": True, "bank_id": bank, "items_count": items,
                                       "async": bool(body.get("async"))})  # fmt: skip
                elif method == "POST" and rest == ["memories", "recall"]:
                    self._answer(200, {"results": fake._recall(bank, body["query"])})
                elif method == "POST" and rest == ["reflect"]:
                    self._answer(200, {"text": fake.reflect_text})
                else:
                    self._answer(404, {"detail": "Not Found"})

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def _retain(self, bank: str, body: dict[str, Any]) -> None:
        with self._lock:
            for item in body["items"]:
                doc_id = item.get("document_id")
                mode = item.get("update_mode")
                same = [
                    d for d in self.docs if d.bank == bank and doc_id and d.document_id == doc_id
                ]
                if same and mode == "append":
                    same[0].content += "\n\n" + item["content"]
                    continue
                if same:  # replace (the server's default for an existing document)
                    self.docs.remove(same[0])
                self.docs.append(Doc(bank, doc_id, item["content"], item.get("context"),
                                     item.get("metadata")))  # fmt: skip

    def _recall(self, bank: str, query: str) -> list[dict[str, Any]]:
        words = [w for w in query.casefold().split() if len(w) > 2] or [query.casefold()]
        out = []
        with self._lock:
            for n, doc in enumerate(self.docs):
                if doc.bank != bank:
                    continue
                for line in doc.content.split("\n"):
                    if any(w in line.casefold() for w in words):
                        out.append({"id": f"m{n}-{len(out)}", "text": line, "type": "world",
                                    "document_id": doc.document_id})  # fmt: skip
        return out

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
