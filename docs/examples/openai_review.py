"""Run hermes-memory's background review with any OpenAI-compatible chat endpoint.

Works with OpenAI, vLLM, llama.cpp's server, Ollama (``/v1``), LM Studio, LiteLLM, ...:
anything that serves ``POST /v1/chat/completions`` with tool calling.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import httpx


def openai_review_model(
    base_url: str,
    model: str,
    *,
    api_key: str | None = None,
    timeout: float = 60.0,
) -> Any:
    """A `hermes_memory_review.ReviewModel` that calls ``<base_url>/v1/chat/completions``.

    ``api_key`` defaults to ``$OPENAI_API_KEY`` (none is sent when neither is set).
    """
    key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    url = base_url.rstrip("/") + "/v1/chat/completions"

    def review_model(
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        cancel: threading.Event | None = None,
    ) -> dict[str, Any]:
        if cancel is not None and cancel.is_set():
            raise RuntimeError("review cancelled")
        response = httpx.post(
            url,
            json={"model": model, "messages": messages, "tools": tools, "tool_choice": "auto"},
            headers=headers,
            timeout=timeout,
        )
        response.raise_for_status()
        reply: dict[str, Any] = response.json()
        return reply  # a chat-completion response: the review reads choices[0].message

    return review_model


def main() -> None:
    """Review a short conversation and print what was saved or staged."""
    from hermes_memory_core import MemoryManager

    conversation = [
        {"role": "user", "content": "Answer in British English, please; I'm Priya."},
        {"role": "assistant", "content": "Understood, Priya — British English from now on."},
    ]
    llm = openai_review_model(
        os.environ.get("OPENAI_BASE_URL", "https://api.openai.com"),
        os.environ.get("REVIEW_MODEL", "gpt-4o-mini"),
    )
    with MemoryManager.from_config() as memory:
        memory.initialize_all("review-example")
        handle = memory.run_review(llm, conversation, background=False)
        result = handle.result
        print(f"review {result.status} after {result.turns} model call(s)")
        for action in result.saved:
            print("saved:", action.arguments)
        for pending_id in result.staged:
            print("staged for a person:", pending_id, "(hermes-memory memory pending)")


if __name__ == "__main__":
    main()
