"""Test support for remote adapters: a fake HTTP service on 127.0.0.1, a server that never
answers, a port nobody listens on, and the conformance suite run three ways.

Import it in your tests (it is not loaded as a pytest plugin and adds no fixture)::

    from hermes_memory_testing import FakeService, Seen, conformance_suites

    class FakeNotes(FakeService):
        def __init__(self) -> None:
            super().__init__()
            self.notes: list[str] = []

        def route(self, seen: Seen) -> tuple[int, Any]:
            if seen.method == "POST" and seen.path == "/notes":
                self.notes.append(seen.body["text"])
                return 201, {"ok": True}
            return 404, {"error": f"no route {seen.method} {seen.path}"}

    with FakeNotes() as fake:       # serving on fake.url
        fake.fail = [503]           # the next request answers 503
        ...
        assert fake.paths() == ["POST /notes"]

`FakeService` is a real threaded HTTP server speaking HTTP/1.1 over real sockets, so the
adapter's own client library (httpx, an SDK) runs unchanged against it. It records every
request (`Seen`) and injects faults: statuses for the next requests (``fail``), one status
for every request (``status``), requests held until released (``hold``), or held and then
dropped without an answer (``drop``).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import pytest

from hermes_memory_core import MemoryProvider
from hermes_memory_core.health import read_provider_status
from hermes_memory_testing._plugin import ProviderConformance

__all__ = [
    "FakeService",
    "Raw",
    "RemoteFailures",
    "Seen",
    "SilentServer",
    "conformance_suites",
    "plugin_info",
    "provider_factory",
    "refused_url",
    "run_cli",
]

P = TypeVar("P", bound=MemoryProvider)

#: Seconds a held request waits at most for its release (a test that forgets it ends anyway).
HOLD_LIMIT = 30.0


@dataclass
class Seen:
    """One request as the fake received it.

    :param path: the URL path without the query; percent-decoded when the service's
        ``decode_paths`` is set, else exactly as sent.
    :param query: the query parameters (the first value of each).
    :param body: the JSON body; None when it was empty or not JSON (see ``raw``).
    """

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    query: dict[str, str] = field(default_factory=dict)
    raw: bytes = b""
    raw_query: str = ""


@dataclass(frozen=True)
class Raw:
    """An answer body sent as it is (not JSON): ``data`` with ``content_type`` (None: no
    ``Content-Type`` header at all) and extra ``headers`` (``(("Location", url),)``)."""

    data: bytes
    content_type: str | None = "application/octet-stream"
    headers: tuple[tuple[str, str], ...] = ()


class FakeService:
    """A threaded HTTP/1.1 server on 127.0.0.1 (an ephemeral port): subclass it and answer
    requests in `route`.

    :param start: start serving at once (else on ``with`` / `start`).

    Attributes a test sets: ``fail`` (statuses answered to the next requests, in order; ``0``
    lets one through), ``status`` (answered to every request while not 0), ``hold`` (an
    event: each request waits until it is set, then is answered), ``drop`` (an event: while
    it is set, each request waits until ``released`` is set and the connection is closed
    without an answer). Read ``seen`` (every request, in order), `paths` and `calls`.
    """

    #: Percent-decode `Seen.path` (set it when routes compare decoded names).
    decode_paths = False

    def __init__(self, *, start: bool = True) -> None:
        self.seen: list[Seen] = []
        self.fail: list[int] = []
        self.status = 0
        self.hold: threading.Event | None = None
        self.drop = threading.Event()
        self.released = threading.Event()
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.server.handle_error = lambda request, client_address: None  # type: ignore[method-assign]
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._started = False
        if start:
            self.start()

    # ------------------------------------------------------------------ for subclasses
    def route(self, seen: Seen) -> tuple[int, Any]:
        """The answer to one request: ``(status, JSON-able payload or Raw)``."""
        return 404, self.error_body(404, f"no route {seen.method} {seen.path}")

    def error_body(self, status: int, message: str) -> Any:
        """The payload of an injected or routing error (override for the service's shape)."""
        return {"error": message}

    # ------------------------------------------------------------------ reading
    def paths(self) -> list[str]:
        """``"METHOD /path"`` of every request so far."""
        with self.lock:
            return [f"{s.method} {s.path}" for s in self.seen]

    def calls(self, prefix: str, method: str = "") -> list[Seen]:
        """The requests whose path starts with ``prefix`` (and of ``method``, if given)."""
        with self.lock:
            seen = list(self.seen)
        return [s for s in seen if s.path.startswith(prefix) and method in ("", s.method)]

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Start serving (idempotent)."""
        if not self._started:
            self._started = True
            self._thread.start()

    def close(self) -> None:
        """Release held requests and stop serving."""
        self.released.set()
        if self.hold is not None:
            self.hold.set()
        if self._started:
            self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FakeService:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ the request path
    def _answer_for(self, seen: Seen) -> tuple[int, Any] | None:
        with self.lock:
            self.seen.append(seen)
            injected = self.fail.pop(0) if self.fail else self.status
        hold = self.hold
        if hold is not None:
            hold.wait(HOLD_LIMIT)
        if self.drop.is_set():
            self.released.wait(HOLD_LIMIT)
            return None
        if injected:
            return injected, self.error_body(injected, f"injected {injected}")
        return self.route(seen)


def _handler(service: FakeService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, payload: Any) -> None:
            raw = payload if isinstance(payload, Raw) else None
            body = raw.data if raw else json.dumps(payload, ensure_ascii=False).encode()
            kind = raw.content_type if raw else "application/json"
            self.send_response(status)
            if kind:
                self.send_header("Content-Type", kind)
            for name, value in raw.headers if raw else ():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            url = urllib.parse.urlsplit(self.path)
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            path = urllib.parse.unquote(url.path) if service.decode_paths else url.path
            query = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
            seen = Seen(self.command, path, dict(self.headers.items()), body, query, raw,
                        url.query)  # fmt: skip
            answer = service._answer_for(seen)
            if answer is None:
                self.close_connection = True
                return
            self._send(*answer)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

    return Handler


class SilentServer:
    """A socket on 127.0.0.1 that accepts connections and never answers (a hung server)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def close(self) -> None:
        """Stop listening."""
        self.sock.close()

    def __enter__(self) -> SilentServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def refused_url() -> str:
    """A loopback URL nobody listens on (a port bound, then closed)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"


def conformance_suites(
    build: Callable[[Path, str | None], MemoryProvider],
    serve: Callable[[], AbstractContextManager[Any]],
) -> tuple[type[ProviderConformance], type[ProviderConformance], type[ProviderConformance]]:
    """The core conformance suite three ways: the service reachable, refusing connections,
    and the provider not configured at all.

    :param build: ``build(home, url)`` makes the provider (``url`` None: unconfigured).
    :param serve: starts the fake service (a context manager yielding it, with ``url``).

    Bind the classes to ``Test*`` names in a test module for pytest to collect them::

        TestReachable, TestRefused, TestUnconfigured = conformance_suites(build, FakeNotes)
    """

    class Reachable(ProviderConformance):
        @pytest.fixture
        def provider(self, hermes_memory_home: Path) -> Iterator[MemoryProvider]:
            with serve() as service:
                yield build(hermes_memory_home, service.url)

    class Refused(ProviderConformance):
        @pytest.fixture
        def provider(self, hermes_memory_home: Path) -> MemoryProvider:
            return build(hermes_memory_home, refused_url())

    class Unconfigured(ProviderConformance):
        @pytest.fixture
        def provider(self, hermes_memory_home: Path) -> MemoryProvider:
            return build(hermes_memory_home, None)

    return Reachable, Refused, Unconfigured


@contextmanager
def provider_factory(
    cls: type[P], home: Path, section: str, defaults: Mapping[str, Any] | None = None
) -> Iterator[Callable[..., P]]:
    """Make providers of ``cls`` on ``home`` for a test; each one is shut down at the end.

    ``make(**settings)`` builds one with ``config={section: {**defaults, **settings}}`` and
    an empty environment (nothing leaks in from the machine's variables);
    ``make(init="s1", ...)`` also initialises it for session ``s1``::

        @pytest.fixture
        def make(hermes_memory_home):
            with provider_factory(NotesProvider, hermes_memory_home, "notes") as factory:
                yield factory
    """
    made: list[P] = []

    def make(*, init: str | None = None, **settings: Any) -> P:
        config = {section: {**(defaults or {}), **settings}}
        provider = cls(hermes_home=home, config=config, environ={})  # type: ignore[call-arg]
        if init is not None:
            provider.initialize(init, hermes_home=str(home), platform="cli")
        made.append(provider)
        return provider

    try:
        yield make
    finally:
        for provider in made:
            provider.shutdown()


class RemoteFailures:
    """Fail-open checks every remote adapter must pass, against real sockets: HTTP error
    statuses, a refused port, bad credentials, a server that accepts and never answers, and
    writes spooled at shutdown then replayed by the next start. Subclass it, provide fixtures
    ``fake`` (the running `FakeService`) and ``make`` (``make(url, **settings)`` returns a
    provider, not yet initialised; in the class or a ``conftest.py``) and say which tool
    reads from the service::

        class TestNotesFailures(RemoteFailures):
            read_tool = ("notes_search", {"query": "x"})
            auth_hint = "NOTES_API_KEY"

    The provider's settings must accept ``api_key``, ``timeout`` and ``breaker_threshold``
    (as `hermes_memory_core.kit.RemoteSettings` declares them).
    """

    #: A tool call that reads from the service: ``(name, arguments)``.
    read_tool: tuple[str, dict[str, Any]] = ("", {})
    #: What a bad-credentials error must name (the setting to check), if anything.
    auth_hint = ""
    #: A key no log line or health record may ever show.
    secret = "sk-suite-secret-key-0123456789"  # noqa: S105 - a decoy, never a real key

    def _tool(self, provider: MemoryProvider) -> dict[str, Any]:
        name, args = self.read_tool
        answer: dict[str, Any] = json.loads(provider.handle_tool_call(name, dict(args)))
        return answer

    def _record(self, provider: MemoryProvider, home: Path) -> dict[str, Any]:
        found = read_provider_status(home, provider.name)
        assert found is not None, "no health record was written"
        return dict(found)

    @pytest.mark.parametrize(
        ("status", "kind"),
        [(401, "auth"), (403, "auth"), (429, "rate_limited"), (500, "server"), (502, "server"),
         (503, "server"), (404, "not_found"), (422, "invalid")],
    )  # fmt: skip
    def test_error_statuses_are_classified_and_fail_open(
        self,
        make: Callable[..., MemoryProvider],
        fake: FakeService,
        hermes_memory_home: Path,
        status: int,
        kind: str,
    ) -> None:
        fake.status = status
        provider = make(fake.url, breaker_threshold=10)
        provider.initialize("s1", hermes_home=str(hermes_memory_home))
        assert provider.prefetch("anything about docker") == ""  # no recall, no exception
        answer = self._tool(provider)
        assert "error" in answer
        found = read_provider_status(hermes_memory_home, provider.name)
        if kind in ("not_found", "invalid"):  # the request was wrong, not the service
            assert str(status) in answer["error"]
            assert found is None or found["state"] == "ok"
            return
        assert found is not None
        assert found["last_error_kind"] == kind
        if kind == "auth":  # bad credentials: calls stop at once
            assert found["state"] == "circuit_open"
            return
        assert found["state"] == "degraded"
        assert str(status) in answer["error"]
        fake.status = 0  # the service answers again: the record goes back to ok
        assert "error" not in self._tool(provider)
        assert self._record(provider, hermes_memory_home)["state"] == "ok"

    def test_a_refused_port_opens_the_breaker(
        self, make: Callable[..., MemoryProvider], hermes_memory_home: Path
    ) -> None:
        provider = make(refused_url(), breaker_threshold=2)
        provider.initialize("s1", hermes_home=str(hermes_memory_home))
        answers = [self._tool(provider) for _ in range(3)]
        assert all("error" in answer for answer in answers), answers
        assert "temporarily unavailable" in answers[-1]["error"]
        record = self._record(provider, hermes_memory_home)
        assert record["state"] == "circuit_open"
        assert record["last_error_kind"] == "connection"

    def test_bad_credentials_open_the_breaker_at_once(
        self,
        make: Callable[..., MemoryProvider],
        fake: FakeService,
        hermes_memory_home: Path,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        fake.status = 401
        provider = make(fake.url, api_key=self.secret)
        provider.initialize("s1", hermes_home=str(hermes_memory_home))
        answer = self._tool(provider)
        assert "error" in answer
        assert self.auth_hint in answer["error"]
        before = len(fake.seen)
        again = self._tool(provider)
        assert "temporarily unavailable" in again["error"]
        assert len(fake.seen) == before  # not even attempted
        record = self._record(provider, hermes_memory_home)
        assert record["state"] == "circuit_open"
        assert record["last_error_kind"] == "auth"
        status = hermes_memory_home / "memory_providers" / f"{provider.name}.status.json"
        assert self.secret not in status.read_text(encoding="utf-8")
        assert self.secret not in caplog.text

    def test_unsent_writes_are_spooled_at_shutdown_and_replayed_at_start(
        self, make: Callable[..., MemoryProvider], fake: FakeService, hermes_memory_home: Path
    ) -> None:
        first = make(refused_url(), breaker_threshold=1, api_key=self.secret)
        first.initialize("s1", hermes_home=str(hermes_memory_home))
        first.sync_turn("remember the 合言葉 is 山", "ok")
        first.on_memory_write("add", "user", "Prefers 中文")
        first.shutdown()
        pattern = f"{first.name}_pending.*"
        spooled = sorted(hermes_memory_home.glob(pattern))
        assert len(spooled) == 1, spooled
        assert spooled[0].stat().st_mode & 0o777 == 0o600
        assert self.secret not in spooled[0].read_text(encoding="utf-8")
        second = make(fake.url)
        second.initialize("s2", hermes_home=str(hermes_memory_home))
        second.on_session_end([])
        sent = " ".join(json.dumps(s.body, ensure_ascii=False) for s in list(fake.seen))
        assert "remember the 合言葉 is 山" in sent
        assert "Prefers 中文" in sent
        assert sorted(hermes_memory_home.glob(pattern)) == []

    def test_a_silent_server_fails_open_and_unsent_writes_are_spooled(
        self, make: Callable[..., MemoryProvider], hermes_memory_home: Path
    ) -> None:
        with SilentServer() as silent:
            provider = make(silent.url, timeout=0.5, breaker_threshold=5)
            provider.initialize("s1", hermes_home=str(hermes_memory_home))
            assert provider.prefetch("bees") == ""  # gave up waiting; the server still hangs
            assert "error" in self._tool(provider)
            assert self._record(provider, hermes_memory_home)["last_error_kind"] == "timeout"
            provider.sync_turn("kept while the server hangs 京都", "ok")
            provider.shutdown()  # bounded: what could not be sent is spooled
        deadline = time.monotonic() + 10
        spooled: list[Path] = []
        while not spooled and time.monotonic() < deadline:
            spooled = sorted(hermes_memory_home.glob(f"{provider.name}_pending.*.json"))
            time.sleep(0.05)
        assert spooled, "nothing was spooled at shutdown"
        text = "".join(p.read_text(encoding="utf-8") for p in spooled)
        assert "kept while the server hangs 京都" in text


def run_cli(
    home: Path, *args: str, clean: str = "", timeout: float = 60.0, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run the installed ``hermes-memory`` console script (beside the running Python, from
    hermes-memory-cli) on ``home``: environment variables starting with ``clean`` are
    removed first (``"NOTES_"``: none of the machine's own settings leak in), then ``env``
    is added."""
    return _run_cli(home, args, clean, timeout, env)


def _run_cli(
    home: Path, args: tuple[str, ...], clean: str, timeout: float, env: Mapping[str, str]
) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("hermes-memory")
    base = {k: v for k, v in os.environ.items() if not (clean and k.startswith(clean))}
    return subprocess.run(
        [str(script), "--home", str(home), *args], env={**base, **env},
        capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def plugin_info(home: Path, name: str, *, clean: str = "", **env: str) -> dict[str, Any]:
    """Provider ``name`` as ``hermes-memory --json plugins`` lists it (distribution,
    ``available``, ``unavailable_reason``, ``load_error``, hooks …)."""
    done = _run_cli(home, ("--json", "plugins"), clean, 60.0, env)
    assert done.returncode == 0, done.stderr
    [info] = [p for p in json.loads(done.stdout) if p["name"] == name]
    return dict(info)
