"""The review nudge and the background memory review.

A model in the middle of a task rarely stops to save what it learned about the user. Hermes
Agent therefore counts user turns since the last ``memory`` tool call and, every
``memory.nudge_interval`` turns, runs a *background review* after the reply has been
delivered: the conversation is replayed to the model with a prompt asking what is worth
remembering, and the model may call the ``memory`` tool. This module holds the pieces;
`hermes_memory_core.MemoryManager` wires them in (``review_due``, ``run_review``,
``review_prompt``, ``review_messages``).

**The counter** (`NudgeCounter`). Each `MemoryManager.on_turn_start` is a user turn. When the
count reaches the interval a review is *due* and the count starts again; any ``memory``
tool call clears both. On resume the host passes the number of earlier user turns
(``prior_user_turns=`` to ``initialize_all`` or ``on_session_switch``) and the count
continues at ``prior_user_turns % interval``. Interval 0 turns the nudge off.

**The model** (`ReviewModel`). This library has no model of its own: the host passes a
callable ``model(messages, tools)`` where ``messages`` are OpenAI-style chat messages and
``tools`` the ``memory`` tool in OpenAI ``tools=`` format. It returns a `ModelReply` — or,
for convenience, an OpenAI assistant message dict or a whole chat-completion response (see
`parse_reply`). A callable that also accepts a ``cancel`` keyword receives a
`threading.Event` that is set when the review is cancelled, so it can abort its request.

**The run** (`run_review`). The conversation plus `REVIEW_PROMPT` goes to the model; its
``memory`` calls are executed with origin ``"background_review"`` (an unattended write: the
builtin store applies adds but stages replace/remove as proposals for a person), the results
are appended, and the model is asked again — at most ``max_turns`` model calls and
``timeout`` seconds in all. Cancelling (the next live turn starts) stops the run within
a fraction of a second even while the model call is still blocked: the call is abandoned on
its daemon thread and nothing it returns is executed.
"""

from __future__ import annotations

import inspect
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast

__all__ = [
    "BACKGROUND_REVIEW_ORIGIN",
    "DEFAULT_NUDGE_INTERVAL",
    "DEFAULT_REVIEW_MAX_TURNS",
    "DEFAULT_REVIEW_TIMEOUT",
    "REVIEW_PROMPT",
    "ModelReply",
    "NudgeCounter",
    "ReviewAction",
    "ReviewCoordinator",
    "ReviewHandle",
    "ReviewModel",
    "ReviewResult",
    "ToolCall",
    "accepts_cancel",
    "parse_reply",
    "review_messages",
    "run_review",
]

logger = logging.getLogger("hermes_memory_review")

#: The write origin of an unattended background review (the builtin store's gate keys on it).
BACKGROUND_REVIEW_ORIGIN = "background_review"
#: User turns between reviews when ``memory.nudge_interval`` is not set (Hermes' default).
DEFAULT_NUDGE_INTERVAL = 10
#: Model calls one review may make (``memory.review_max_turns``).
DEFAULT_REVIEW_MAX_TURNS = 8
#: Seconds one review may take in all (``memory.review_timeout``).
DEFAULT_REVIEW_TIMEOUT = 120.0
_MEMORY_TOOL = "memory"

#: The request appended to the replayed conversation (our words, the reference's content).
REVIEW_PROMPT = (
    "Look back over the conversation above and decide whether anything in it deserves to "
    "be kept in long-term memory. Pay attention to:\n"
    "1. The user as a person: who they are, what they want, their preferences, their "
    "situation and personal details they shared.\n"
    "2. How the user expects you to work with them: their working style, what they "
    "corrected, and how they want you to behave or answer.\n"
    "If something stands out, save it with the memory tool as a short declarative fact. "
    "If nothing is worth keeping, reply 'Nothing to save.' and stop."
)


# ---------------------------------------------------------------------- model interface
@dataclass(frozen=True)
class ToolCall:
    """One tool call the model asked for.

    :param name: the tool's name (only ``"memory"`` is executed in a review).
    :param arguments: the argument object, or its JSON text as OpenAI sends it.
    :param id: the call's id, echoed as ``tool_call_id`` in the tool result message
        (generated when empty).
    """

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str = ""


