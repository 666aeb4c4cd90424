"""OpenAI function schemas of the Honcho tools (handlers: `hermes_memory_honcho._tools`)."""

from __future__ import annotations

from typing import Any

__all__ = ["PROMPT_CONTEXT", "PROMPT_HYBRID", "TOOL_NAMES", "TOOL_SCHEMAS"]

#: System-prompt text in ``context`` recall mode (no tools).
PROMPT_CONTEXT = (
    "Honcho memory is active: what it has learned about the user is added to "
    "your context automatically."
)
#: System-prompt text when the tools are offered.
PROMPT_HYBRID = (
    "Honcho memory is active: it models the user across conversations. Use "
    "honcho_profile / honcho_context for what it knows, honcho_search for past "
    "messages, honcho_reasoning to ask it a question, honcho_conclude to record a "
    "durable fact about the user."
)

_PEER = {
    "type": "string",
    "description": "Whose model to use: 'user' (default), 'ai', or a peer id.",
}

TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "name": "honcho_profile",
        "description": (
            "Read the user's peer card (short list of key facts Honcho keeps about them), "
            "or replace it by passing 'card'."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "peer": _PEER,
                "card": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "New card entries; replaces the whole card.",
                },
            },
            "required": [],
        },
    },
    {
        "name": "honcho_search",
        "description": (
            "Search past conversation messages stored in Honcho (all sessions) for a "
            "word or phrase. Returns matching messages with their session."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for."},
                "max_tokens": {
                    "type": "integer",
                    "description": "Budget of the answer in tokens (default 800, max 2000).",
                },
                "peer": _PEER,
            },
            "required": ["query"],
        },
    },
    {
        "name": "honcho_reasoning",
        "description": (
            "Ask Honcho a natural-language question about the user; Honcho reasons over "
            "everything it has learned and answers in prose."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "The question."},
                "reasoning_level": {
                    "type": "string",
                    "enum": ["minimal", "low", "medium", "high", "max"],
                    "description": "Depth of reasoning (default from configuration).",
                },
                "peer": _PEER,
            },
            "required": ["query"],
        },
    },
    {
        "name": "honcho_context",
        "description": (
            "Get the current session's context from Honcho: summary, the user's "
            "representation and card, and the last few messages."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "Optional topic to focus the representation on.",
                },
                "peer": _PEER,
            },
            "required": [],
        },
    },
    {
        "name": "honcho_conclude",
        "description": (
            "Record a durable conclusion about the user in Honcho ('conclusion'), or delete "
            "one by id ('delete_id'). Give exactly one of the two."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "conclusion": {"type": "string", "description": "The fact to store."},
                "delete_id": {"type": "string", "description": "Id of a conclusion to delete."},
                "peer": _PEER,
            },
            "required": [],
        },
    },
]

TOOL_NAMES: frozenset[str] = frozenset(s["name"] for s in TOOL_SCHEMAS)
