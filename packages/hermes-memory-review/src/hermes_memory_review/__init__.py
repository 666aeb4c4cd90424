"""The review nudge and the background memory review of hermes-memory.

`NudgeCounter` counts user turns since the last ``memory`` tool call; `run_review` replays a
conversation to the host's model (`ReviewModel`) with `REVIEW_PROMPT` and executes the
``memory`` calls it makes through a callback, bounded in turns and time and cancellable.
``hermes_memory_core.MemoryManager`` wires it in (``review_due``, ``run_review``). The model
call protocol (`ModelReply`, `ToolCall`, `parse_reply`, `accepts_cancel`) is shared with the
context compressor's summariser. Standard library only; this ``__all__`` is the whole public
surface.
"""

from hermes_memory_review._review import (
    BACKGROUND_REVIEW_ORIGIN,
    DEFAULT_NUDGE_INTERVAL,
    DEFAULT_REVIEW_MAX_TURNS,
    DEFAULT_REVIEW_TIMEOUT,
    REVIEW_PROMPT,
    ModelReply,
    NudgeCounter,
    ReviewAction,
    ReviewCoordinator,
    ReviewHandle,
    ReviewModel,
    ReviewResult,
    ToolCall,
    accepts_cancel,
    parse_reply,
    review_messages,
    run_review,
)

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
