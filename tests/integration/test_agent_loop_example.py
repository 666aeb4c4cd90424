"""``docs/examples/agent_loop.py`` run as a program against a loopback fake of the
chat-completions API (tool calls included): 200 turns in a small window, then a resume.

The fake is a real HTTP server on 127.0.0.1. It answers the example's turns (sometimes with
a ``session_search`` or ``memory`` tool call), its background reviews (a ``memory`` call,
then "Nothing to save.") and its summariser, and records every request, so the test sees
exactly what the model would have seen.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hermes_memory_context import ContextCompressor, estimate_tokens, is_summary_message
from hermes_memory_context._summarizer import SUMMARIZER_PROMPT
from hermes_memory_core.config import sessions_db_path
from hermes_memory_review import REVIEW_PROMPT
from hermes_memory_sessions import SessionStore, load_conversation

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "agent_loop.py"
WINDOW = 6000
PROTECT = 6
TURNS = 200


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


class FakeChat:
    """Scripted ``POST /v1/chat/completions``; records every request body."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.calls = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                if self.path != "/v1/chat/completions":
                    self.send_error(404)
                    return
                with fake.lock:
                    fake.requests.append(body)
                    message = fake.reply(body)
                data = json.dumps(
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        messages = body["messages"]
        last = messages[-1]
        if messages[0]["content"] == SUMMARIZER_PROMPT:
            return {"role": "assistant", "content": f"Goal: backups. Summary {self.calls}."}
        if any(m.get("content") == REVIEW_PROMPT for m in messages):
            if last["role"] == "tool" or self.review_saved():
                return {"role": "assistant", "content": "Nothing to save."}
            args = {"action": "add", "target": "user", "content": "Checks backups every morning"}
            return {
                "role": "assistant",
                "content": None,
                "tool_calls": [call("r1", "memory", args)],
            }
        if last["role"] == "tool":
            return {"role": "assistant", "content": "Found it in the archive: keep 7 dumps. " * 4}
        text = str(last["content"])
        number = text.rsplit("#", 1)[-1]
        if "search" in text:
            args = {"query": "backup retention"}
            return {"role": "assistant", "content": None,
                    "tool_calls": [call(f"s{number}", "session_search", args)]}  # fmt: skip
        if "remember" in text:
            args = {"action": "add", "target": "memory", "content": f"Project code {number}"}
            return {"role": "assistant", "content": None,
                    "tool_calls": [call(f"m{number}", "memory", args)]}  # fmt: skip
        return {"role": "assistant", "content": f"Answer {number}: rotate weekly, keep seven. " * 3}

    def review_saved(self) -> bool:
        return any(
            m.get("role") == "tool" and "Checks backups" in json.dumps(r)
            for r in self.requests[:-1]
            for m in r["messages"]
        )

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake() -> Iterator[FakeChat]:
    server = FakeChat()
    yield server
    server.close()


def line(i: int) -> str:
    if i % 9 == 4:
        return f"please search the archive for what we said on backups #{i}"
    if i % 23 == 11:
        return f"please remember the project code #{i}"
    if i % 5 == 0:
        return f"备份应该保留多久？每天检查一次可以吗 #{i}"
    return f"How should I rotate backup set for the reporting database #{i}"


def run_example(home: Path, fake: FakeChat, lines: list[str], *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_"))}
    env.update(
        HERMES_HOME=str(home),
        OPENAI_BASE_URL=fake.url,
        CHAT_MODEL="fake-model",
        CONTEXT_WINDOW=str(WINDOW),
        PYTHONIOENCODING="utf-8",
    )
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), *args],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc.stdout


def shape(messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (m["role"], m.get("content"), tuple(c["id"] for c in m.get("tool_calls") or []))
        for m in messages
    ]


