"""OpenAIEmbedder against a fake /v1/embeddings server on 127.0.0.1 (real HTTP)."""

from __future__ import annotations

import base64
import hashlib
import json
import math
import socket
import struct
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hermes_memory_vectors import (
    EmbedderConfigError,
    EmbedderUnavailable,
    OpenAIEmbedder,
    embedder_from_config,
)
from hermes_memory_vectors._openai_embedder import embeddings_endpoint

KEY = "sk-test-7f3a9c"
DIM = 8


def fake_vector(text: str) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [b - 128.0 for b in digest[:DIM]]


class FakeServer:
    """Speaks the documented API; `mode` switches misbehaviours."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.fail_first = 0
        self.stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                server.requests.append(body)
                server.headers.append(dict(self.headers))
                if self.path != "/v1/embeddings":
                    return self.reply(404, {"error": {"message": "no route"}})
                if server.fail_first > 0:
                    server.fail_first -= 1
                    return self.reply(503, {"error": {"message": "warming up"}})
                mode = server.mode
                if mode == "hang":
                    server.stop.wait(30)
                    return None
                if mode == "trickle":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "100000")
                    self.end_headers()
                    for _ in range(300):
                        if server.stop.wait(0.1):
                            return None
                        try:
                            self.wfile.write(b" ")
                            self.wfile.flush()
                        except OSError:
                            return None
                    return None
                if mode == "auth" and self.headers.get("Authorization") != f"Bearer {KEY}":
                    return self.reply(401, {"error": {"message": f"bad key {KEY[:3]}"}})
                if mode == "bad_request":
                    return self.reply(400, {"error": {"message": "input too long"}})
                if mode == "echo_key":
                    return self.reply(
                        500, {"error": {"message": self.headers.get("Authorization")}}
                    )
                if mode == "rate_limited":
                    return self.reply(
                        429, {"error": {"message": "slow down"}}, {"Retry-After": "0.1"}
                    )
                if mode == "redirect":
                    return self.reply(302, {}, {"Location": "http://127.0.0.1:9/steal"})
                inputs = body["input"]
                data = [
                    {"object": "embedding", "index": i, "embedding": fake_vector(t)}
                    for i, t in enumerate(inputs)
                ]
                if mode == "reversed":
                    data.reverse()
                elif mode == "short":
                    data = data[:-1]
                elif mode == "nan":
                    data[0]["embedding"] = [float("nan")] * DIM
                elif mode == "ragged":
                    data[-1]["embedding"] = data[-1]["embedding"][:-1]
                elif mode == "base64":
                    for item in data:
                        item["embedding"] = base64.b64encode(
                            struct.pack(f"<{DIM}f", *item["embedding"])
                        ).decode()
                elif mode == "not_json":
                    return self.raw(200, b"<html>gateway</html>")
                elif mode == "huge":
                    return self.raw(200, b"[" + b"1," * 200_000 + b"1]")
                return self.reply(200, {"object": "list", "data": data, "model": body["model"]})

            def reply(self, status: int, payload: dict, headers: dict | None = None) -> None:
                self.raw(status, json.dumps(payload).encode(), headers)

            def raw(self, status: int, blob: bytes, headers: dict | None = None) -> None:
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(blob)))
                self.end_headers()
                self.wfile.write(blob)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[FakeServer]:
    s = FakeServer()
    yield s
    s.close()


def unit(v: list[float]) -> list[float]:
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def make(server: FakeServer, **kw) -> OpenAIEmbedder:
    kw.setdefault("timeout", 2.0)
    kw.setdefault("retries", 0)
    kw.setdefault("cooldown", 0)
    return OpenAIEmbedder(server.url, "fake-embed", **kw)


def test_round_trip_batches_and_normalises(server: FakeServer) -> None:
    embedder = make(server, batch_size=2, api_key=KEY)
    texts = ["one", "two", "三", "four", "five"]
    vectors = embedder.embed_documents(texts)
    assert len(server.requests) == 3  # 2 + 2 + 1
    assert [r["input"] for r in server.requests] == [["one", "two"], ["三", "four"], ["five"]]
    assert all(r["model"] == "fake-embed" for r in server.requests)
    assert server.headers[0]["Authorization"] == f"Bearer {KEY}"
    for text, vector in zip(texts, vectors, strict=True):
        assert vector == pytest.approx(unit(fake_vector(text)))
    assert embedder.dim == DIM
    assert embedder.embed_query("q") == pytest.approx(unit(fake_vector("q")))
    assert embedder.embed_documents([]) == []


def test_dim_is_learnt_from_the_server(server: FakeServer) -> None:
    embedder = make(server)
    assert embedder.dim == DIM
    assert len(server.requests) == 1
    with_dims = make(server, dimensions=DIM)
    assert with_dims.dim == DIM
    assert len(server.requests) == 1  # known without asking
    with_dims.embed_query("x")
    assert server.requests[-1]["dimensions"] == DIM


def test_answer_order_follows_index_and_base64_is_decoded(server: FakeServer) -> None:
    server.mode = "reversed"
    assert make(server).embed_documents(["a", "b", "c"])[0] == pytest.approx(unit(fake_vector("a")))
    server.mode = "base64"
    assert make(server).embed_query("b") == pytest.approx(unit(fake_vector("b")), rel=1e-5)


def test_empty_text_is_sent_as_a_space_and_odd_text_cleaned(server: FakeServer) -> None:
    make(server).embed_documents(["", "a\x00b", "\ud800"])
    assert server.requests[0]["input"] == [" ", "a b", "\ufffd"]


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("short", "2 embeddings for 3 texts"),
        ("nan", "NaN"),
        ("ragged", "length"),
        ("not_json", "not JSON"),
        ("bad_request", "HTTP 400: input too long"),
        ("redirect", "HTTP 302"),
    ],
)
def test_bad_answers_are_embedder_unavailable(server: FakeServer, mode: str, message: str) -> None:
    server.mode = mode
    with pytest.raises(EmbedderUnavailable, match=message):
        make(server, retries=2).embed_documents(["a", "b", "c"])
    if mode in ("bad_request", "redirect"):
        assert len(server.requests) == 1  # not retried
    if mode == "redirect":
        assert len(server.requests) == 1  # and the redirect was not followed


def test_wrong_key_is_reported_without_the_key(server: FakeServer) -> None:
    server.mode = "auth"
    with pytest.raises(EmbedderUnavailable, match="HTTP 401") as info:
        make(server, api_key="sk-wrong-secret-123").embed_query("x")
    assert "sk-wrong-secret-123" not in str(info.value)
    assert "sk-wrong-secret-123" not in repr(make(server, api_key="sk-wrong-secret-123"))


def test_a_server_echoing_the_key_does_not_leak_it(server: FakeServer) -> None:
    server.mode = "echo_key"
    with pytest.raises(EmbedderUnavailable) as info:
        make(server, api_key=KEY).embed_query("x")
    assert KEY not in str(info.value)
    assert "***" in str(info.value)


def test_transient_errors_are_retried_a_bounded_number_of_times(server: FakeServer) -> None:
    server.fail_first = 2
    assert make(server, retries=2).embed_query("x") == pytest.approx(unit(fake_vector("x")))
    assert len(server.requests) == 3
    server.fail_first = 5
    with pytest.raises(EmbedderUnavailable, match="HTTP 503: warming up"):
        make(server, retries=1).embed_query("x")
    assert len(server.requests) == 5  # 3 + 2 attempts, no more


def test_rate_limit_honours_retry_after(server: FakeServer) -> None:
    server.mode = "rate_limited"
    with pytest.raises(EmbedderUnavailable, match="HTTP 429"):
        make(server, retries=2).embed_query("x")
    assert len(server.requests) == 3


@pytest.mark.parametrize("mode", ["hang", "trickle"])
def test_a_hung_or_trickling_server_never_hangs_the_caller(server: FakeServer, mode: str) -> None:
    server.mode = mode
    embedder = make(server, timeout=0.5, retries=1)
    started = time.monotonic()
    with pytest.raises(EmbedderUnavailable, match="no answer"):
        embedder.embed_query("x")
    # Generous bound (a loaded machine): 2 attempts of 0.5 s plus one back-off, far below
    # the server's 30 s.
    assert time.monotonic() - started < 10


def test_an_oversized_answer_is_refused(server: FakeServer) -> None:
    server.mode = "huge"
    with pytest.raises(EmbedderUnavailable, match="larger than"):
        make(server, max_response_bytes=10_000).embed_query("x")


def test_nothing_listening_is_unavailable_and_the_breaker_then_fails_fast() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    embedder = OpenAIEmbedder(f"http://127.0.0.1:{port}", "m", timeout=1, retries=0, cooldown=60)
    with pytest.raises(EmbedderUnavailable, match="cannot reach"):
        embedder.embed_query("x")
    with pytest.raises(EmbedderUnavailable, match="failed recently"):
        embedder.embed_query("x")


def test_breaker_recovers_after_cooldown(server: FakeServer) -> None:
    server.fail_first = 1
    embedder = make(server, cooldown=0.2)
    with pytest.raises(EmbedderUnavailable):
        embedder.embed_query("x")
    with pytest.raises(EmbedderUnavailable, match="failed recently"):
        embedder.embed_query("x")
    assert len(server.requests) == 1
    time.sleep(0.3)
    assert embedder.embed_query("x") == pytest.approx(unit(fake_vector("x")))


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://localhost:11434", "http://localhost:11434/v1/embeddings"),
        ("https://api.openai.com/v1", "https://api.openai.com/v1/embeddings"),
        ("https://api.openai.com/v1/", "https://api.openai.com/v1/embeddings"),
        ("http://127.0.0.1:8080/v1/embeddings", "http://127.0.0.1:8080/v1/embeddings"),
        ("http://[::1]:1234/api/v1", "http://[::1]:1234/api/v1/embeddings"),
    ],
)
def test_endpoint_urls(url: str, expected: str) -> None:
    assert embeddings_endpoint(url) == expected


@pytest.mark.parametrize(
    "url", ["ftp://x", "localhost:11434", "http://", "http://u:p@host/v1", "http://h/v1?x=1", 3]
)
def test_bad_urls_are_refused(url) -> None:
    with pytest.raises(ValueError, match="must"):
        embeddings_endpoint(url)


def test_config_reads_the_key_from_the_environment_only(server: FakeServer) -> None:
    section = {"embedder": "openai", "embedder_url": server.url, "embedder_model": "fake-embed"}
    env = {"HERMES_MEMORY_EMBEDDER_API_KEY": KEY, "OPENAI_API_KEY": "sk-openai-other"}
    embedder = embedder_from_config(section, environ=env)
    assert isinstance(embedder, OpenAIEmbedder)
    embedder.embed_query("x")
    assert server.headers[-1]["Authorization"] == f"Bearer {KEY}"
    # OPENAI_API_KEY is never sent to a server that is not OpenAI's.
    embedder = embedder_from_config(section, environ={"OPENAI_API_KEY": "sk-openai-other"})
    embedder.embed_query("y")
    assert "Authorization" not in server.headers[-1]
    named = dict(section, embedder_api_key_env="MY_KEY")
    embedder = embedder_from_config(named, environ={"MY_KEY": KEY})
    embedder.embed_query("z")
    assert server.headers[-1]["Authorization"] == f"Bearer {KEY}"
    with pytest.raises(EmbedderConfigError, match=r"sessions.embedder_api_key_env names MY_KEY"):
        embedder_from_config(named, environ={})
    with pytest.raises(EmbedderConfigError, match=r"sessions.embedder_api_key is not read"):
        embedder_from_config(dict(section, embedder_api_key=KEY), environ={})


def test_config_needs_url_and_model() -> None:
    with pytest.raises(EmbedderConfigError, match=r"sessions.embedder_url must be set"):
        embedder_from_config({"embedder": "openai", "embedder_model": "m"})
    with pytest.raises(EmbedderConfigError, match=r"sessions.embedder_model must name"):
        embedder_from_config({"embedder": "openai", "embedder_url": "http://127.0.0.1:1"})
    with pytest.raises(EmbedderConfigError, match=r"sessions.embedder_url must be an http"):
        embedder_from_config(
            {"embedder": "openai", "embedder_url": "file:///etc/passwd", "embedder_model": "m"}
        )
