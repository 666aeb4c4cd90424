"""The official ``hindsight-client`` on a dedicated event-loop thread, with hard deadlines.

``hindsight-client`` is asynchronous (aiohttp). Its aiohttp session belongs to the event
loop that first used it, so every call of this adapter runs on one loop owned by a daemon
thread (`LoopThread`); the caller waits for the result at most the request timeout (plus a
second), and a call that overstays is cancelled on the loop. The client's own capacity
retries (which honour ``Retry-After`` without a cap) are switched off: the kit's `Guard`
retries instead, with bounded back-off.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import re
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from hermes_memory_core.kit import (
    Failure,
    FailureKind,
    classify_common,
    kind_for_status,
    one_line,
    user_agent,
)
from hermes_memory_hindsight._config import HindsightSettings

__all__ = ["HindsightClient", "LoopThread", "Memory", "classify", "supports_append"]

logger = logging.getLogger("hermes_memory_hindsight")

T = TypeVar("T")

#: The first server version whose retain accepts ``update_mode="append"``.
APPEND_SINCE = (0, 5, 0)


class LoopThread:
    """One asyncio event loop on a daemon thread; `run` waits for a coroutine, bounded."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    def _ensure(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise RuntimeError("the Hindsight client is closed")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self.name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, factory: Callable[[], Awaitable[T]], timeout: float) -> T:
        """Run ``factory()`` on the loop and wait at most ``timeout`` seconds.

        :raises TimeoutError: the call took longer (it is cancelled on the loop).
        """
        loop = self._ensure()

        async def bounded() -> T:
            return await asyncio.wait_for(factory(), timeout)

        future = asyncio.run_coroutine_threadsafe(bounded(), loop)
        try:
            return future.result(timeout + 1.0)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer within {timeout:g} s") from None

    def close(self, last: Callable[[], Awaitable[Any]] | None, timeout: float) -> None:
        """Cancel what still runs, await ``last()`` (closing the client), stop the loop."""
        with self._lock:
            self._closed = True
            loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return

        async def finish() -> None:
            current = asyncio.current_task()
            others = [t for t in asyncio.all_tasks() if t is not current]
            for task in others:
                task.cancel()
            if others:
                await asyncio.wait(others, timeout=timeout)
            if last is not None:
                await asyncio.wait_for(last(), timeout)

        try:
            asyncio.run_coroutine_threadsafe(finish(), loop).result(timeout * 2 + 1.0)
        except Exception as exc:  # closing must never raise
            logger.debug("Hindsight client did not close cleanly: %s", exc)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        if not thread.is_alive():
            loop.close()


def classify(exc: BaseException, *, base_url: str = "") -> Failure:
    """Map what a ``hindsight-client`` call raised to the kit's `Failure` taxonomy."""
    where = f" ({base_url})" if base_url else ""
    status = getattr(exc, "status", None)
    if type(exc).__module__.startswith("hindsight_client_api") and isinstance(status, int):
        reason = one_line(getattr(exc, "body", None) or getattr(exc, "reason", None) or exc)
        if status == 0:
            return Failure(FailureKind.INVALID, f"Hindsight request not sent: {reason}")
        kind = kind_for_status(status)
        if kind is FailureKind.AUTH:
            message = (
                f"Hindsight rejected the credentials{where}: HTTP {status} {reason}. "
                "Check HINDSIGHT_API_KEY (or hindsight.api_key)."
            )
        else:
            message = f"Hindsight answered HTTP {status}{where}: {reason}"
        return Failure(kind, message, status)
    if type(exc).__module__.startswith("aiohttp"):
        import aiohttp

        if isinstance(exc, aiohttp.ServerTimeoutError):
            return Failure(FailureKind.TIMEOUT, f"Hindsight did not answer in time{where}")
        if isinstance(exc, aiohttp.ClientResponseError):
            return Failure(
                kind_for_status(exc.status), f"Hindsight{where}: {one_line(exc)}", exc.status
            )
        if isinstance(exc, aiohttp.ClientError):
            return Failure(
                FailureKind.CONNECTION, f"Cannot reach Hindsight{where}: {one_line(exc)}"
            )
    if isinstance(exc, TimeoutError):
        return Failure(
            FailureKind.TIMEOUT, f"Hindsight did not answer in time{where}: {one_line(exc)}"
        )
    common = classify_common(exc)
    if common is not None:
        return Failure(common.kind, f"Hindsight{where}: {common.message}", common.status)
    if type(exc).__name__ == "ValidationError":  # pydantic: an answer of an unexpected shape
        return Failure(
            FailureKind.OTHER,
            f"Hindsight sent an answer this client cannot read{where}: {one_line(exc, 200)}",
        )
    if isinstance(exc, ValueError):
        return Failure(FailureKind.INVALID, f"Invalid request for Hindsight: {one_line(exc)}")
    return Failure(
        FailureKind.OTHER, f"Hindsight call failed{where}: {type(exc).__name__}: {one_line(exc)}"
    )