def test_two_hundred_turns_compress_in_the_window_and_resume_at_the_tip(
    tmp_path: Path, fake: FakeChat
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(
        f"memory:\n  nudge_interval: 10\ncompression:\n  protect_last_n: {PROTECT}\n",
        encoding="utf-8",
    )
    out = run_example(home, fake, [line(i) for i in range(TURNS)])
    assert out.count("Answer ") >= TURNS // 2

    measure = ContextCompressor(
        context_window=WINDOW, summarize=lambda m, t: {}, count_tokens=estimate_tokens
    )
    turns = [r for r in fake.requests if r["messages"][0]["content"] != SUMMARIZER_PROMPT]
    summaries = [r for r in fake.requests if r["messages"][0]["content"] == SUMMARIZER_PROMPT]
    reviews = [r for r in turns if any(m.get("content") == REVIEW_PROMPT for m in r["messages"])]
    assert len(summaries) >= 5, len(summaries)
    assert reviews, "the review nudge never fired"
    for request in fake.requests:
        tools = estimate_tokens(json.dumps(request.get("tools") or []))
        assert measure.count_messages(request["messages"]) + tools <= WINDOW
    # tools were offered in OpenAI format, and tool results went back to the model
    assert {t["function"]["name"] for t in turns[0]["tools"]} >= {"memory", "session_search"}
    assert any(m["role"] == "tool" for r in turns for m in r["messages"])

    store = SessionStore(sessions_db_path(home))
    try:
        chain = store.list_sessions(order="started_asc")
        assert len(chain) == len(summaries) + 1
        tip = store.compression_tip(chain[0]["id"])
        assert tip == chain[-1]["id"]
        for parent, child in itertools.pairwise(chain):
            assert parent["end_reason"] == "compression"
            assert child["parent_session_id"] == parent["id"]
            before = load_conversation_of(store, parent["id"])
            after = load_conversation_of(store, child["id"])
            assert is_summary_message(after[0])
            # the protected tail (at least PROTECT messages) reached the continuation intact
            kept = max(
                k
                for k in range(len(before) + 1)
                if shape(after[1 : k + 1]) == shape(before[-k:] if k else [])
            )
            assert kept >= PROTECT
        total_users = sum(
            1
            for s in chain
            for m in store.live_messages(s["id"])
            if m["role"] == "user" and not is_summary_message(m)
        )
        assert total_users >= TURNS  # every turn recorded (tails are recorded twice)
        tip_messages = list(load_conversation(store, chain[0]["id"]))
    finally:
        store.close()
    # the model's own memory calls went through the manager (a background review may be
    # cancelled by the next turn here: the input arrives faster than anyone types)
    memory_md = (home / "memories" / "MEMORY.md").read_text(encoding="utf-8")
    assert "Project code 11" in memory_md

    # second run: --continue resumes the conversation at its tip
    fake.requests.clear()
    more = [line(i) for i in range(200, 215)]
    lines = ["What did we decide? #999", *more, "/compress", "/undo 1", "/quit", "ignored"]
    out = run_example(home, fake, lines, "--continue")
    assert "compressed " in out  # "/compress": compressed N messages, or why not
    assert "undid 1 exchange(s)" in out
    assert f"session {tip} " in out
    first = fake.requests[0]["messages"]
    assert first[0]["role"] == "system"
    assert is_summary_message(first[1])
    assert shape(first[1:-1]) == shape(tip_messages)
    assert first[-1]["content"].endswith("What did we decide? #999")
    assert any(r["messages"][0]["content"] == SUMMARIZER_PROMPT for r in fake.requests)
    store = SessionStore(sessions_db_path(home))
    try:
        # the resumed session was compressed again: the lineage goes on from the old tip
        assert store.get_session(tip)["end_reason"] == "compression"
        new_tip = store.compression_tip(chain[0]["id"])
        assert new_tip != tip and store.lineage_root(new_tip) == chain[0]["id"]
        resumed = [m["content"] for m in store.live_messages(tip)]
        assert any(str(c).startswith("Answer 999") for c in resumed)
        users = [m["content"] for m in store.live_messages(new_tip) if m["role"] == "user"]
        assert users[-1] == line(213)  # the last exchange was undone
        assert "ignored" not in json.dumps(fake.requests)
    finally:
        store.close()


def load_conversation_of(store: SessionStore, session_id: str) -> list[dict[str, Any]]:
    """Every live message of one session (not its tip) in chat format."""
    from hermes_memory_sessions._conversation import openai_message

    return [openai_message(r) for r in store.live_messages(session_id)]