@dataclass(frozen=True)
class ModelReply:
    """What a `ReviewModel` returns: the assistant's text and the tool calls it made."""

    content: str = ""
    tool_calls: Sequence[ToolCall] = ()


class ReviewModel(Protocol):
    """The host's model, as the review calls it.

    ``messages`` are OpenAI chat messages (``{"role": "system"|"user"|"assistant"|"tool",
    "content": ..., "tool_calls"?: [...], "tool_call_id"?: ...}``); ``tools`` is the
    ``memory`` tool in OpenAI ``tools=`` format (``[{"type": "function", "function":
    {...}}]``). Return a `ModelReply`, an OpenAI assistant message dict, or a whole
    chat-completion response dict. Raising ends the review with status ``"failed"``.
    Optionally accept ``cancel: threading.Event`` to abort a request when the review is
    cancelled.
    """

    def __call__(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> ModelReply | Mapping[str, Any]: ...


def parse_reply(reply: Any) -> ModelReply:
    """Normalise what a `ReviewModel` returned into a `ModelReply`.

    Accepts a `ModelReply`; an OpenAI assistant message (``{"content": str | None,
    "tool_calls": [{"id", "type": "function", "function": {"name", "arguments"}}]}``); or a
    chat-completion response (``{"choices": [{"message": {...}}]}``, first choice).

    :raises ValueError: anything else, or a tool call without a name.
    """
    if isinstance(reply, ModelReply):
        return reply
    if not isinstance(reply, Mapping):
        raise ValueError(f"the model returned a {type(reply).__name__}, not a reply")
    choices = reply.get("choices")
    if isinstance(choices, list):
        if not choices or not isinstance(choices[0], Mapping):
            raise ValueError("the model's response has no choices")
        message = choices[0].get("message")
        if not isinstance(message, Mapping):
            raise ValueError("the model's first choice has no message")
        reply = message
    content = reply.get("content")
    if isinstance(content, list):  # content parts
        content = "".join(
            str(part.get("text", "")) for part in content if isinstance(part, Mapping)
        )
    calls = []
    for raw in reply.get("tool_calls") or ():
        if not isinstance(raw, Mapping):
            raise ValueError("a tool call of the model is not an object")
        function = raw.get("function") if isinstance(raw.get("function"), Mapping) else raw
        assert isinstance(function, Mapping)
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError("a tool call of the model has no name")
        arguments = function.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping | str):
            raise ValueError(f"the arguments of tool call {name!r} are not an object")
        calls.append(ToolCall(name=name, arguments=arguments, id=str(raw.get("id") or "")))
    return ModelReply(content=content if isinstance(content, str) else "", tool_calls=calls)


# ---------------------------------------------------------------------- the counter
class NudgeCounter:
    """User turns since the last ``memory`` tool call; says when a review is due.

    :param interval: user turns between reviews; ``0`` disables the nudge.
    :raises ValueError: a negative or non-integer interval.
    """

    def __init__(self, interval: int = DEFAULT_NUDGE_INTERVAL) -> None:
        if isinstance(interval, bool) or not isinstance(interval, int) or interval < 0:
            raise ValueError(f"nudge_interval must be an integer >= 0, got {interval!r}")
        self.interval = interval
        self._turns = 0
        self._due = False
        self._lock = threading.Lock()

    @property
    def turns_since_memory(self) -> int:
        """User turns counted since the last memory call or review (modulo the interval)."""
        return self._turns

    @property
    def due(self) -> bool:
        """Whether ``interval`` user turns passed without a memory call (never with 0)."""
        return self._due

    def user_turn(self, *, memory_tool: bool = True) -> bool:
        """Count one user turn; returns `due`. Not counted without the memory tool."""
        with self._lock:
            if self.interval <= 0 or not memory_tool:
                return self._due
            self._turns += 1
            if self._turns >= self.interval:
                self._turns = 0
                self._due = True
            return self._due

    def memory_used(self) -> None:
        """A ``memory`` tool call happened: start counting again, nothing is due."""
        with self._lock:
            self._turns = 0
            self._due = False

    def consume(self) -> bool:
        """Take the due flag (a review is starting); returns whether it was set."""
        with self._lock:
            due, self._due = self._due, False
            return due

    def hydrate(self, prior_user_turns: int) -> None:
        """Resume a session that already had ``prior_user_turns`` user turns.

        :raises ValueError: a negative or non-integer count.
        """
        if (
            isinstance(prior_user_turns, bool)
            or not isinstance(prior_user_turns, int)
            or prior_user_turns < 0
        ):
            raise ValueError(f"prior_user_turns must be an integer >= 0, got {prior_user_turns!r}")
        with self._lock:
            self._turns = prior_user_turns % self.interval if self.interval > 0 else 0
            self._due = False