def supports_append(version: str) -> bool:
    """Whether a server reporting ``version`` appends to a document on retain."""
    numbers = [int(n) for n in re.findall(r"\d+", version)[:3]]
    if not numbers:
        return False
    return tuple(numbers + [0] * (3 - len(numbers))) >= APPEND_SINCE


@dataclass(frozen=True)
class Memory:
    """One recalled memory: its text, kind (world/experience/observation) and when."""

    id: str
    text: str
    type: str = ""
    when: str = ""

    def as_json(self) -> dict[str, str]:
        """The tool-result shape."""
        out = {"id": self.id, "text": self.text}
        if self.type:
            out["type"] = self.type
        if self.when:
            out["when"] = self.when
        return out


class HindsightClient:
    """The calls this adapter makes, each bounded by ``settings.timeout``.

    Each method raises whatever the client library raised (classify it with `classify`);
    callers go through the provider's `Guard`.
    """

    def __init__(self, settings: HindsightSettings) -> None:
        self.settings = settings
        self.loop = LoopThread("hindsight-loop")
        self._sdk: Any = None
        self._sdk_lock = threading.Lock()
        self._append: bool | None = None

    @property
    def sdk(self) -> Any:
        """The ``hindsight_client.Hindsight`` instance, built (and the library imported,
        which takes a second or two) on first use, never in ``initialize``."""
        with self._sdk_lock:
            if self._sdk is None:
                from hindsight_client import Hindsight

                s = self.settings
                self._sdk = Hindsight(
                    base_url=s.base_url,
                    api_key=s.api_key or None,
                    timeout=s.timeout,
                    user_agent=user_agent("hermes-memory-hindsight"),
                    max_attempts=1,
                )
            return self._sdk

    def _run(self, factory: Callable[[], Awaitable[T]]) -> T:
        _ = self.sdk  # imported on the calling worker, not on the event loop
        return self.loop.run(factory, self.settings.timeout)

    def server_appends(self) -> bool:
        """Whether retain can append to a document (asks ``GET /version`` once).

        A server without ``/version`` (404) is an old one: no append.
        """
        if self._append is None:
            from hindsight_client_api.exceptions import ApiException

            try:
                version = self._run(self.sdk.aget_version)
                self._append = supports_append(str(version.api_version))
            except ApiException as exc:
                if exc.status != 404:
                    raise
                self._append = False
        return self._append

    def retain(
        self,
        content: str,
        *,
        document_id: str | None = None,
        append: bool = False,
        context: str | None = None,
        timestamp: str | None = None,
        metadata: dict[str, str] | None = None,
        retain_async: bool | None = None,
    ) -> Any:
        """Retain ``content`` into the bank (into ``document_id`` when given)."""
        s = self.settings
        background = s.retain_async if retain_async is None else retain_async
        return self._run(
            lambda: self.sdk.aretain(
                s.bank_id,
                content,
                timestamp=timestamp,
                context=context,
                document_id=document_id,
                metadata=metadata,
                update_mode="append" if append else None,
                retain_async=background,
            )
        )

    def recall(self, query: str, *, max_tokens: int, budget: str | None = None) -> list[Memory]:
        """Memories matching ``query``, best first."""
        s = self.settings
        answer = self._run(
            lambda: self.sdk.arecall(
                s.bank_id, query, max_tokens=max_tokens, budget=budget or s.budget
            )
        )
        out: list[Memory] = []
        for item in answer.results or []:
            text = " ".join(str(item.text or "").split())
            if text:
                when = item.occurred_start or item.mentioned_at or ""
                out.append(Memory(str(item.id), text, str(item.type or ""), str(when)))
        return out

    def reflect(self, query: str, *, budget: str | None = None, context: str | None = None) -> str:
        """Hindsight's synthesised answer to ``query`` from the bank."""
        s = self.settings
        answer = self._run(
            lambda: self.sdk.areflect(s.bank_id, query, budget=budget or s.budget, context=context)
        )
        return str(answer.text or "").strip()

    def close(self) -> None:
        """Cancel calls in flight, close the HTTP session and stop the loop (bounded)."""
        with self._sdk_lock:
            sdk = self._sdk
        self.loop.close(sdk.aclose if sdk is not None else None, timeout=2.0)
