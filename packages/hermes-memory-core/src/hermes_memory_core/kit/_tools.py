"""Tools declared as a table, run through one dispatch template.

A provider lists its tools once — each a `Tool`: the JSON schema the model sees, the name of
the provider method that runs it, and whether it writes — in a `ToolTable`. The table
answers ``get_tool_schemas`` and runs ``handle_tool_call`` the same way for every adapter:

1. an unknown tool, or arguments that are not a JSON object, are refused
   (`check_tool_call`);
2. a provider that is not ready (not configured, not initialised, shut down) answers
   ``"<Service> is not available: <reason>"``;
3. a writing tool in a read-only agent context (not the primary agent) is refused before
   any argument is read or any request made;
4. the method runs and its ``dict`` becomes the tool's JSON result;
5. what it raised becomes a tool error: a `ValueError` (a bad argument, see
   `hermes_memory_core.kit._toolargs`) as ``"<tool>: <message>"``; the `Guard`'s
   `Unavailable` and `CallFailed` (already counted and on the health record) in the
   table's wording; a `Queued` write as ``{"queued": true, "note": …}``.

::

    TOOLS = ToolTable(
        Tool(SEARCH_SCHEMA, "_search_tool"),
        Tool(REMEMBER_SCHEMA, "_remember_tool", writes=True),
        service="Notes",
    )

    class NotesProvider(RemoteProvider):
        def get_tool_schemas(self):
            return TOOLS.schemas()

        def handle_tool_call(self, tool_name, args, **kwargs):
            ready = (self._client, self._guard) if self._client else None
            return TOOLS.dispatch(self, tool_name, args, context=ready,
                                  writes=self._writes_enabled)

        def _search_tool(self, args, client, guard):
            query = required_text(args, "query")
            return {"results": guard.call("search", lambda: client.search(query))}

Every answer is one JSON string; nothing a tool raises escapes as a traceback except a
programming error in the provider itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from hermes_memory_core._toolresult import tool_error, tool_result
from hermes_memory_core.kit._failures import CallFailed, Unavailable
from hermes_memory_core.kit._guard import Guard
from hermes_memory_core.kit._toolargs import check_tool_call

__all__ = ["READ_ONLY", "Queued", "Tool", "ToolTable", "call_or_queue", "tool_schema"]

T = TypeVar("T")

#: The default refusal of a writing tool outside the primary agent.
READ_ONLY = "this agent context is read-only (only the primary agent writes)"
#: The reason given when a provider that is not ready names none.
NOT_READY = "the provider is not initialised or was shut down"


def tool_schema(
    name: str,
    description: str,
    properties: Mapping[str, Any] | None = None,
    required: tuple[str, ...] | list[str] = (),
) -> dict[str, Any]:
    """A tool schema in the function-calling format every backend accepts.

    ``{"name", "description", "parameters": {"type": "object", "properties", "required"}}``
    """
    params = {"type": "object", "properties": dict(properties or {}), "required": list(required)}
    return {"name": name, "description": description, "parameters": params}


@dataclass(frozen=True)
class Tool:
    """One tool of a provider.

    :param schema: the JSON schema the model sees (its ``name`` is the tool's name).
    :param run: what runs it: the name of a provider method, called as
        ``provider.method(args, *context)``, or a function called as
        ``run(provider, args, *context)`` (tools kept in a module of their own); it returns
        the result as a ``dict`` (or an already serialised JSON string).
    :param writes: the tool changes what the service holds: refused outside the primary
        agent.
    :param read_only: the refusal message for this tool (default: the table's).
    """

    schema: Mapping[str, Any]
    run: str | Callable[..., Any]
    writes: bool = False
    read_only: str = ""

    @property
    def name(self) -> str:
        """The tool's name, from its schema."""
        return str(self.schema["name"])


class Queued(Exception):
    """A write tool could not reach the service and queued its write instead (see
    `call_or_queue`); the tool answers ``{"queued": true, "note": …}``."""

    def __init__(self, note: str) -> None:
        super().__init__(note)
        self.note = note


def call_or_queue(
    guard: Guard, operation: str, fn: Callable[[], T], queue: Callable[[], None]
) -> T:
    """Run a write tool's call now; when the service cannot be reached, ``queue`` the write
    for the provider's worker (sent later, spooled at shutdown) and raise `Queued`.

    A failure that says the request itself was wrong (``not_found``, ``invalid``) is not
    queued: it is raised as `CallFailed`, so the model learns its write was refused.

    :raises Queued: the write was queued.
    :raises CallFailed: the service refused the request.
    """
    try:
        return guard.call(operation, fn)
    except CallFailed as exc:
        if not exc.failure.trips_breaker:
            raise
        queue()
        note = f"{guard.label} is unreachable; saved and sent later ({exc.failure.message})"
        raise Queued(note) from exc
    except Unavailable as exc:
        queue()
        raise Queued(f"saved and sent later ({exc})") from exc


class ToolTable:
    """A provider's tools and the one template that runs them (see the module's text).

    :param tools: the tools, in the order the model is shown them.
    :param service: the service's name in ``"<service> is not available: …"``.
    :param read_only: the refusal of a writing tool outside the primary agent.
    :param unavailable_error: the wording of a call the `Guard` refused (`Unavailable`);
        ``{tool}`` and ``{message}`` are filled in.
    :param failed_error: the wording of a call that failed (`CallFailed`), likewise.
    :param not_ready: the wording of a provider that is not ready; ``{service}`` and
        ``{reason}`` are filled in.
    """

    def __init__(
        self,
        *tools: Tool,
        service: str,
        read_only: str = READ_ONLY,
        unavailable_error: str = "{message}",
        failed_error: str = "{message}",
        not_ready: str = "{service} is not available: {reason}",
    ) -> None:
        self.service = service
        self.not_ready = not_ready
        self.read_only = read_only
        self.unavailable_error = unavailable_error
        self.failed_error = failed_error
        self._tools = {tool.name: tool for tool in tools}
        if len(self._tools) != len(tools):
            raise ValueError("two tools of one table share a name")

    @property
    def names(self) -> frozenset[str]:
        """The tools' names."""
        return frozenset(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        """The schemas, as ``get_tool_schemas`` returns them (copies: callers may mutate)."""
        return [dict(tool.schema) for tool in self._tools.values()]

    def dispatch(
        self,
        owner: object,
        tool_name: str,
        args: Any,
        *,
        context: tuple[Any, ...] | None,
        reason: str = "",
        writes: bool = True,
    ) -> str:
        """Run ``tool_name`` on ``owner``; always one JSON string.

        :param owner: the provider whose methods the tools name.
        :param context: passed to the tool's method after ``args`` (the client and the
            guard, say); None when the provider is not ready.
        :param reason: why it is not ready (default `NOT_READY`).
        :param writes: whether this agent context may write.
        """
        problem = check_tool_call(tool_name, args, self._tools)
        if problem:
            return tool_error(problem)
        if context is None:
            why = reason or NOT_READY
            return tool_error(self.not_ready.format(service=self.service, reason=why))
        tool = self._tools[tool_name]
        try:
            if tool.writes and not writes:
                raise ValueError(tool.read_only or self.read_only)
            if isinstance(tool.run, str):
                answer = getattr(owner, tool.run)(args, *context)
            else:
                answer = tool.run(owner, args, *context)
        except Queued as exc:
            return tool_result({"queued": True, "note": exc.note})
        except ValueError as exc:
            return tool_error(f"{tool_name}: {exc}")
        except Unavailable as exc:
            return tool_error(self.unavailable_error.format(tool=tool_name, message=exc))
        except CallFailed as exc:
            return tool_error(self.failed_error.format(tool=tool_name, message=exc))
        return answer if isinstance(answer, str) else tool_result(answer)