# ---------------------------------------------------------------------- results
ReviewStatus = Literal["running", "completed", "cancelled", "timeout", "max_turns", "failed"]


@dataclass
class ReviewAction:
    """One tool call of the review and its JSON result."""

    name: str
    arguments: Any
    result: str

    @property
    def outcome(self) -> dict[str, Any]:
        """The parsed result (``{}`` when it is not a JSON object)."""
        try:
            value = json.loads(self.result)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}


@dataclass
class ReviewResult:
    """How a review ended.

    ``status``: ``completed`` (the model stopped calling tools), ``cancelled``, ``timeout``,
    ``max_turns``, or ``failed`` (the model raised or returned something unusable; see
    ``error``). ``turns`` counts model calls; ``actions`` the tool calls executed;
    ``reply`` is the model's last text.
    """

    status: ReviewStatus = "running"
    turns: int = 0
    actions: list[ReviewAction] = field(default_factory=list)
    reply: str = ""
    error: str = ""

    @property
    def saved(self) -> list[ReviewAction]:
        """Memory calls that changed memory at once (not staged, not refused)."""
        return [
            a
            for a in self.actions
            if a.outcome.get("success") is True and not a.outcome.get("staged")
        ]

    @property
    def staged(self) -> list[str]:
        """``pending_id`` of every proposal the review staged."""
        return [str(a.outcome["pending_id"]) for a in self.actions if a.outcome.get("pending_id")]


