"""Tool routing of a `MemoryManager` and the background review that uses it (internal)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from hermes_memory_core._dispatch import Outcome, Slot
from hermes_memory_core._egress import note_redaction, plain_str
from hermes_memory_core._manager_base import ManagerBase
from hermes_memory_core._provider import ToolSchema
from hermes_memory_core._toolresult import tool_error, tool_result

if TYPE_CHECKING:
    import hermes_memory_review as _review

logger = logging.getLogger("hermes_memory_core.manager")

MEMORY_TOOL_NAME = "memory"


class ManagerTools(ManagerBase):
    """Tools of every provider behind one router; the review loop (internal base class)."""

    # ----------------------------------------------------------------- tools
    def get_all_tool_schemas(self) -> list[ToolSchema]:
        """Every provider's tool schemas, first registration winning a name.

        Bare function schemas (``name``, ``description``, ``parameters``); convert them with
        `hermes_memory_core.to_openai_tools` or `hermes_memory_core.to_anthropic_tools`.
        """
        with self._lock:
            return self._tools.schemas()

    def get_all_tool_names(self) -> list[str]:
        """Names of every routed tool."""
        with self._lock:
            return self._tools.names()

    def has_tool(self, name: str) -> bool:
        """Whether some provider handles tool ``name``."""
        with self._lock:
            return self._tools.route(name) is not None

    def handle_tool_call(
        self, name: str, args: Mapping[str, Any] | str | None, **kwargs: Any
    ) -> str:
        """Run tool ``name`` and return its JSON string.

        ``args`` is the model's argument object (or its raw JSON string). An unknown tool,
        arguments that are not an object, a provider that raises, or an external provider
        that does not answer within ``tool_timeout`` all come back as ``{"error": ...}``.
        Curated-memory writes the tool made reach the external provider's `on_memory_write`
        (the local tier emits them as `hermes_memory_core.MemoryWrite` events).
        """
        with self._using("handle_tool_call"):
            with self._lock:
                slot = self._tools.route(name)
            if slot is None:
                return tool_error(f"No memory provider handles tool '{name}'")
            if name == MEMORY_TOOL_NAME:
                self._review.on_memory_call()
            parsed = _parse_args(name, args)
            if isinstance(parsed, str):
                return parsed
            clean_args = self._egress.scrub_tool_args(slot, parsed)
            outcome = self._dispatch.invoke(
                slot,
                "handle_tool_call",
                (name, clean_args),
                self._egress.scrub_kwargs(kwargs),
                kind="read",
                bound=self.tool_timeout,
                level=logging.WARNING,
                pass_all=True,
            )
            result = _tool_answer(name, slot, outcome, self.tool_timeout)
            if slot.local and outcome.status == "ok" and clean_args != parsed:
                result = note_redaction(result)
            return result

    # ----------------------------------------------------------------- review nudge
    @property
    def review_due(self) -> bool:
        """True once ``nudge_interval`` user turns (`on_turn_start` calls) passed without a
        ``memory`` tool call; cleared by a memory call or by `run_review`. Logic and
        details: `hermes_memory_review`."""
        return self._review.nudge.due

    def review_prompt(self) -> str:
        """The request a review appends to the conversation (`review.REVIEW_PROMPT`)."""
        from hermes_memory_review import REVIEW_PROMPT

        return REVIEW_PROMPT

    def review_messages(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``messages`` (recall blocks stripped) plus the review prompt, for a host that
        runs the review with its own model loop; it should pass ``origin=
        "background_review"`` to `handle_tool_call` for the memory calls that come back."""
        from hermes_memory_review import review_messages

        return review_messages(messages)

    def run_review(
        self,
        llm: _review.ReviewModel | Callable[..., Any],
        messages: list[dict[str, Any]],
        *,
        background: bool = True,
    ) -> _review.ReviewHandle:
        """Run the background memory review with the host's model callable.

        Call it after the reply was delivered (typically when `review_due`). ``llm(messages,
        tools)`` is a `hermes_memory_review.ReviewModel`; its ``memory`` calls run
        through `handle_tool_call` with ``origin="background_review"`` (the builtin store
        applies adds and stages replace/remove for a person). Bounded by
        ``review_max_turns`` model calls and ``review_timeout`` seconds; the next
        `on_turn_start` (or `shutdown_all`) cancels it. ``background=False`` runs it on the
        calling thread. Returns a `ReviewHandle` (``wait()``, ``cancel()``, ``result``).
        :raises ManagerClosedError: after `shutdown_all`.
        """
        from hermes_memory_review import BACKGROUND_REVIEW_ORIGIN

        with self._using("run_review"):
            schemas = [s for s in self.get_all_tool_schemas() if s.get("name") == MEMORY_TOOL_NAME]
        from hermes_memory_core._toolformats import to_openai_tools

        def execute(name: str, args: dict[str, Any]) -> str:
            return self.handle_tool_call(name, args, origin=BACKGROUND_REVIEW_ORIGIN)

        return self._review.start(
            llm, messages, tools=to_openai_tools(schemas), execute=execute, background=background
        )


