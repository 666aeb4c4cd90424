"""The four Supermemory tools (schemas, what each does, the kit's `ToolTable` that runs
them) and the system-prompt paragraph."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from hermes_memory_core import kit

if TYPE_CHECKING:
    from hermes_memory_supermemory._client import SupermemoryClient

__all__ = ["PROMPT", "SOURCE", "TOOLS", "TOOL_NAMES", "TOOL_SCHEMAS", "ToolContext", "now"]

#: Metadata stored with every document this adapter writes.
SOURCE = {"source": "hermes-memory"}
Args = dict[str, Any]


@dataclass(frozen=True)
class ToolContext:
    """What the tools get of their provider, and nothing else (the provider builds it)."""

    #: Note a fact the tools stored, so recall does not hand it back as news.
    stored: Callable[[str], None]


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


def now() -> str:
    """A document's date, as Supermemory stores it."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def save(ctx: ToolContext, args: Args, client: SupermemoryClient, guard: kit.Guard) -> Any:
    """Store one fact as a document of its own."""
    content = kit.visible_text(args, "content", max_chars=20000)
    metadata = {**SOURCE, "kind": "tool"}
    doc = guard.call("add", lambda: client.add(content, metadata=metadata, date=now()))
    ctx.stored(content)
    return {"result": "Saved.", "id": doc, "container_tag": client.namespace}


def search(ctx: ToolContext, args: Args, client: SupermemoryClient, guard: kit.Guard) -> Any:
    """The memories matching ``query`` (at most ``limit``)."""
    query = kit.visible_text(args, "query")
    limit = kit.int_arg(args, "limit", 10, low=1, high=50)
    found = guard.call("search", lambda: client.search(query, limit=limit))
    if not found:
        return {"result": "No relevant memories found.", "count": 0}
    return {"results": [f.as_json() for f in found], "count": len(found)}


def profile(ctx: ToolContext, args: Args, client: SupermemoryClient, guard: kit.Guard) -> Any:
    """The container's profile: stable facts and current context."""
    static, dynamic = guard.call("profile", client.profile)
    return {"static": static, "dynamic": dynamic, "container_tag": client.namespace}


def forget(ctx: ToolContext, args: Args, client: SupermemoryClient, guard: kit.Guard) -> Any:
    """Forget one memory by ``id``, or those matching ``query`` (``preview`` only lists)."""
    memory_id = kit.optional_text(args, "id") or ""
    wanted = kit.optional_text(args, "query") or ""
    memory_id = "" if kit.blank(memory_id) else memory_id
    wanted = "" if kit.blank(wanted) else wanted
    if bool(memory_id) == bool(wanted):
        raise ValueError("give exactly one of 'id' or 'query'")
    if memory_id:
        done = guard.call("forget", lambda: client.forget(memory_id))
        return {"forgotten": done["count"], "errors": done["errors"]}
    preview = args.get("preview", False)
    if not isinstance(preview, bool):
        raise ValueError("'preview' must be true or false")
    done = guard.call("forget", lambda: client.forget_matching(wanted, dry_run=preview))
    key = "would_forget" if preview else "forgotten"
    return {key: done["count"], "matches": done["matches"]}


_RUN = {
    "supermemory_save": save,
    "supermemory_search": search,
    "supermemory_forget": forget,
    "supermemory_profile": profile,
}
_REFUSED = {
    "supermemory_save": "this agent may not write memories",
    "supermemory_forget": "this agent may not forget memories",
}
TOOLS = kit.ToolTable(
    *(
        kit.Tool(
            s, _RUN[s["name"]], writes=s["name"] in _REFUSED, read_only=_REFUSED.get(s["name"], "")
        )
        for s in TOOL_SCHEMAS
    ),
    service="Supermemory",
    unavailable_error="{tool}: {message}",
    failed_error="{tool} failed: {message}",
)
TOOL_NAMES = TOOLS.names
