"""`ContextCompressor`: keep a conversation inside the model's context window, as Hermes does.

When the prompt reaches ``threshold × context_window`` tokens, the conversation is cut in
three: the leading system message(s) (kept), the recent *tail* (kept: the most recent
messages within ``target_ratio × threshold_tokens`` tokens, never fewer than
``protect_last_n``), and the *middle*, which the host's model summarises into one message
that says it is a summary of the earlier conversation. A tool call and its results always
stay on the same side of the cut. At the next compression the previous summary is part of
the middle: the model is asked to update it with the new messages.

A summariser that fails, returns nothing or does not answer within ``timeout`` seconds
leaves the messages unchanged (`CompressionResult.error` says why): nothing is ever lost.

With a `hermes_memory_core.MemoryManager`, providers first see the messages about to be
dropped (``on_pre_compress``; what they return goes to the summariser), then the session
archive ends the session with ``end_reason = "compression"`` and continues in a new session
(``parent_session_id`` = the old one, next lineage title ``"x #2"``) that holds the
compressed conversation; `CompressionResult.session_id` is its id.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_memory_context._compression_config import read_compression_settings
from hermes_memory_context._handoff import continue_in_archive
from hermes_memory_context._summarizer import SummaryError, ask_for_summary, summary_request
from hermes_memory_context._tokens import (
    TokenCounter,
    cached_counter,
    default_token_counter,
    message_tokens,
)

__all__ = [
    "DEFAULT_SUMMARY_TIMEOUT",
    "SUMMARY_PREFIX",
    "CompressionResult",
    "ContextCompressor",
    "is_summary_message",
]

logger = logging.getLogger(__name__)

#: How a compression summary message starts (``hermes_memory_sessions`` recognises it too).
SUMMARY_PREFIX = "[CONTEXT SUMMARY]"
#: Prefixes of summaries written by Hermes Agent (imported sessions).
_HERMES_PREFIXES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")
_SUMMARY_HEADER = (
    f"{SUMMARY_PREFIX} This is a summary of the earlier part of this conversation, written "
    "when its messages were compressed to fit the context window. It is background, not a "
    "new request: continue from the messages that follow it."
)
#: Seconds the summariser may take when ``compression.timeout`` is not set.
DEFAULT_SUMMARY_TIMEOUT = 120.0
#: Largest summary asked for, in tokens (Hermes' ceiling).
_SUMMARY_MAX_TOKENS = 12_000
#: Smallest summary budget, in tokens, whatever the window.
_SUMMARY_MIN_TOKENS = 64
_TRUNCATED = "\n…[summary cut to fit the context window]"


def is_summary_message(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` is a compression summary (ours, or one Hermes Agent wrote)."""
    content = message.get("content")
    return isinstance(content, str) and content.startswith((SUMMARY_PREFIX, *_HERMES_PREFIXES))


def _summary_body(message: Mapping[str, Any]) -> str:
    """The summary text of a summary message, without our header."""
    content = str(message.get("content") or "")
    if content.startswith(_SUMMARY_HEADER):
        return content[len(_SUMMARY_HEADER) :].strip()
    return content


@dataclass
class CompressionResult:
    """What `ContextCompressor.compress` did.

    :ivar messages: the conversation to send from now on (the input, unchanged, when
        nothing was compressed).
    :ivar summary: the summary text (``""`` when nothing was compressed).
    :ivar compressed: how many messages the summary message replaced (0: none; a previous
        summary counts as one of them).
    :ivar session_id: the continuation session in the archive (with a manager that has one),
        else None.
    :ivar error: why nothing was compressed (``""`` on success); also set, with the
        compression kept, when the archive could not be updated.
    :ivar tokens_before: prompt tokens of the input messages.
    :ivar tokens_after: prompt tokens of `messages`.
    """

    messages: list[dict[str, Any]]
    summary: str = ""
    compressed: int = 0
    session_id: str | None = None
    error: str = ""
    tokens_before: int = 0
    tokens_after: int = 0


