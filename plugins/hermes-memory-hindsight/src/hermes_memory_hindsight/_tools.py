"""The three Hindsight tools (schemas, what each does, the kit's `ToolTable` that runs
them) and the system-prompt paragraph."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from hermes_memory_core import kit
from hermes_memory_hindsight._config import BUDGETS

if TYPE_CHECKING:
    from hermes_memory_hindsight._client import HindsightClient

__all__ = ["CURATED", "PROMPT", "TOOLS", "TOOL_NAMES", "TOOL_SCHEMAS", "ToolContext", "now"]

#: The ``context`` of a retained fact that did not come from a conversation.
CURATED = "a fact the user or the agent chose to keep (hermes curated memory)"
Args = dict[str, Any]


@dataclass(frozen=True)
class ToolContext:
    """What the tools get of their provider, and nothing else (the provider builds it)."""

    #: Note a fact the tools stored, so recall does not hand it back as news.
    stored: Callable[[str], None]


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


def now() -> str:
    """The time of a retain, as Hindsight stores it."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def retain(ctx: ToolContext, args: Args, client: HindsightClient, guard: kit.Guard) -> Any:
    """Retain one fact at once (synchronously on the server)."""
    content = kit.visible_text(args, "content", max_chars=20000)
    context = kit.optional_text(args, "context")
    metadata = {"source": "hermes-memory"}
    guard.call(
        "retain",
        lambda: client.retain(
            content,
            context=context or CURATED,
            timestamp=now(),
            metadata=metadata,
            retain_async=False,
        ),
    )
    ctx.stored(content)
    return {"result": "Retained.", "bank_id": client.settings.bank_id}


def recall(ctx: ToolContext, args: Args, client: HindsightClient, guard: kit.Guard) -> Any:
    """The memories matching ``query`` (at most ``max_results``)."""
    query = kit.visible_text(args, "query")
    limit = kit.int_arg(args, "max_results", 10, low=1, high=50)
    budget = kit.choice_arg(args, "budget", BUDGETS, client.settings.budget)
    tokens = client.settings.recall_max_tokens * 2
    found = guard.call("recall", lambda: client.recall(query, max_tokens=tokens, budget=budget))
    results = [m.as_json() for m in found[:limit]]
    if not results:
        return {"result": "No relevant memories found.", "count": 0}
    return {"results": results, "count": len(results)}


def reflect(ctx: ToolContext, args: Args, client: HindsightClient, guard: kit.Guard) -> Any:
    """Hindsight's reasoned answer to ``query``."""
    query = kit.visible_text(args, "query")
    budget = kit.choice_arg(args, "budget", BUDGETS, client.settings.budget)
    context = kit.optional_text(args, "context")
    answer = guard.call("reflect", lambda: client.reflect(query, budget=budget, context=context))
    return {"answer": answer or "Hindsight has nothing to say about this."}


_RUN = {"hindsight_retain": retain, "hindsight_recall": recall, "hindsight_reflect": reflect}
TOOLS = kit.ToolTable(
    *(kit.Tool(s, _RUN[s["name"]], writes=s["name"] == "hindsight_retain") for s in TOOL_SCHEMAS),
    service="Hindsight",
    read_only="this agent may not write memories",
    unavailable_error="{tool}: {message}",
    failed_error="{tool} failed: {message}",
)
TOOL_NAMES = TOOLS.names
