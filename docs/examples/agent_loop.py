"""A complete agent loop around hermes-memory, for any OpenAI-compatible chat endpoint.

Memory in the system prompt, recall before every turn, the memory tools, every turn
recorded, the background memory review, context compression and resume — the
conversation-side half of what Hermes Agent does around its memory.

Environment:

* ``OPENAI_BASE_URL`` (default ``https://api.openai.com``; the server must serve
  ``POST /v1/chat/completions`` with tool calling), ``OPENAI_API_KEY`` (optional),
  ``CHAT_MODEL`` (default ``gpt-4o-mini``), ``CONTEXT_WINDOW`` (tokens, default 128000);
* ``HERMES_HOME`` (default ``~/.hermes``): memory, archive and the ``compression:`` settings.

Usage: ``python agent_loop.py [--continue | --resume ID_OR_TITLE]``, then type a message per
line. ``/compress`` compresses now, ``/undo [N]`` takes back the last N exchanges,
``/quit`` (or end of input) ends the session.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

import httpx

from hermes_memory_context import CompressionResult, ContextCompressor
from hermes_memory_core import MemoryManager, new_session_id, to_openai_tools
from hermes_memory_sessions import (
    SessionArchiveProvider,
    SessionNotFoundError,
    load_conversation,
    undo,
)

Model = Callable[..., dict[str, Any]]
#: Model calls one turn may make (a tool call, its results, the next call, ...).
MAX_TOOL_ROUNDS = 8
#: Tokens kept free for the model's reply.
REPLY_RESERVE = 1024


def chat_model(base_url: str, model: str, *, api_key: str | None = None) -> Model:
    """``llm(messages, tools) -> assistant message dict`` over ``/v1/chat/completions``.

    The same callable serves the turns, the background review and the summariser: they all
    take OpenAI messages and tools and read the assistant message.
    """
    key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    client = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=120.0)

    def llm(
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        cancel: threading.Event | None = None,
    ) -> dict[str, Any]:
        if cancel is not None and cancel.is_set():
            raise RuntimeError("cancelled")
        body: dict[str, Any] = {"model": model, "messages": messages}
        if tools:
            body["tools"] = tools
        response = client.post("/v1/chat/completions", json=body)
        response.raise_for_status()
        message: dict[str, Any] = response.json()["choices"][0]["message"]
        return message

    return llm


class Agent:
    """One conversation: the messages the model sees and the memory around them."""

    def __init__(
        self,
        memory: MemoryManager,
        llm: Model,
        *,
        context_window: int,
        resume: str | None = None,
        latest: bool = False,
    ) -> None:
        self.memory = memory
        self.llm = llm
        archive = memory.get_provider("sessions")
        if not isinstance(archive, SessionArchiveProvider):
            raise SystemExit("the session archive (hermes-memory-sessions) is not installed")
        self.store = archive.store
        earlier: list[dict[str, Any]] = []
        if latest:
            conversation = load_conversation(self.store, latest=True, source="cli")
        elif resume:
            try:
                conversation = load_conversation(self.store, resume)  # id or unique prefix
            except SessionNotFoundError:
                conversation = load_conversation(self.store, title=resume)
        if latest or resume:
            # The conversation's compression tip: summary first, then what followed it.
            self.session_id = conversation.session_id
            earlier = list(conversation)
            self.store.reopen_session(self.session_id)  # in use again (ended at the last exit)
        else:
            self.session_id = new_session_id()
        self.turns = sum(1 for m in earlier if m["role"] == "user")
        self.compress_failed = False
        memory.initialize_all(self.session_id, platform="cli", prior_user_turns=self.turns)
        # The system prompt is a frozen snapshot: built once per session, as Hermes does.
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": "You are a helpful assistant.\n\n"
             + memory.build_system_prompt()},
            *earlier,
        ]  # fmt: skip
        self.tools = to_openai_tools(memory.get_all_tool_schemas())
        tool_tokens = len(json.dumps(self.tools)) // 3  # schemas are sent with every call
        self.compressor = ContextCompressor.from_config(
            memory.hermes_home,
            context_window=context_window - tool_tokens - REPLY_RESERVE,
            summarize=llm,
        )

    def turn(self, text: str) -> str:
        """One user turn: recall, model and tool calls, record, review, maybe compress."""
        self.turns += 1
        self.memory.on_turn_start(self.turns, text)
        recall = self.memory.prefetch_all(text)  # fenced <memory-context> block, or ""
        turn: list[dict[str, Any]] = [{"role": "user", "content": text}]
        # Recall goes into the API copy of the user message only: never stored.
        sent_user = {"role": "user", "content": f"{recall}\n\n{text}" if recall else text}
        answer = ""
        self.compress_failed = False
        for _ in range(MAX_TOOL_ROUNDS):
            self.compress_if_needed(turn)
            reply = self.llm([*self.messages, sent_user, *turn[1:]], self.tools)
            calls = reply.get("tool_calls") or []
            answer = reply.get("content") or ""
            message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
            if calls:
                message["tool_calls"] = calls
            turn.append(message)
            if not calls:
                break
            for call in calls:
                function = call["function"]
                result = self.memory.handle_tool_call(
                    function["name"], function.get("arguments") or "{}"
                )
                turn.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        self.messages += turn
        self.memory.sync_all(text, answer, messages=turn)  # durable in the archive on return
        if self.memory.review_due:  # the nudge: review in the background, after the reply
            self.memory.run_review(self.llm, self.messages)
        return answer

    def compress_if_needed(self, turn: list[dict[str, Any]]) -> None:
        """Compress the history when the next request would reach the threshold (tried
        once per turn: a failing summariser is not asked again at every tool round)."""
        if not self.compress_failed and self.compressor.should_compress([*self.messages, *turn]):
            self.compress_failed = not self.compress().compressed

    def compress(self) -> CompressionResult:
        """Summarise the middle of the history; the archive continues in a new session."""
        result = self.compressor.compress(self.messages, manager=self.memory)
        if result.compressed:  # else result.error says why; nothing was changed
            self.messages = result.messages
            self.session_id = result.session_id or self.session_id
        return result

    def undo(self, n: int) -> str:
        """Take back the last ``n`` exchanges (in the archive and in the model's view)."""
        result = undo(self.store, self.session_id, n)
        self.messages = self.messages[:1] + list(load_conversation(self.store, self.session_id))
        return f"undid {result.exchanges} exchange(s)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--continue", dest="latest", action="store_true", help="latest session")
    which.add_argument("--resume", metavar="ID_OR_TITLE", help="a session id, prefix or title")
    args = parser.parse_args(argv)
    llm = chat_model(
        os.environ.get("OPENAI_BASE_URL", "https://api.openai.com"),
        os.environ.get("CHAT_MODEL", "gpt-4o-mini"),
    )
    with MemoryManager.from_config() as memory:
        try:
            agent = Agent(
                memory,
                llm,
                context_window=int(os.environ.get("CONTEXT_WINDOW", "128000")),
                resume=args.resume,
                latest=args.latest,
            )
        except SessionNotFoundError as exc:
            print(f"cannot resume: {exc}", file=sys.stderr)
            return 1
        print(f"session {agent.session_id} ({len(agent.messages) - 1} earlier messages)")
        for line in sys.stdin:
            text = line.strip()
            if not text:
                continue
            if text == "/quit":
                break
            try:
                if text == "/compress":
                    result = agent.compress()
                    print(f"compressed {result.compressed} messages" if result.compressed
                          else f"not compressed: {result.error}")  # fmt: skip
                elif text.startswith("/undo"):
                    print(agent.undo(int(text.split()[1]) if len(text.split()) > 1 else 1))
                else:
                    print(agent.turn(text), flush=True)
            except (httpx.HTTPError, ValueError, KeyError) as exc:  # the turn is not recorded
                print(f"error: {exc}", file=sys.stderr)
        memory.on_session_end(agent.messages[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
