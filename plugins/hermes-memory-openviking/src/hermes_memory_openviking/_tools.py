"""The six ``viking_*`` tools: their schemas, what each does, and the kit's `ToolTable` that
runs them (argument checks, read-only agent contexts, failures as JSON tool errors)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_memory_core import kit
from hermes_memory_openviking._client import check_uri

if TYPE_CHECKING:
    from hermes_memory_openviking._client import OpenVikingClient

__all__ = ["LEVELS", "TOOLS", "TOOL_NAMES", "TOOL_SCHEMAS", "ToolContext"]

LEVELS = ("full", "overview", "abstract")
Args = dict[str, Any]
Answer = dict[str, Any]


@dataclass(frozen=True)
class ToolContext:
    """What the tools get of their provider, and nothing else (the provider builds it)."""

    #: The viking:// directory browsed by default.
    memory_root: str
    #: The memory file's URI for a fact.
    memory_uri: Callable[[str], str]
    #: Queue a write for the provider's worker (sent later, spooled at shutdown).
    enqueue: Callable[[kit.Write], None]
    #: Note a fact the tools stored, so recall does not hand it back as news.
    stored: Callable[[str], None]


def _text(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


def _public(item: dict[str, Any]) -> dict[str, Any]:
    keys = ("uri", "context_type", "score", "abstract", "isDir", "name", "size")
    return {k: item[k] for k in keys if item.get(k) not in (None, "")}


def search(ctx: ToolContext, args: Args, client: OpenVikingClient, guard: kit.Guard) -> Answer:
    """Ranked memories, resources and skills, optionally under a ``scope`` URI."""
    query = kit.required_text(args, "query")
    limit = kit.int_arg(args, "limit", 8, low=1, high=20)
    scope = kit.optional_text(args, "scope")
    scope = check_uri(scope) if scope else ""
    found = guard.call("search", lambda: client.find(query, limit=limit, target_uri=scope))
    return {"results": [_public(i) for i in found[:limit]]}


def read(ctx: ToolContext, args: Args, client: OpenVikingClient, guard: kit.Guard) -> Answer:
    """One URI's full text (at most 20,000 characters), overview or abstract."""
    uri = check_uri(kit.required_text(args, "uri", max_chars=1000), min_depth=1)
    level = kit.choice_arg(args, "level", LEVELS, "full")
    route = "read" if level == "full" else level
    text = guard.call("read", lambda: client.read(uri, route))
    return {"uri": uri, "level": level, "content": kit.truncate_text(text, 20000)}


def browse(ctx: ToolContext, args: Args, client: OpenVikingClient, guard: kit.Guard) -> Answer:
    """A directory's entries (default: the memory root)."""
    uri = check_uri(kit.optional_text(args, "uri") or ctx.memory_root)
    entries = guard.call("browse", lambda: client.ls(uri))
    return {"uri": uri, "entries": [_public(e) for e in entries]}


def forget(ctx: ToolContext, args: Args, client: OpenVikingClient, guard: kit.Guard) -> Answer:
    """Delete one file; never a root or the top of a space (``min_depth=3``)."""
    uri = check_uri(kit.required_text(args, "uri", max_chars=1000), min_depth=3)
    guard.call("forget", lambda: client.remove(uri))
    return {"deleted": uri}


def add_resource(
    ctx: ToolContext, args: Args, client: OpenVikingClient, guard: kit.Guard
) -> Answer:
    """Ask OpenViking to import an http(s) URL (never a local file)."""
    url = kit.required_text(args, "url", max_chars=2000)
    if not url.startswith(("http://", "https://")) or any(c.isspace() for c in url):
        raise ValueError("'url' must be an http(s) URL (local files are not sent)")
    target = kit.optional_text(args, "to") or ""
    if target and not check_uri(target, min_depth=2).startswith("viking://resources/"):
        raise ValueError("'to' must be a viking://resources/... URI")
    answer = guard.call("add resource", lambda: client.add_resource(url, target))
    return {"accepted": True, "result": answer}


def remember(ctx: ToolContext, args: Args, client: OpenVikingClient, guard: kit.Guard) -> Answer:
    """Store a fact as a memory file now, or queue it while OpenViking is unreachable."""
    content = kit.required_text(args, "content", max_chars=8000)
    uri = ctx.memory_uri(content)
    write = {"op": "remember", "uri": uri, "content": content}
    try:
        kit.call_or_queue(
            guard, "remember", lambda: client.write(uri, content), lambda: ctx.enqueue(write)
        )
    except kit.CallFailed as exc:
        if exc.failure.status != 409:
            raise
        return {"stored": True, "uri": uri, "note": "already stored"}
    ctx.stored(content)
    return {"stored": True, "uri": uri}


_schema = kit.tool_schema
TOOLS = kit.ToolTable(
    kit.Tool(
        _schema(
            "viking_search",
            "Search OpenViking memories, resources and skills; "
            "ranked results with their viking:// URIs and summaries.",
            {
                "query": _text("What to look for."),
                "scope": _text("Optional viking:// URI to search under."),
                "limit": {"type": "integer", "description": "1-20 (default 8)."},
            },
            ["query"],
        ),
        search,
    ),
    kit.Tool(
        _schema(
            "viking_read",
            "Read one viking:// URI: the full text, its overview or its abstract.",
            {
                "uri": _text("The viking:// URI."),
                "level": {"type": "string", "enum": list(LEVELS), "description": "Default full."},
            },
            ["uri"],
        ),
        read,
    ),
    kit.Tool(
        _schema(
            "viking_browse",
            "List a viking:// directory (default the memory root).",
            {"uri": _text("The directory's viking:// URI.")},
            [],
        ),
        browse,
    ),
    kit.Tool(
        _schema(
            "viking_remember",
            "Store a fact, preference or decision in OpenViking as a memory file.",
            {"content": _text("The fact to remember.")},
            ["content"],
        ),
        remember,
        writes=True,
    ),
    kit.Tool(
        _schema(
            "viking_forget",
            "Delete one memory file by its viking:// URI (from "
            "viking_search or viking_browse); never a whole directory root.",
            {"uri": _text("The file's viking:// URI.")},
            ["uri"],
        ),
        forget,
        writes=True,
    ),
    kit.Tool(
        _schema(
            "viking_add_resource",
            "Ask OpenViking to import a web page, document or "
            "repository by its http(s) URL (processed in the background).",
            {
                "url": _text("The http(s) URL."),
                "to": _text("Optional target viking://resources/... URI."),
            },
            ["url"],
        ),
        add_resource,
        writes=True,
    ),
    service="OpenViking",
)
TOOL_SCHEMAS: tuple[dict[str, Any], ...] = tuple(TOOLS.schemas())
TOOL_NAMES = TOOLS.names
