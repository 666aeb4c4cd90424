"""A stateful in-memory fake of the Honcho 3.0.12 v3 API, for offline contract tests.

Built from the real exchanges in
``tests/recordings/honcho-3.0.12-sdk-2.7.0.jsonl`` (paths, bodies, status codes,
response shapes, the 422 id-pattern error and the 404 detail) and Honcho's published v3 API
(endpoint list in ``external-providers.md`` §3.2). It is served two ways:

* `FakeHoncho.transport()` → an ``httpx.MockTransport`` to inject into the real SDK;
* `LoopbackServer` → the same fake behind a real socket on 127.0.0.1 (socket timeouts,
  hanging servers).

Simplifications (stated so nobody mistakes them for server behaviour): search is a
case-insensitive substring match; a peer's representation is the list of conclusions about
the target (the real server's deriver would write it); ``chat`` answers from a script.
Failures are injected with `FakeHoncho.fail` and `FakeHoncho.hang`.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx

ID = re.compile(r"^[a-zA-Z0-9_-]+$")
MAX_MESSAGE_CHARS = 25000
MAX_BATCH = 100


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _new_id() -> str:
    return secrets.token_urlsafe(15)[:21]


def _pattern_error(value: Any, loc: list[str]) -> dict[str, Any]:
    return {
        "detail": [
            {
                "type": "string_pattern_mismatch",
                "loc": loc,
                "msg": "String should match pattern '^[a-zA-Z0-9_-]+$'",
                "input": value,
                "ctx": {"pattern": "^[a-zA-Z0-9_-]+$"},
            }
        ]
    }


@dataclass
class Injected:
    """A scripted failure: ``times`` requests matching ``method``/``path`` get it."""

    status: int
    path: str = ""
    method: str = ""
    times: int = 1
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    exception: type[httpx.TransportError] | None = None


@dataclass
class Recorded:
    """One request the fake saw."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    headers: dict[str, str]


