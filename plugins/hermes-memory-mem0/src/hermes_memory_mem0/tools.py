"""Tool schemas the mem0 provider offers to the model (OpenAI function format)."""

from __future__ import annotations

from typing import Any

__all__ = ["TOOL_NAMES", "tool_schemas"]

TOOL_NAMES = ("mem0_search", "mem0_add", "mem0_update", "mem0_delete")


def tool_schemas(*, rerank_supported: bool) -> list[dict[str, Any]]:
    """The four mem0 tools; ``rerank`` is only offered where the backend supports it."""
    search_props: dict[str, Any] = {
        "query": {"type": "string", "description": "What to look for, in natural language."},
        "top_k": {
            "type": "integer",
            "description": "How many memories to return (1-50, default 10).",
            "minimum": 1,
            "maximum": 50,
        },
    }
    if rerank_supported:
        search_props["rerank"] = {
            "type": "boolean",
            "description": "Rerank results for relevance (slower; mem0 Platform only).",
        }
    return [
        {
            "name": "mem0_search",
            "description": (
                "Search long-term semantic memory (mem0) about the user: preferences, facts "
                "and past context from earlier conversations. Returns memories with ids."
            ),
            "parameters": {"type": "object", "properties": search_props, "required": ["query"]},
        },
        {
            "name": "mem0_add",
            "description": (
                "Store one durable fact about the user in mem0, verbatim (no rewriting). "
                "Use for stable preferences and facts, not for transient task state."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "content": {"type": "string", "description": "The fact to remember."}
                },
                "required": ["content"],
            },
        },
        {
            "name": "mem0_update",
            "description": "Replace the text of a mem0 memory (id from mem0_search).",
            "parameters": {
                "type": "object",
                "properties": {
                    "memory_id": {"type": "string", "description": "Id from mem0_search."},
                    "text": {"type": "string", "description": "The corrected memory text."},
                },
                "required": ["memory_id", "text"],
            },
        },
        {
            "name": "mem0_delete",
            "description": "Delete a mem0 memory that is wrong or obsolete (id from mem0_search).",
            "parameters": {
                "type": "object",
                "properties": {
                    "memory_id": {"type": "string", "description": "Id from mem0_search."}
                },
                "required": ["memory_id"],
            },
        },
    ]
