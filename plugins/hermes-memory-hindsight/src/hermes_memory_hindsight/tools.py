"""The three tool schemas of the Hindsight adapter and the system-prompt paragraph."""

from __future__ import annotations

from typing import Any

__all__ = ["PROMPT", "TOOL_NAMES", "TOOL_SCHEMAS"]

PROMPT = (
    "Long-term memory (Hindsight): memories matching the user's message may appear in a "
    "memory-context block. Use hindsight_recall to search them, hindsight_reflect for a "
    "reasoned answer drawn from them, and hindsight_retain to keep a durable fact."
)

_BUDGET = {
    "type": "string",
    "enum": ["low", "mid", "high"],
    "description": "How much effort the server spends (default from hindsight.budget).",
}

TOOL_SCHEMAS: tuple[dict[str, Any], ...] = (
    {
        "name": "hindsight_retain",
        "description": (
            "Store a durable fact, preference or decision in long-term memory (Hindsight). "
            "Write it as a self-contained sentence."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "content": {"type": "string", "description": "What to remember."},
                "context": {
                    "type": "string",
                    "description": "Optional: where it comes from or what it is about.",
                },
            },
            "required": ["content"],
        },
    },
    {
        "name": "hindsight_recall",
        "description": "Search long-term memory (Hindsight) for facts and past events.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for."},
                "max_results": {
                    "type": "integer",
                    "description": "How many memories to return (1-50, default 10).",
                },
                "budget": _BUDGET,
            },
            "required": ["query"],
        },
    },
    {
        "name": "hindsight_reflect",
        "description": (
            "Ask long-term memory (Hindsight) a question: it reasons over everything it "
            "holds and answers in prose."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "The question."},
                "context": {"type": "string", "description": "Optional extra context."},
                "budget": _BUDGET,
            },
            "required": ["query"],
        },
    },
)

TOOL_NAMES = frozenset(s["name"] for s in TOOL_SCHEMAS)