class ContextCompressor:
    """Summarise the middle of a conversation when it fills too much of the context window.

    :param context_window: the model's context window, in tokens.
    :param threshold: compress when the prompt reaches this share of the window (0–1].
    :param target_ratio: tokens of recent messages kept: this share of
        ``threshold × context_window`` (0–1]; Hermes clamps it to 0.10–0.80, so do we.
    :param protect_last_n: at least this many recent messages are never compressed.
    :param summarize: the host's model, called as the background review calls it:
        ``summarize(messages, tools)`` with OpenAI chat messages and ``tools=[]``; returns a
        `hermes_memory_core.ModelReply`, an assistant message dict or a chat-completion dict.
    :param count_tokens: ``count_tokens(text) -> int``; default `default_token_counter`
        (tiktoken when installed, else `estimate_tokens`, which counts CJK characters one
        token each).
    :param timeout: seconds the summariser may take before the compression is given up.
    :param enabled: `should_compress` answers False when off (``compress`` still works: a
        manual ``/compress``).
    :raises ValueError: an unusable setting.
    """

    def __init__(
        self,
        *,
        context_window: int,
        threshold: float = 0.5,
        target_ratio: float = 0.2,
        protect_last_n: int = 20,
        summarize: Callable[..., Any],
        count_tokens: TokenCounter | None = None,
        timeout: float = DEFAULT_SUMMARY_TIMEOUT,
        enabled: bool = True,
    ) -> None:
        if isinstance(context_window, bool) or not isinstance(context_window, int):
            raise ValueError(f"context_window must be a number of tokens, got {context_window!r}")
        if context_window < 256:
            raise ValueError(f"context_window must be at least 256 tokens, got {context_window}")
        for name, value in (("threshold", threshold), ("target_ratio", target_ratio)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
                raise ValueError(f"{name} must be a number above 0 and at most 1, got {value!r}")
        if isinstance(protect_last_n, bool) or not isinstance(protect_last_n, int):
            raise ValueError(f"protect_last_n must be an integer, got {protect_last_n!r}")
        if protect_last_n < 0:
            raise ValueError(f"protect_last_n must be 0 or more, got {protect_last_n}")
        if not callable(summarize):
            raise TypeError("summarize must be a callable: summarize(messages, tools) -> reply")
        if count_tokens is not None and not callable(count_tokens):
            raise TypeError("count_tokens must be a callable: count_tokens(text) -> int")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if not math.isfinite(timeout):
            raise ValueError("timeout must be finite")
        self.context_window = context_window
        self.threshold = float(threshold)
        self.target_ratio = min(0.8, max(0.1, float(target_ratio)))
        self.protect_last_n = protect_last_n
        self.summarize = summarize
        self.timeout = float(timeout)
        self.enabled = bool(enabled)
        self._count = cached_counter(count_tokens or default_token_counter())

    @classmethod
    def from_config(
        cls,
        home: str | Path | None = None,
        *,
        context_window: int,
        summarize: Callable[..., Any],
        count_tokens: TokenCounter | None = None,
    ) -> ContextCompressor:
        """A compressor with the ``compression:`` settings of ``<home>/config.yaml``
        (``enabled``, ``threshold``, ``target_ratio``, ``protect_last_n``, ``timeout``).

        ``home`` defaults to ``$HERMES_HOME`` or ``~/.hermes``; a missing file or section
        gives Hermes' defaults.

        :raises hermes_memory_core.ConfigError: a malformed file or a value of the wrong type.
        """
        settings = read_compression_settings(home)
        return cls(
            context_window=context_window,
            threshold=settings.threshold,
            target_ratio=settings.target_ratio,
            protect_last_n=settings.protect_last_n,
            summarize=summarize,
            count_tokens=count_tokens,
            timeout=settings.timeout,
            enabled=settings.enabled,
        )

    # ------------------------------------------------------------------ measuring
    @property
    def threshold_tokens(self) -> int:
        """Prompt tokens at which `should_compress` answers True."""
        return int(self.context_window * self.threshold)

    @property
    def tail_budget(self) -> int:
        """Tokens of recent messages kept (at least `protect_last_n` messages are kept)."""
        return int(self.threshold_tokens * self.target_ratio)

    @property
    def summary_budget(self) -> int:
        """Most tokens a summary message may take: 5 % of the window, at most 12,000."""
        return max(_SUMMARY_MIN_TOKENS, min(_SUMMARY_MAX_TOKENS, self.context_window // 20))

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by the compressor's counter."""
        return int(self._count(text))

    def count_messages(self, messages: Sequence[Mapping[str, Any]]) -> int:
        """Prompt tokens of chat messages (text plus a few tokens per message)."""
        return sum(message_tokens(m, self._count) for m in messages)

    def should_compress(self, messages: Sequence[Mapping[str, Any]]) -> bool:
        """Whether the prompt reached `threshold_tokens` (always False when disabled)."""
        return self.enabled and self.count_messages(messages) >= self.threshold_tokens

    # ------------------------------------------------------------------ compressing
    def compress(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        manager: Any = None,
        session_id: str | None = None,
    ) -> CompressionResult:
        """Replace the middle of ``messages`` with a summary (see the module docstring).

        :param messages: the conversation in OpenAI chat format (not modified).
        :param manager: a `hermes_memory_core.MemoryManager`: its providers' ``on_pre_compress``
            text goes to the summariser, and its session archive continues the conversation
            in a new session (`CompressionResult.session_id`).
        :param session_id: the session being compressed (default: the manager's current one).
        :returns: a `CompressionResult`; on failure its ``messages`` are the input's and
            ``error`` says why. Never raises for a failing summariser.
        """
        original = [dict(m) for m in messages]
        sizes = [message_tokens(m, self._count) for m in original]
        before = sum(sizes)
        unchanged = CompressionResult(messages=original, tokens_before=before, tokens_after=before)
        body = 0
        while body < len(original) and original[body].get("role") == "system":
            body += 1
        previous: str | None = None
        start = body
        if start < len(original) and is_summary_message(original[start]):
            previous = _summary_body(original[start])
            start += 1
        tail = self._tail_start(original, sizes, start)
        middle = original[start:tail]
        if not middle:
            unchanged.error = (
                "nothing to compress: the protected recent messages are the whole conversation"
            )
            return unchanged
        notes = ""
        if manager is not None:
            try:
                notes = str(manager.on_pre_compress(middle) or "")
            except Exception as exc:  # a closed manager: the compression goes on without notes
                logger.warning("on_pre_compress failed before compression: %s", exc)
        request = summary_request(
            middle, previous_summary=previous, notes=notes, max_tokens=self.summary_budget
        )
        try:
            summary = ask_for_summary(self.summarize, request, self.timeout)
        except SummaryError as exc:
            logger.warning("context compression skipped: %s", exc)
            unchanged.error = str(exc)
            return unchanged
        summary = self._fit_summary(summary)
        kept = original[tail:]
        summary_message = {"role": self._summary_role(kept), "content": self._wrap(summary)}
        result_messages = [*original[:body], summary_message, *kept]
        after = self.count_messages(result_messages)
        if after >= before:
            unchanged.error = "the summary would not make the conversation shorter"
            return unchanged
        result = CompressionResult(
            messages=result_messages,
            summary=summary,
            compressed=tail - body,
            tokens_before=before,
            tokens_after=after,
        )
        if manager is not None:
            try:
                result.session_id = continue_in_archive(manager, session_id, result_messages)
            except Exception as exc:
                result.error = f"compressed, but the session archive was not updated: {exc}"
                logger.warning("%s", result.error)
        return result

    def _tail_start(self, messages: list[dict[str, Any]], sizes: list[int], start: int) -> int:
        """Index of the first message kept: the recent messages within `tail_budget` tokens,
        at least `protect_last_n` of them, never starting inside a tool call's results."""
        budget = self.tail_budget
        used = 0
        index = len(messages)
        while index > start:
            size = sizes[index - 1]
            kept = len(messages) - index
            if kept >= self.protect_last_n and used + size > budget:
                break
            used += size
            index -= 1
        # A tool result needs the assistant message that called it: keep that one too.
        while start < index < len(messages) and messages[index].get("role") == "tool":
            index -= 1
        return index

    def _fit_summary(self, summary: str) -> str:
        """The summary, cut at the end when its message would exceed `summary_budget`."""
        budget = self.summary_budget
        header = message_tokens({"content": self._wrap("")}, self._count)
        if header + self.count_tokens(summary) <= budget:
            return summary
        low, high = 0, len(summary)
        while low < high:  # longest prefix that fits with the marker
            mid = (low + high + 1) // 2
            if header + self.count_tokens(summary[:mid] + _TRUNCATED) <= budget:
                low = mid
            else:
                high = mid - 1
        return summary[:low].rstrip() + _TRUNCATED

    @staticmethod
    def _wrap(summary: str) -> str:
        return f"{_SUMMARY_HEADER}\n\n{summary}"

    @staticmethod
    def _summary_role(kept: Sequence[Mapping[str, Any]]) -> str:
        """``"user"``, or ``"assistant"`` when the kept messages start with the user's (two
        messages of one role in a row are refused by some APIs)."""
        if kept and kept[0].get("role") == "user":
            return "assistant"
        return "user"
