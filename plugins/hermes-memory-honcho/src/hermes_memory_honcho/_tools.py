"""The five ``honcho_*`` tools: arguments checked on the caller's thread, the network part
on a small pool with a deadline (``honcho.tool_timeout``)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any

from hermes_memory_core import first_threat_message, tool_error, tool_result
from hermes_memory_core.kit import (
    CallFailed,
    FailureKind,
    Unavailable,
    check_tool_call,
    choice_arg,
    int_arg,
    optional_text,
    required_text,
)
from hermes_memory_honcho._config import ID_PATTERN, REASONING_LEVELS
from hermes_memory_honcho._schemas import TOOL_NAMES

if TYPE_CHECKING:
    from hermes_memory_honcho._client import HonchoClient

__all__ = ["HonchoTools"]

logger = logging.getLogger("hermes_memory_honcho")


class HonchoTools:
    """Runs tool calls against ``client`` for the session ``session()`` names."""

    def __init__(
        self, client: HonchoClient, session: Callable[[], str], writable: Callable[[], bool]
    ) -> None:
        self.client = client
        self.session = session
        self.writable = writable
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def close(self) -> None:
        """Stop the pool (calls in flight end on their own)."""
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
            self.writable = lambda: False

    def handle(self, tool_name: str, args: Any) -> str:
        """One tool call; always a JSON string, errors as ``{"error": …}``."""
        problem = check_tool_call(tool_name, args, TOOL_NAMES)
        if problem:
            return tool_error(problem)
        guard = self.client.guard
        if guard.is_open:
            return tool_error(
                "Honcho is temporarily unavailable (circuit open after repeated failures; "
                f"retry in {guard.retry_in():.0f}s). Last error: {guard.detail}"
            )
        try:
            job = self._job(tool_name, args)
        except ValueError as exc:
            return tool_error(f"{tool_name}: {exc}")
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="honcho")
            pool = self._pool
        started, timeout = time.monotonic(), self.client.cfg.tool_timeout
        try:
            return pool.submit(job).result(timeout=timeout)
        except RuntimeError:
            return tool_error("Honcho is not available: the provider was shut down")
        except FutureTimeout:
            return tool_error(f"Honcho did not answer within {timeout:g}s; try again later.")
        except Unavailable:
            return tool_error("Honcho is temporarily unavailable (circuit open).")
        except CallFailed as exc:
            return tool_error(f"Honcho {tool_name} failed: {exc.failure.message}")
        except Exception as exc:
            logger.warning("Honcho %s failed unexpectedly", tool_name, exc_info=True)
            elapsed = time.monotonic() - started
            return tool_error(f"Honcho {tool_name} failed after {elapsed:.1f}s: {exc}")

    # ----------------------------------------------------------------- arguments
    def _peer(self, args: dict[str, Any]) -> str:
        raw = args.get("peer")
        if raw is None or raw == "" or raw == "user":
            return self.client.user_id
        if raw == "ai":
            return self.client.ai_id
        if not isinstance(raw, str) or not ID_PATTERN.match(raw):
            raise ValueError("'peer' must be 'user', 'ai' or a peer id of [a-zA-Z0-9_-]")
        return raw

    def _check_writable(self, texts: list[str]) -> None:
        if not self.writable():
            raise ValueError("writing to Honcho is disabled outside the primary agent")
        for text in texts:
            message = first_threat_message(text, scope="strict")
            if message:
                raise ValueError(message)

    def _job(self, tool: str, args: dict[str, Any]) -> Callable[[], str]:
        """Validate ``args`` now (ValueError) and return the network part as a callable."""
        target = self._peer(args)
        if tool == "honcho_profile":
            card = args.get("card")
            if card is not None:
                if not isinstance(card, list) or not all(isinstance(c, str) for c in card):
                    raise ValueError("'card' must be a list of strings")
                card = [c.strip() for c in card if c.strip()]
                self._check_writable(card)
            return lambda: self._profile(target, card)
        if tool == "honcho_search":
            query = required_text(args, "query")
            max_tokens = int_arg(args, "max_tokens", 800, low=50, high=2000)
            return lambda: self._search(query, target, max_tokens)
        if tool == "honcho_reasoning":
            query = required_text(args, "query")
            default = self.client.cfg.dialectic_reasoning_level
            level = choice_arg(args, "reasoning_level", REASONING_LEVELS, default)
            return lambda: self._reasoning(query, target, level)
        if tool == "honcho_context":
            focus = optional_text(args, "query")
            return lambda: self._context(focus, target)
        conclusion, delete_id = args.get("conclusion"), args.get("delete_id")
        has_c = isinstance(conclusion, str) and bool(conclusion.strip())
        has_d = isinstance(delete_id, str) and bool(delete_id.strip())
        if has_c == has_d:
            raise ValueError("give exactly one of 'conclusion' (text) or 'delete_id'")
        if isinstance(conclusion, str) and has_c:
            self._check_writable([conclusion])
            return lambda: self._conclude(conclusion.strip(), target)
        assert isinstance(delete_id, str)
        return lambda: self._forget(delete_id.strip())

    # ----------------------------------------------------------------- network parts
    def _peer_kw(self, target: str) -> dict[str, Any]:
        return {} if target == self.client.ai_id else {"target": target}

    def _profile(self, target: str, card: list[str] | None) -> str:
        _, _, ai = self.client.ensure(self.session())
        kw = self._peer_kw(target)
        if card is not None:
            stored = self.client.call("peer.set_card", lambda: ai.set_card(card, **kw))
            return tool_result({"peer": target, "card": list(stored or card), "updated": True})
        got = self.client.call("peer.get_card", lambda: ai.get_card(**kw)) or []
        if not got:
            hint = (
                "No card yet: Honcho builds it from conversations over time; "
                "pass 'card' to set one."
            )
            return tool_result({"peer": target, "card": [], "hint": hint})
        return tool_result({"peer": target, "card": list(got)})

    def _search(self, query: str, target: str, max_tokens: int) -> str:
        self.client.ensure(self.session())
        honcho = self.client.sdk()
        limit = max(3, min(20, max_tokens // 100))
        try:
            found = self.client.call(
                "search",
                lambda: honcho.search(query, filters={"peer_perspective": target}, limit=limit),
            )
        except CallFailed as exc:
            if exc.failure.trips_breaker:
                raise
            peer = self.client.peers.get(target) or self.client.peer(target)
            found = self.client.call("peer.search", lambda: peer.search(query, limit=limit))
        budget, results = max_tokens * 4, []
        for msg in found or []:
            content = str(getattr(msg, "content", ""))
            if len(content) > budget:
                content = content[: max(0, budget - 1)] + "…"
            budget -= len(content)
            results.append(
                {
                    "content": content,
                    "peer": getattr(msg, "peer_id", ""),
                    "session": getattr(msg, "session_id", ""),
                    "created_at": str(getattr(msg, "created_at", "") or ""),
                }
            )
            if budget <= 0:
                break
        if not results:
            return tool_result({"result": "No matching messages found.", "count": 0})
        return tool_result({"results": results, "count": len(results)})

    def _reasoning(self, query: str, target: str, level: str) -> str:
        _, _, ai = self.client.ensure(self.session())
        kw = self._peer_kw(target)
        answer = self.client.call("peer.chat", lambda: ai.chat(query, reasoning_level=level, **kw))
        if not isinstance(answer, str) or not answer.strip():
            return tool_result({"result": "Honcho has no answer to that yet.", "peer": target})
        return tool_result({"answer": answer.strip(), "peer": target})

    def _context(self, query: str | None, target: str) -> str:
        session, _, _ = self.client.ensure(self.session())
        kw: dict[str, Any] = {"peer_target": target, "tokens": self.client.cfg.context_tokens}
        if target != self.client.ai_id:
            kw["peer_perspective"] = self.client.ai_id
        if query:
            kw["search_query"] = query
        ctx = self.client.call("session.context", lambda: session.context(summary=True, **kw))
        recent = [
            {"peer": m.peer_id, "content": m.content}
            for m in sorted(ctx.messages or [], key=lambda m: str(m.created_at or ""))[-5:]
        ]
        return tool_result(
            {
                "session": session.id,
                "summary": ctx.summary.content if ctx.summary else "",
                "representation": ctx.peer_representation or "",
                "card": list(ctx.peer_card or []),
                "recent_messages": recent,
            }
        )

    def _conclude(self, conclusion: str, target: str) -> str:
        key = self.session()
        _, _, ai = self.client.ensure(key)
        created = self.client.call(
            "conclusions.create",
            lambda: ai.conclusions_of(target).create([{"content": conclusion, "session_id": key}]),
        )
        ids = [getattr(c, "id", "") for c in created or []]
        return tool_result({"stored": True, "id": ids[0] if ids else "", "conclusion": conclusion})

    def _forget(self, conclusion_id: str) -> str:
        if not ID_PATTERN.match(conclusion_id):
            return tool_error(f"Conclusion not found: {conclusion_id}")
        _, user, ai = self.client.ensure(self.session())
        try:
            self.client.call(
                "conclusions.delete", lambda: ai.conclusions_of(user).delete(conclusion_id)
            )
        except CallFailed as exc:
            if exc.failure.kind is FailureKind.NOT_FOUND:
                return tool_error(f"Conclusion not found: {conclusion_id}")
            raise
        return tool_result({"deleted": conclusion_id})
