"""The mem0 tools: their schemas (OpenAI function format) and `Mem0Tools`, which runs them
on the caller's thread (the model asked for them), bounded by the HTTP timeouts."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hermes_memory_core import first_threat_message, tool_error, tool_result
from hermes_memory_core.kit import (
    CallFailed,
    FailureKind,
    Unavailable,
    check_tool_call,
    int_arg,
    required_text,
)

if TYPE_CHECKING:
    from hermes_memory_mem0._connection import Connection

__all__ = ["TOOL_NAMES", "Mem0Tools", "tool_schemas"]

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


class Mem0Tools:
    """Runs ``mem0_*`` tool calls through ``conn`` for the user ``ids()`` names.

    :param ids: ``(user_id, agent_id)`` at call time.
    :param writable: whether this agent context may write.
    :param channel: the platform name stored with added facts.
    """

    def __init__(
        self,
        conn: Connection,
        ids: Callable[[], tuple[str, str]],
        writable: Callable[[], bool],
        channel: Callable[[], str],
    ) -> None:
        self.conn = conn
        self.ids = ids
        self.writable = writable
        self.channel = channel

    def handle(self, tool_name: str, args: Any) -> str:
        """One tool call; always a JSON string (errors as ``{"error": ...}``)."""
        problem = check_tool_call(tool_name, args, TOOL_NAMES)
        if problem:
            return tool_error(problem)
        try:
            if tool_name == "mem0_search":
                return self._search(args)
            if tool_name != "mem0_delete":
                text = required_text(args, "content" if tool_name == "mem0_add" else "text")
                blocked = first_threat_message(text, scope="strict")
                if blocked:
                    return tool_error(blocked)
            if not self.writable():
                return tool_error(f"{tool_name} is disabled for this agent context (read-only).")
            if tool_name == "mem0_add":
                return self._add(text)
            memory_id = required_text(args, "memory_id")
            if tool_name == "mem0_update":
                self._call(tool_name, lambda b: b.update(memory_id, text))
                return tool_result({"result": "Memory updated.", "memory_id": memory_id})
            self._call(tool_name, lambda b: b.delete(memory_id))
            return tool_result({"result": "Memory deleted.", "memory_id": memory_id})
        except ValueError as exc:
            return tool_error(f"{tool_name}: {exc}")
        except Unavailable as exc:
            return tool_error(str(exc))
        except CallFailed as exc:
            failure = exc.failure
            memory_id = str(args.get("memory_id") or "").strip()
            if failure.kind is FailureKind.NOT_FOUND and memory_id:
                return tool_error(f"Memory not found: {memory_id}")
            return tool_error(f"{tool_name} failed: {failure.message}", kind=failure.kind.value)

    def _call(self, what: str, fn: Callable[[Any], Any]) -> Any:
        return self.conn.call(what, fn, wait=self.conn.connect_wait())

    def _search(self, args: dict[str, Any]) -> str:
        query = required_text(args, "query")
        top_k = int_arg(args, "top_k", 10, low=1, high=50)
        settings = self.conn.settings
        rerank = bool(args.get("rerank", settings.rerank)) and settings.mode == "platform"
        user_id, _ = self.ids()
        results = self._call(
            "mem0_search", lambda b: b.search(query, user_id=user_id, top_k=top_k, rerank=rerank)
        )
        if not results:
            return tool_result({"result": "No relevant memories found.", "count": 0})
        items = [
            {"id": r.get("id"), "memory": r.get("memory"), "score": r.get("score")}
            for r in results[:top_k]
        ]
        return tool_result({"results": items, "count": len(items)})

    def _add(self, content: str) -> str:
        user_id, agent_id = self.ids()
        metadata = {"source": "hermes-tool", "channel": self.channel()}
        message = [{"role": "user", "content": content}]
        result = self._call(
            "mem0_add",
            lambda b: b.add(message, user_id=user_id, agent_id=agent_id, infer=False,
                            metadata=metadata),
        )  # fmt: skip
        if result.get("event_id") or str(result.get("status", "")).upper() == "PENDING":
            return tool_result(
                {"result": "Fact queued for storage.", "event_id": result.get("event_id")}
            )
        ids = [
            str(r["id"]) for r in result.get("results", []) if isinstance(r, dict) and r.get("id")
        ]
        payload: dict[str, Any] = {"result": "Fact stored."}
        if ids:
            payload["memory_ids"] = ids
        return tool_result(payload)