class FakeHoncho:
    """In-memory Honcho: workspaces, peers, sessions, messages, cards, conclusions.

    :param api_key: when set, requests need ``Authorization: Bearer <api_key>`` (401 otherwise).
    :param llm_configured: False reproduces a server without LLM/embedding keys: creating
        conclusions answers 422 and chat 500 (as the real server did, §3.3).
    """

    def __init__(self, *, api_key: str | None = None, llm_configured: bool = True) -> None:
        self.api_key = api_key
        self.llm_configured = llm_configured
        self.lock = threading.RLock()
        self.workspaces: dict[str, dict[str, Any]] = {}
        self.peers: dict[tuple[str, str], dict[str, Any]] = {}
        self.sessions: dict[tuple[str, str], dict[str, Any]] = {}
        self.session_peers: dict[tuple[str, str], dict[str, dict[str, bool]]] = {}
        self.messages: list[dict[str, Any]] = []
        self.cards: dict[tuple[str, str, str], list[str]] = {}
        self.conclusions: list[dict[str, Any]] = []
        self.requests: list[Recorded] = []
        self.injected: list[Injected] = []
        self.chat_answer: Callable[[str, str, str], str | None] = self._default_answer
        self.hang_event: threading.Event | None = None
        self.delay = 0.0

    # ------------------------------------------------------------------ scripting
    def fail(
        self,
        status: int,
        *,
        path: str = "",
        method: str = "",
        times: int = 1,
        body: Any = None,
        headers: dict[str, str] | None = None,
        exception: type[httpx.TransportError] | None = None,
    ) -> None:
        """Answer the next ``times`` matching requests with ``status`` (or raise ``exception``).

        ``path`` is a regular expression searched in the URL path.
        """
        with self.lock:
            self.injected.append(
                Injected(status, path, method, times, body, dict(headers or {}), exception)
            )

    def hang(self) -> threading.Event:
        """Make every request block until the returned event is set (a hung server)."""
        self.hang_event = threading.Event()
        return self.hang_event

    def calls(self, method: str = "", path: str = "") -> list[Recorded]:
        """Requests seen, filtered by method and a path regular expression."""
        with self.lock:
            return [
                r
                for r in self.requests
                if (not method or r.method == method) and (not path or re.search(path, r.path))
            ]

    def stored_messages(self, session: str | None = None) -> list[dict[str, Any]]:
        """Messages stored, oldest first (optionally of one session)."""
        with self.lock:
            return [m for m in self.messages if session is None or m["session_id"] == session]

    def transport(self) -> httpx.MockTransport:
        """This fake as an ``httpx.MockTransport``."""
        return httpx.MockTransport(self.handle)

    # ------------------------------------------------------------------ dispatch
    def handle(self, request: httpx.Request) -> httpx.Response:
        """Answer one request."""
        path = request.url.path
        query = dict(parse_qsl(request.url.query.decode()))
        body: Any = None
        if request.content:
            try:
                body = json.loads(request.content)
            except ValueError:
                body = request.content.decode(errors="replace")
        with self.lock:
            self.requests.append(Recorded(request.method, path, query, body, dict(request.headers)))
        if self.delay:
            time.sleep(self.delay)
        if self.hang_event is not None:
            self.hang_event.wait(60)
        injected = self._take_injected(request.method, path)
        if injected is not None:
            if injected.exception is not None:
                raise injected.exception("injected failure", request=request)
            return httpx.Response(
                injected.status,
                json=injected.body if injected.body is not None else {"detail": "injected"},
                headers=injected.headers,
            )
        if self.api_key is not None:
            if request.headers.get("authorization") != f"Bearer {self.api_key}":
                return httpx.Response(401, json={"detail": "Invalid API key"})
        with self.lock:
            status, payload = self._route(request.method, path, query, body)
        if payload is None:
            return httpx.Response(status)
        return httpx.Response(status, json=payload)

    def _take_injected(self, method: str, path: str) -> Injected | None:
        with self.lock:
            for item in self.injected:
                if (not item.method or item.method == method) and (
                    not item.path or re.search(item.path, path)
                ):
                    item.times -= 1
                    if item.times <= 0:
                        self.injected.remove(item)
                    return item
        return None

    def _route(self, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, Any]:
        if method == "POST" and path == "/v3/workspaces":
            return self._workspace(body)
        m = re.fullmatch(r"/v3/workspaces/([^/]+)(/.*)?", path)
        if not m:
            return 404, {"detail": "Not Found"}
        ws, rest = m.group(1), m.group(2) or ""
        if ws not in self.workspaces:
            return 404, {"detail": f"Workspace {ws} not found"}
        routes: list[tuple[str, str, Callable[..., tuple[int, Any]]]] = [
            ("POST", r"/peers", self._peer_create),
            ("POST", r"/sessions", self._session_create),
            ("POST", r"/sessions/([^/]+)/peers", self._session_add_peers),
            ("GET", r"/sessions/([^/]+)/peers/([^/]+)/config", self._session_peer_config),
            ("GET", r"/sessions/([^/]+)/context", self._session_context),
            ("POST", r"/sessions/([^/]+)/messages", self._messages_create),
            ("GET", r"/sessions/([^/]+)/messages/([^/]+)", self._message_get),
            ("POST", r"/search", self._workspace_search),
            ("POST", r"/peers/([^/]+)/search", self._peer_search),
            ("GET", r"/peers/([^/]+)/card", self._card_get),
            ("PUT", r"/peers/([^/]+)/card", self._card_set),
            ("GET", r"/peers/([^/]+)/context", self._peer_context),
            ("POST", r"/peers/([^/]+)/representation", self._peer_representation),
            ("POST", r"/peers/([^/]+)/chat", self._peer_chat),
            ("POST", r"/conclusions", self._conclusions_create),
            ("POST", r"/conclusions/list", self._conclusions_list),
            ("POST", r"/conclusions/query", self._conclusions_query),
            ("DELETE", r"/conclusions/([^/]+)", self._conclusion_delete),
        ]
        for verb, pattern, fn in routes:
            hit = re.fullmatch(pattern, rest)
            if verb == method and hit:
                return fn(ws, *hit.groups(), query=query, body=body)
        return 404, {"detail": "Not Found"}

    # ------------------------------------------------------------------ resources
    def _workspace(self, body: Any) -> tuple[int, Any]:
        wid = (body or {}).get("id", "")
        if not ID.match(str(wid)):
            return 422, _pattern_error(wid, ["body", "id"])
        created = wid not in self.workspaces
        if created:
            self.workspaces[wid] = {
                "id": wid,
                "metadata": {},
                "configuration": {},
                "created_at": _now(),
            }
        return (201 if created else 200), self.workspaces[wid]

    def _peer_create(self, ws: str, *, query: Any, body: Any) -> tuple[int, Any]:
        pid = (body or {}).get("id", "")
        if not ID.match(str(pid)):
            return 422, _pattern_error(pid, ["body", "id"])
        key = (ws, pid)
        created = key not in self.peers
        if created:
            self.peers[key] = {
                "id": pid,
                "workspace_id": ws,
                "created_at": _now(),
                "metadata": body.get("metadata") or {},
                "configuration": body.get("configuration") or {},
            }
        return (201 if created else 200), self.peers[key]

    def _ensure_peer(self, ws: str, pid: str) -> None:
        self.peers.setdefault(
            (ws, pid),
            {
                "id": pid,
                "workspace_id": ws,
                "created_at": _now(),
                "metadata": {},
                "configuration": {},
            },
        )

    def _session_create(self, ws: str, *, query: Any, body: Any) -> tuple[int, Any]:
        sid = (body or {}).get("id", "")
        if not ID.match(str(sid)) or len(str(sid)) > 100:
            return 422, _pattern_error(sid, ["body", "id"])
        key = (ws, sid)
        created = key not in self.sessions
        if created:
            self.sessions[key] = {
                "id": sid,
                "is_active": True,
                "workspace_id": ws,
                "metadata": body.get("metadata") or {},
                "configuration": body.get("configuration") or {},
                "created_at": _now(),
            }
        return (201 if created else 200), self.sessions[key]

    def _session(self, ws: str, sid: str) -> dict[str, Any] | None:
        return self.sessions.get((ws, sid))

    def _session_add_peers(self, ws: str, sid: str, *, query: Any, body: Any) -> tuple[int, Any]:
        session = self._session(ws, sid)
        if session is None:
            return 404, {"detail": f"Session {sid} not found"}
        for pid, conf in (body or {}).items():
            if not ID.match(pid):
                return 422, _pattern_error(pid, ["body", pid])
            self._ensure_peer(ws, pid)
            self.session_peers.setdefault((ws, sid), {})[pid] = {
                "observe_me": bool((conf or {}).get("observe_me", True)),
                "observe_others": bool((conf or {}).get("observe_others", True)),
            }
        return 200, session

    def _session_peer_config(
        self, ws: str, sid: str, pid: str, *, query: Any, body: Any
    ) -> tuple[int, Any]:
        conf = self.session_peers.get((ws, sid), {}).get(pid)
        if conf is None:
            return 404, {"detail": f"Peer {pid} not found in session {sid}"}
        return 200, conf

    def _representation(self, ws: str, observer: str, observed: str) -> str:
        facts = [
            c["content"]
            for c in self.conclusions
            if c["workspace_id"] == ws
            and c["observer_id"] == observer
            and c["observed_id"] == observed
        ]
        return "\n".join(f"- {f}" for f in facts)

    def _session_context(
        self, ws: str, sid: str, *, query: dict[str, str], body: Any
    ) -> tuple[int, Any]:
        if self._session(ws, sid) is None:
            return 404, {"detail": f"Session {sid} not found"}
        msgs = [
            self._public(m)
            for m in self.messages
            if m["workspace_id"] == ws and m["session_id"] == sid
        ]
        target = query.get("peer_target")
        perspective = query.get("peer_perspective")
        rep = None
        card = None
        if target:
            rep = self._representation(ws, perspective or target, target)
            card = self.cards.get((ws, perspective or target, target))
        return 200, {
            "id": sid,
            "messages": msgs,
            "summary": None,
            "peer_representation": rep,
            "peer_card": card,
        }

    def _messages_create(self, ws: str, sid: str, *, query: Any, body: Any) -> tuple[int, Any]:
        if self._session(ws, sid) is None:
            return 404, {"detail": f"Session {sid} not found"}
        items = (body or {}).get("messages") or []
        if len(items) > MAX_BATCH:
            return 422, {
                "detail": [
                    {
                        "type": "too_long",
                        "loc": ["body", "messages"],
                        "msg": f"List should have at most {MAX_BATCH} items",
                    }
                ]
            }
        for i, item in enumerate(items):
            if len(item.get("content", "")) > MAX_MESSAGE_CHARS:
                return 422, {
                    "detail": [
                        {
                            "type": "string_too_long",
                            "loc": ["body", "messages", i, "content"],
                            "msg": f"String should have at most {MAX_MESSAGE_CHARS} characters",
                        }
                    ]
                }
            if not ID.match(str(item.get("peer_id", ""))):
                return 422, _pattern_error(
                    item.get("peer_id"), ["body", "messages", str(i), "peer_id"]
                )
        out = []
        for item in items:
            self._ensure_peer(ws, item["peer_id"])
            msg = {
                "id": _new_id(),
                "content": item["content"],
                "peer_id": item["peer_id"],
                "session_id": sid,
                "metadata": item.get("metadata") or {},
                "created_at": item.get("created_at") or _now(),
                "workspace_id": ws,
                "token_count": max(1, len(item["content"]) // 4),
            }
            self.messages.append(msg)
            out.append(msg)
        return 201, out

    @staticmethod
    def _public(msg: dict[str, Any]) -> dict[str, Any]:
        return dict(msg)

    def _message_get(
        self, ws: str, sid: str, mid: str, *, query: Any, body: Any
    ) -> tuple[int, Any]:
        for m in self.messages:
            if m["id"] == mid and m["session_id"] == sid:
                return 200, m
        return 404, {"detail": f"Message with ID {mid} not found"}

    def _match(self, text: str, q: str) -> bool:
        return q.casefold() in text.casefold()

    def _workspace_search(self, ws: str, *, query: Any, body: Any) -> tuple[int, Any]:
        q = str((body or {}).get("query", ""))
        limit = int((body or {}).get("limit") or 10)
        if not 1 <= limit <= 100:
            return 422, {"detail": "limit must be between 1 and 100"}
        hits = [
            m for m in self.messages if m["workspace_id"] == ws and self._match(m["content"], q)
        ]
        return 200, hits[:limit]

    def _peer_search(self, ws: str, pid: str, *, query: Any, body: Any) -> tuple[int, Any]:
        q = str((body or {}).get("query", ""))
        limit = int((body or {}).get("limit") or 10)
        hits = [
            m
            for m in self.messages
            if m["workspace_id"] == ws and m["peer_id"] == pid and self._match(m["content"], q)
        ]
        return 200, hits[:limit]

    def _card_get(self, ws: str, pid: str, *, query: dict[str, str], body: Any) -> tuple[int, Any]:
        if (ws, pid) not in self.peers:
            return 404, {"detail": f"Peer {pid} not found"}
        target = query.get("target") or pid
        return 200, {"peer_card": self.cards.get((ws, pid, target))}

    def _card_set(self, ws: str, pid: str, *, query: dict[str, str], body: Any) -> tuple[int, Any]:
        if (ws, pid) not in self.peers:
            return 404, {"detail": f"Peer {pid} not found"}
        target = query.get("target") or pid
        card = (body or {}).get("peer_card")
        if not isinstance(card, list):
            return 422, {
                "detail": [
                    {
                        "type": "list_type",
                        "loc": ["body", "peer_card"],
                        "msg": "Input should be a valid list",
                    }
                ]
            }
        self.cards[(ws, pid, target)] = [str(c) for c in card]
        return 200, {"peer_card": self.cards[(ws, pid, target)]}

    def _peer_context(
        self, ws: str, pid: str, *, query: dict[str, str], body: Any
    ) -> tuple[int, Any]:
        if (ws, pid) not in self.peers:
            return 404, {"detail": f"Peer {pid} not found"}
        target = query.get("target") or pid
        return 200, {
            "peer_id": pid,
            "target_id": target,
            "representation": self._representation(ws, pid, target),
            "peer_card": self.cards.get((ws, pid, target)),
        }

    def _peer_representation(self, ws: str, pid: str, *, query: Any, body: Any) -> tuple[int, Any]:
        target = (body or {}).get("target") or pid
        return 200, {"representation": self._representation(ws, pid, target)}

    def _peer_chat(self, ws: str, pid: str, *, query: Any, body: Any) -> tuple[int, Any]:
        if not self.llm_configured:
            return 500, {"detail": "An unexpected error occurred"}
        b = body or {}
        answer = self.chat_answer(str(b.get("query", "")), pid, str(b.get("target") or pid))
        return 200, {"content": answer}

    def _default_answer(self, query: str, observer: str, target: str) -> str | None:
        rep = " ".join(
            c["content"]
            for c in self.conclusions
            if c["observer_id"] == observer and c["observed_id"] == target
        )
        return f"(fake LLM) {rep}" if rep else None

    def _conclusions_create(self, ws: str, *, query: Any, body: Any) -> tuple[int, Any]:
        if not self.llm_configured:
            return 422, {"detail": "OpenAI API key is required"}
        out = []
        for item in (body or {}).get("conclusions") or []:
            conclusion = {
                "id": _new_id(),
                "content": item["content"],
                "observer_id": item["observer_id"],
                "observed_id": item["observed_id"],
                "session_id": item.get("session_id"),
                "level": "explicit",
                "created_at": _now(),
                "workspace_id": ws,
            }
            self.conclusions.append(conclusion)
            out.append({k: v for k, v in conclusion.items() if k != "workspace_id"})
        return 201, out

    def _filtered_conclusions(self, ws: str, filters: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {k: v for k, v in c.items() if k != "workspace_id"}
            for c in self.conclusions
            if c["workspace_id"] == ws and all(c.get(k) == v for k, v in filters.items())
        ]

    def _conclusions_list(self, ws: str, *, query: dict[str, str], body: Any) -> tuple[int, Any]:
        page, size = int(query.get("page", 1)), int(query.get("size", 50))
        if page < 1 or not 1 <= size <= 100:  # the server's pagination bounds
            return 422, {"detail": [{"loc": ["query", "size"], "msg": "out of range"}]}
        items = self._filtered_conclusions(ws, (body or {}).get("filters") or {})
        chunk = items[(page - 1) * size : page * size]
        pages = max(1, -(-len(items) // size))
        return 200, {
            "items": chunk,
            "total": len(items),
            "page": page,
            "size": size,
            "pages": pages,
        }

    def _conclusions_query(self, ws: str, *, query: Any, body: Any) -> tuple[int, Any]:
        b = body or {}
        items = self._filtered_conclusions(ws, b.get("filters") or {})
        q = str(b.get("query", ""))
        return 200, [c for c in items if self._match(c["content"], q)][: int(b.get("top_k") or 10)]

    def _conclusion_delete(self, ws: str, cid: str, *, query: Any, body: Any) -> tuple[int, Any]:
        for c in self.conclusions:
            if c["id"] == cid and c["workspace_id"] == ws:
                self.conclusions.remove(c)
                return 204, None
        return 404, {"detail": f"Conclusion {cid} not found"}


class LoopbackServer:
    """Serve a `FakeHoncho` over real HTTP on 127.0.0.1 (a free port), in a thread."""

    def __init__(self, fake: FakeHoncho) -> None:
        self.fake = fake
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                content = self.rfile.read(length) if length else b""
                request = httpx.Request(
                    self.command,
                    f"http://127.0.0.1{self.path}",
                    headers=dict(self.headers),
                    content=content,
                )
                try:
                    response = outer.fake.handle(request)
                except Exception:
                    self.close_connection = True
                    return
                data = response.content
                self.send_response(response.status_code)
                for k, v in response.headers.items():
                    if k.lower() not in ("content-length", "transfer-encoding"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                try:
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (timed out) and closed the socket
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_DELETE = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """Base URL of the server."""
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> LoopbackServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fake.hang_event is not None:
            self.fake.hang_event.set()
        self.server.shutdown()
        self.server.server_close()


def free_port() -> int:
    """A TCP port on 127.0.0.1 with nothing listening (for connection-refused tests)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def parse_url(url: str) -> tuple[str, int]:
    """Host and port of ``url``."""
    parts = urlsplit(url)
    return parts.hostname or "", parts.port or 80
