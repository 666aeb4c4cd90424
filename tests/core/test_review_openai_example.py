"""The how-to's OpenAI-compatible review example, run against a loopback fake server.

The fake is a real HTTP server on 127.0.0.1 that answers ``POST /v1/chat/completions``
with scripted tool calls, so the example's request and the review's handling of real
chat-completion JSON are both exercised. The example module is imported from
``docs/examples/`` and must be the code shown in ``docs/how-to/background-review.md``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from hermes_memory_builtin import BuiltinMemoryProvider, MemoryStore, PendingStore
from hermes_memory_core import MemoryManager
from hermes_memory_review import REVIEW_PROMPT

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "openai_review.py"
HOWTO = ROOT / "docs" / "how-to" / "background-review.md"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("openai_review_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tool_call(call_id: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "memory", "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


def completion(message: dict[str, Any]) -> dict[str, Any]:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }


class FakeOpenAI:
    """Scripted ``/v1/chat/completions`` on 127.0.0.1; records every request."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies = replies
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path != "/v1/chat/completions":
                    self.send_error(404)
                    return
                fake.requests.append(json.loads(body))
                fake.headers.append(dict(self.headers.items()))
                reply = (
                    fake.replies.pop(0)
                    if fake.replies
                    else {"role": "assistant", "content": "Nothing to save."}
                )
                data = json.dumps(completion(reply)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[MemoryManager]:
    m = MemoryManager(hermes_home=tmp_path)
    m.add_provider(BuiltinMemoryProvider(hermes_home=tmp_path))
    m.initialize_all("s1")
    yield m
    m.shutdown_all()


def test_example_reviews_through_a_loopback_openai_server(
    manager: MemoryManager, tmp_path: Path
) -> None:
    store = MemoryStore(tmp_path / "memories")
    store.load_from_disk()
    assert store.add("memory", "User writes American English")["success"]
    fake = FakeOpenAI(
        [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    tool_call(
                        "call_1", {"action": "add", "target": "user", "content": "名字是 Priya"}
                    ),
                    tool_call(
                        "call_2",
                        {"action": "remove", "target": "memory", "old_text": "American English"},
                    ),
                ],
            },
            {"role": "assistant", "content": "Saved the name; proposed removing the old fact."},
        ]
    )
    try:
        llm = load_example().openai_review_model(fake.base_url, "fake-model", api_key="sk-test")
        conversation = [{"role": "user", "content": "I'm Priya. British English, please."}]
        result = manager.run_review(llm, conversation, background=False).result
    finally:
        fake.close()

    assert result.status == "completed", result.error
    assert result.turns == 2
    first, second = fake.requests
    assert first["model"] == "fake-model"
    assert first["messages"][-1] == {"role": "user", "content": REVIEW_PROMPT}
    assert [t["function"]["name"] for t in first["tools"]] == ["memory"]
    assert fake.headers[0].get("Authorization") == "Bearer sk-test"
    tool_results = [m for m in second["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_results] == ["call_1", "call_2"]

    store.load_from_disk()
    assert store.entries("user") == ["名字是 Priya"]
    assert store.entries("memory") == ["User writes American English"]  # staged, not removed
    (proposal,) = PendingStore(store.memory_dir).proposals()
    assert result.staged == [proposal["id"]]


def test_http_errors_end_the_review_as_failed(manager: MemoryManager) -> None:
    fake = FakeOpenAI([])
    try:
        llm = load_example().openai_review_model(fake.base_url + "/wrong", "m", api_key="")
        result = manager.run_review(llm, [], background=False).result
    finally:
        fake.close()
    assert result.status == "failed" and "404" in result.error


def test_howto_shows_the_tested_example() -> None:
    text = HOWTO.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert EXAMPLE.read_text(encoding="utf-8") in blocks