class ReviewHandle:
    """A review in progress (or finished): wait for it, cancel it, read its result."""

    def __init__(self) -> None:
        self._cancel = threading.Event()
        self._wake = threading.Event()
        self._done = threading.Event()
        self._result = ReviewResult()
        self.thread: threading.Thread | None = None

    def cancel(self) -> None:
        """Ask the review to stop; returns at once. No tool call starts after this."""
        self._cancel.set()
        self._wake.set()

    @property
    def cancelled(self) -> bool:
        """Whether `cancel` was called."""
        return self._cancel.is_set()

    @property
    def done(self) -> bool:
        """Whether the review has ended (whatever the status)."""
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the review ended (True) or ``timeout`` seconds passed (False)."""
        return self._done.wait(timeout)

    @property
    def result(self) -> ReviewResult:
        """The result so far (``status == "running"`` until `done`)."""
        return self._result


# ---------------------------------------------------------------------- running
def review_messages(
    messages: Sequence[Mapping[str, Any]], prompt: str = REVIEW_PROMPT
) -> list[dict[str, Any]]:
    """The conversation to replay (recall blocks stripped) followed by ``prompt`` as a user
    message — what a host without a model callable sends to its own model for a review."""
    replay: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(cast(object, message), Mapping):
            continue  # untyped callers
        copy = dict(message)
        content = copy.get("content")
        if isinstance(content, str) and "<memory-context" in content.lower():
            from hermes_memory_guard import sanitize_context  # loads the scanner

            copy["content"] = sanitize_context(content)
        replay.append(copy)
    replay.append({"role": "user", "content": prompt})
    return replay


class _Stop(Exception):
    def __init__(self, status: ReviewStatus, error: str = "") -> None:
        super().__init__(error or status)
        self.status = status
        self.error = error


def accepts_cancel(model: Callable[..., Any]) -> bool:
    """Whether a host model callable takes a ``cancel`` keyword (an event set at timeout)."""
    try:
        parameters = inspect.signature(model).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "cancel" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def _ask(
    model: Callable[..., Any],
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    handle: ReviewHandle,
    deadline: float,
    with_cancel: bool,
) -> ModelReply:
    """One model call on its own daemon thread, abandoned on cancel or at the deadline."""
    box: dict[str, Any] = {}
    handle._wake.clear()
    if handle.cancelled:
        raise _Stop("cancelled")

    def call() -> None:
        try:
            extra = {"cancel": handle._cancel} if with_cancel else {}
            box["reply"] = model([dict(m) for m in messages], tools, **extra)
        except BaseException as exc:  # a daemon thread: report, never propagate
            box["error"] = exc
        finally:
            handle._wake.set()

    thread = threading.Thread(target=call, name="hermes-memory-review-model", daemon=True)
    thread.start()
    while "reply" not in box and "error" not in box:
        if handle.cancelled:
            raise _Stop("cancelled")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _Stop("timeout", "the review ran out of time (memory.review_timeout)")
        handle._wake.wait(remaining)
    if handle.cancelled:
        raise _Stop("cancelled")
    if "error" in box:
        error = box["error"]
        raise _Stop("failed", f"the model failed: {type(error).__name__}: {error}")
    try:
        return parse_reply(box["reply"])
    except ValueError as exc:
        raise _Stop("failed", str(exc)) from None


def _arguments(raw: Mapping[str, Any] | str) -> tuple[Any, str | None]:
    if isinstance(raw, Mapping):
        return dict(raw), None
    try:
        value = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return raw, "the arguments are not valid JSON"
    if not isinstance(value, dict):
        return value, "the arguments must be a JSON object"
    return value, None


def run_review(
    model: ReviewModel | Callable[..., Any],
    messages: Sequence[Mapping[str, Any]],
    *,
    tools: list[dict[str, Any]],
    execute: Callable[[str, dict[str, Any]], str],
    max_turns: int = DEFAULT_REVIEW_MAX_TURNS,
    timeout: float = DEFAULT_REVIEW_TIMEOUT,
    handle: ReviewHandle | None = None,
    prompt: str = REVIEW_PROMPT,
) -> ReviewResult:
    """Run one review on the calling thread and return how it ended.

    :param model: the host's `ReviewModel`.
    :param messages: the conversation to replay (OpenAI chat messages).
    :param tools: the tools offered, in OpenAI format (normally just ``memory``).
    :param execute: runs one ``memory`` call: ``execute(name, arguments) -> JSON str``; it
        must attach the write origin itself (`MemoryManager.run_review` passes
        ``origin="background_review"``). Other tool names are answered with an error
        without calling it.
    :param max_turns: model calls at most.
    :param timeout: seconds for the whole review.
    :param handle: a `ReviewHandle` whose `ReviewHandle.cancel` stops this run.
    """
    handle = handle if handle is not None else ReviewHandle()
    result = handle._result
    deadline = time.monotonic() + timeout
    conversation = review_messages(messages, prompt)
    with_cancel = accepts_cancel(model)
    try:
        while True:
            if result.turns >= max_turns:
                raise _Stop("max_turns")
            reply = _ask(model, conversation, tools, handle, deadline, with_cancel)
            result.turns += 1
            result.reply = reply.content
            if not reply.tool_calls:
                result.status = "completed"
                break
            calls = [
                (call, call.id or f"call_{result.turns}_{n}")
                for n, call in enumerate(reply.tool_calls, start=1)
            ]
            conversation.append(
                {
                    "role": "assistant",
                    "content": reply.content or None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {
                                "name": call.name,
                                "arguments": call.arguments
                                if isinstance(call.arguments, str)
                                else json.dumps(call.arguments, ensure_ascii=False),
                            },
                        }
                        for call, call_id in calls
                    ],
                }
            )
            for call, call_id in calls:
                if handle.cancelled:
                    raise _Stop("cancelled")
                arguments, problem = _arguments(call.arguments)
                if call.name != _MEMORY_TOOL:
                    problem = f"only the memory tool is available in a review, not '{call.name}'"
                if problem is not None:
                    output = json.dumps({"success": False, "error": problem})
                else:
                    output = execute(call.name, arguments)
                result.actions.append(ReviewAction(call.name, arguments, output))
                conversation.append(
                    {"role": "tool", "tool_call_id": call_id, "name": call.name, "content": output}
                )
    except _Stop as stop:
        result.status = stop.status
        result.error = stop.error
    except Exception as exc:  # execute() failing, e.g. the manager was shut down
        result.status = "failed"
        result.error = f"{type(exc).__name__}: {exc}"
        logger.warning("background memory review failed: %s", result.error)
    finally:
        handle._done.set()
    if result.status in ("timeout", "max_turns", "failed"):
        logger.info("background memory review ended: %s %s", result.status, result.error)
    return result


# ---------------------------------------------------------------------- the manager's part
class ReviewCoordinator:
    """The nudge counter and the one review that may be running, for `MemoryManager`.

    :param nudge_interval: ``memory.nudge_interval`` (0 disables the nudge).
    :param review_timeout: ``memory.review_timeout`` seconds.
    :param review_max_turns: ``memory.review_max_turns`` model calls.
    :raises ValueError: an unusable value.
    """

    def __init__(
        self,
        *,
        nudge_interval: int = DEFAULT_NUDGE_INTERVAL,
        review_timeout: float = DEFAULT_REVIEW_TIMEOUT,
        review_max_turns: int = DEFAULT_REVIEW_MAX_TURNS,
    ) -> None:
        self.nudge = NudgeCounter(nudge_interval)
        try:
            timeout = float(review_timeout)
        except (TypeError, ValueError):
            timeout = -1.0
        if isinstance(review_timeout, bool) or not 0 < timeout < float("inf"):
            raise ValueError(
                f"review_timeout must be a positive number of seconds, got {review_timeout!r}"
            )
        if (
            isinstance(review_max_turns, bool)
            or not isinstance(review_max_turns, int)
            or review_max_turns < 1
        ):
            raise ValueError(f"review_max_turns must be an integer >= 1, got {review_max_turns!r}")
        self.timeout = timeout
        self.max_turns = review_max_turns
        self._current: ReviewHandle | None = None
        self._lock = threading.Lock()

    @property
    def current(self) -> ReviewHandle | None:
        """The last review started (running or finished), if any."""
        return self._current

    def on_turn_start(self, *, memory_tool: bool) -> None:
        """A live user turn begins: cancel a running review (without waiting), count it."""
        self.cancel()
        self.nudge.user_turn(memory_tool=memory_tool)

    def on_memory_call(self) -> None:
        """Any ``memory`` tool call resets the count."""
        self.nudge.memory_used()

    def cancel(self) -> None:
        """Cancel the running review, if any (returns at once)."""
        with self._lock:
            current = self._current
        if current is not None and not current.done:
            current.cancel()

    def start(
        self,
        model: ReviewModel | Callable[..., Any],
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: list[dict[str, Any]],
        execute: Callable[[str, dict[str, Any]], str],
        background: bool = True,
    ) -> ReviewHandle:
        """Start a review (cancelling one still running); see `run_review`."""
        if not callable(model):
            raise TypeError(
                "run_review needs a model callable: model(messages, tools) -> reply; "
                "without one, send review_messages(messages) to your own model"
            )
        handle = ReviewHandle()
        with self._lock:
            previous, self._current = self._current, handle
        if previous is not None and not previous.done:
            previous.cancel()
        self.nudge.consume()
        snapshot = [dict(m) for m in messages if isinstance(m, Mapping)]

        def body() -> None:
            run_review(
                model,
                snapshot,
                tools=tools,
                execute=execute,
                max_turns=self.max_turns,
                timeout=self.timeout,
                handle=handle,
            )

        if not background:
            body()
            return handle
        thread = threading.Thread(target=body, name="hermes-memory-review", daemon=True)
        handle.thread = thread
        try:
            thread.start()
        except RuntimeError as exc:
            handle._result.status = "failed"
            handle._result.error = f"no thread could be started: {exc}"
            handle._done.set()
        return handle