def _parse_args(name: str, args: Mapping[str, Any] | str | None) -> dict[str, Any] | str:
    """The model's arguments as a dict, or the ``{"error": ...}`` answer for bad ones."""
    if args is None:
        return {}
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return tool_error(f"Arguments for tool '{name}' are not valid JSON")
    if not isinstance(cast(object, args), Mapping):
        return tool_error(f"Arguments for tool '{name}' must be a JSON object")
    return dict(cast(Mapping[str, Any], args))


#: An external provider's tool result longer than this is cut (recall is capped the same way).
MAX_EXTERNAL_TOOL_RESULT_CHARS = 32_000


def _tool_answer(name: str, slot: Slot, outcome: Outcome, tool_timeout: float) -> str:
    """The JSON string a tool call answers with, whatever the outcome: a result or an error
    that cannot be printed or serialised (too deep, a ``__str__`` that raises) becomes
    ``{"error": ...}``; an external provider's answer is bounded and threat-checked."""
    try:
        answer = _answer(name, slot, outcome, tool_timeout)
        answer.encode()  # a lone surrogate: the host could neither send nor print it
    except (Exception, SystemExit) as exc:  # a provider may break its contract in any way
        return tool_error(
            f"Memory tool '{name}' returned a result that cannot be serialised "
            f"({type(exc).__name__})"
        )
    return answer if slot.local else _untrusted_answer(name, slot, answer)


def _untrusted_answer(name: str, slot: Slot, answer: str) -> str:
    """An external provider's tool answer, capped and checked like its recall.

    The answer is the provider's data, never instructions: one that carries an
    exfiltration, tool-execution or injection payload is withheld (the ids are logged and
    named, the text is not shown); one over `MAX_EXTERNAL_TOOL_RESULT_CHARS` is cut and
    wrapped as ``{"result": <head>, "truncated": true, "original_chars": n}``.
    """
    from hermes_memory_guard import scan_untrusted

    size = len(answer)
    if size > MAX_EXTERNAL_TOOL_RESULT_CHARS:
        answer = tool_result(
            {
                "result": answer[:MAX_EXTERNAL_TOOL_RESULT_CHARS],
                "truncated": True,
                "original_chars": size,
            }
        )
    threats = scan_untrusted(answer)
    if threats:
        logger.warning(
            "memory provider %r: tool %r answered text flagged as %s; withheld",
            slot.name,
            name,
            ", ".join(threats),
        )
        return tool_error(
            f"Memory tool '{name}' answered with text the threat scan flags "
            f"({', '.join(threats)}); it was withheld"
        )
    return answer


def _safe_text(value: object) -> str:
    """``str(value)``, or its type name when printing it fails."""
    try:
        return plain_str(str(value))
    except (Exception, SystemExit):
        return type(value).__name__


def _answer(name: str, slot: Slot, outcome: Outcome, tool_timeout: float) -> str:
    if outcome.status == "failed":
        return tool_error(f"Memory tool '{name}' failed: {_safe_text(outcome.error)}")
    if outcome.status == "timeout":
        return tool_error(
            f"Memory tool '{name}' did not answer within {tool_timeout:g}s "
            f"(memory.tool_timeout); provider '{slot.name}' is skipped until it does"
        )
    if outcome.status != "ok":
        return tool_error(
            f"Memory tool '{name}' is unavailable: provider '{slot.name}' is not "
            "responding (a previous call is still running)"
        )
    result = outcome.value
    if isinstance(result, str):
        return plain_str(result)
    try:  # a provider may break its contract
        return json.dumps(result, ensure_ascii=False, default=_safe_text)
    except (TypeError, ValueError):
        return tool_error(f"Memory tool '{name}' returned a non-JSON result")
