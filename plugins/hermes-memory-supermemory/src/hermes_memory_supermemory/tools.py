"""The four tool schemas of the Supermemory adapter and the system-prompt paragraph."""

from __future__ import annotations

from typing import Any

__all__ = ["PROMPT", "TOOL_NAMES", "TOOL_SCHEMAS"]

PROMPT = (
    "Long-term memory (Supermemory): memories matching the user's message, and a short "
    "profile of the user, may appear in a memory-context block. Use supermemory_search to "
    "look further, supermemory_profile for the whole profile, supermemory_save to keep a "
    "durable fact and supermemory_forget to drop one that is wrong or outdated."
)

TOOL_SCHEMAS: tuple[dict[str, Any], ...] = (
    {
        "name": "supermemory_save",
        "description": (
            "Store a durable fact, preference or decision in long-term memory (Supermemory). "
            "Write it as a self-contained sentence."
        ),
        "parameters": {
            "type": "object",
            "properties": {"content": {"type": "string", "description": "What to remember."}},
            "required": ["content"],
        },
    },
    {
        "name": "supermemory_search",
        "description": "Search long-term memory (Supermemory) for facts and past context.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for."},
                "limit": {
                    "type": "integer",
                    "description": "How many memories to return (1-50, default 10).",
                },
            },
            "required": ["query"],
        },
    },
    {
        "name": "supermemory_forget",
        "description": (
            "Forget memories in Supermemory: one by its id (from supermemory_search), or "
            "those matching a description. Use preview to see what a description matches "
            "without forgetting anything."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The id of one memory to forget."},
                "query": {
                    "type": "string",
                    "description": "A description of the memories to forget (instead of id).",
                },
                "preview": {
                    "type": "boolean",
                    "description": "With query: only list what would be forgotten.",
                },
            },
        },
    },
    {
        "name": "supermemory_profile",
        "description": (
            "Read the profile Supermemory keeps of the user: stable facts and current context."
        ),
        "parameters": {"type": "object", "properties": {}},
    },
)

TOOL_NAMES = frozenset(s["name"] for s in TOOL_SCHEMAS)
