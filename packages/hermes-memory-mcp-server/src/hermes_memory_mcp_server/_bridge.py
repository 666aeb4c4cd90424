"""`MemoryBridge`: one `MemoryManager` for one server process, driven from async code.

The manager and its providers are synchronous and may block (file locks, SQLite, network
calls of an external provider). The bridge runs every manager call on one dedicated worker
thread, so the event loop that speaks MCP never stalls and providers see their calls one
at a time, always from the same thread (whatever the provider's own threading rules).
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from hermes_memory_core import MemoryManager, ToolSchema, tool_error
from hermes_memory_core.config import HermesConfig, load_config
from hermes_memory_core.kit import make_private_dirs
from hermes_memory_mcp_server._ids import new_session_id

__all__ = ["DEFAULT_TURN_GAP", "PLATFORM", "MemoryBridge", "ToolOutcome"]

logger = logging.getLogger(__name__)

PLATFORM = "mcp"
"""The ``platform`` passed to every provider's ``initialize``."""

DEFAULT_TURN_GAP = 20.0
"""Seconds of tool silence after which the next call counts as a new turn (see `MemoryBridge`)."""

_T = TypeVar("_T")


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool call produced: the JSON text, whether it failed, and the parsed payload."""

    text: str
    is_error: bool
    payload: Any = None


class MemoryBridge:
    """Own one `MemoryManager` built from ``<home>/config.yaml`` and call it off the event loop.

    Lifecycle: ``await bridge.start()`` builds the manager
    (`MemoryManager.from_config`), initialises every provider for a fresh session id
    (platform ``"mcp"``) and freezes the system-prompt snapshot; ``await bridge.call_tool``
    routes one call through `MemoryManager.handle_tool_call`; ``await bridge.aclose()``
    runs `MemoryManager.shutdown_all` and stops the worker thread.

    MCP has no notion of a conversation turn, yet providers count some things per turn
    (the memory tool caps consolidation failures per turn). The bridge starts a new turn
    (`MemoryManager.on_turn_start`) for the first call and for any call that comes more than
    ``turn_gap`` seconds after the previous one finished.

    **A home that does not exist** (a mistyped ``--home``) is not created by starting: the
    bridge serves an empty memory. Tool schemas come from the configured (not yet
    initialised) manager; ``session_search`` and calls of unknown tools are answered by a
    throw-away manager on an empty temporary directory; the first call of any other tool
    (the ``memory`` tool, even a ``remove``, and provider tools) creates the home, logs
    ``created new memory home at PATH`` as a warning and initialises the real manager.
    `home_created` tells whether that happened.

    :param home: the Hermes home directory (default ``$HERMES_HOME`` or ``~/.hermes``).
    :param session_id: the session id to initialise providers with (default: a fresh one).
    :param turn_gap: seconds of silence that start a new turn (default 20).
    :param manager_factory: builds the manager from ``home`` (default
        `MemoryManager.from_config`); for embedding a preconfigured manager.
    """

    def __init__(
        self,
        home: str | Path | None = None,
        *,
        session_id: str | None = None,
        turn_gap: float = DEFAULT_TURN_GAP,
        manager_factory: Callable[[str | Path | None], MemoryManager] | None = None,
    ) -> None:
        self.config: HermesConfig = load_config(home)
        self.home: Path = self.config.home
        self.session_id = session_id or new_session_id()
        self.turn_gap = float(turn_gap)
        self._factory = manager_factory or MemoryManager.from_config
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hermes-memory-mcp")
        self._manager: MemoryManager | None = None
        self._snapshot = ""
        self._turn = 0
        self._last_call_end: float | None = None
        self._closed = False
        self._pending_home = False
        self._empty: tuple[MemoryManager, Path] | None = None
        self.home_created = False
        """True once this bridge created the missing home directory (on the first write)."""

    # ----------------------------------------------------------------- lifecycle
    async def start(self) -> None:
        """Build and initialise the manager on the worker thread (idempotent)."""
        if self._manager is not None:
            return
        if self._closed:
            raise RuntimeError("MemoryBridge is closed")
        self._manager, self._snapshot = await self._run(self._build)

    def _build(self) -> tuple[MemoryManager, str]:
        manager = self._factory(self.home)
        if not self.home.exists():
            # Do not create a mistyped home just by starting: initialising the providers
            # would make its directory, the session archive and memories/. Wait for a write.
            self._pending_home = True
            logger.warning(
                "memory home %s does not exist: serving an empty memory; the first write "
                "will create it (check --home / HERMES_HOME if this is not a new memory)",
                self.home,
            )
            return manager, ""
        return manager, self._initialize(manager)

    def _initialize(self, manager: MemoryManager) -> str:
        manager.initialize_all(self.session_id, hermes_home=str(self.home), platform=PLATFORM)
        names = ", ".join(p.name for p in manager.providers) or "none"
        logger.info(
            "hermes-memory MCP session %s on %s (providers: %s)", self.session_id, self.home, names
        )
        return manager.build_system_prompt()

    def _manager_for(self, name: str, arguments: Mapping[str, Any]) -> MemoryManager:
        """The manager that should run this call (worker thread only).

        While the home is missing, a call that may write creates it first; a read-only call
        goes to the empty throw-away manager, so it answers exactly as an empty home would.
        """
        manager = self.manager
        if not self._pending_home:
            return manager
        known = {str(schema.get("name")) for schema in manager.get_all_tool_schemas()}
        may_write = name in known and name not in _READ_ONLY_TOOLS
        if self.home.exists() or may_write:
            if not self.home.exists():
                make_private_dirs(self.home)  # parents too, not only the leaf
                self.home_created = True
                logger.warning("created new memory home at %s", self.home)
            self._drop_empty()
            self._initialize(manager)
            self._pending_home = False
            return manager
        if self._empty is None:
            scratch = Path(tempfile.mkdtemp(prefix="hermes-memory-mcp-empty-"))
            empty = self._factory(scratch)
            empty.initialize_all(self.session_id, hermes_home=str(scratch), platform=PLATFORM)
            self._empty = (empty, scratch)
        return self._empty[0]

    def _drop_empty(self) -> None:
        if self._empty is None:
            return
        empty, scratch = self._empty
        self._empty = None
        try:
            empty.shutdown_all()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    async def aclose(self) -> None:
        """End the session and shut the providers down, then stop the worker thread.

        A disconnect is a real session boundary, so providers first get
        `MemoryManager.on_session_end` (with no messages: the transcript lives in the
        client), then `MemoryManager.shutdown_all`.
        """
        if self._closed:
            return
        self._closed = True
        manager, self._manager = self._manager, None

        def finish(manager: MemoryManager) -> None:
            try:
                if not self._pending_home:  # never initialised: nothing to end or flush
                    manager.on_session_end([])
                    manager.shutdown_all()
            finally:
                self._drop_empty()

        try:
            if manager is not None:
                await self._run(lambda: finish(manager))
        finally:
            self._executor.shutdown(wait=False)

    @property
    def manager(self) -> MemoryManager:
        """The running manager; `start` must have been awaited."""
        if self._manager is None:
            raise RuntimeError("MemoryBridge.start() has not been awaited (or it was closed)")
        return self._manager

    @property
    def snapshot(self) -> str:
        """The system-prompt blocks frozen when the session started (builtin memory etc.)."""
        return self._snapshot

    # ----------------------------------------------------------------- tools
    def tool_schemas(self) -> list[ToolSchema]:
        """Every tool the manager routes, in OpenAI function format."""
        return self.manager.get_all_tool_schemas()

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None) -> ToolOutcome:
        """Run tool ``name`` through `MemoryManager.handle_tool_call` on the worker thread.

        Never raises for a tool problem: unknown tools, bad arguments and provider failures
        come back as an error outcome whose text is the JSON the manager produced.
        """
        self.manager  # noqa: B018 - raises a clear error before start() / after aclose()
        args = dict(arguments or {})

        def run() -> str:
            try:
                manager = self._manager_for(name, args)
            except OSError as exc:
                logger.warning("cannot create memory home %s: %s", self.home, exc)
                return tool_error(f"Cannot create the memory home {self.home}: {exc}")
            now = time.monotonic()
            if self._last_call_end is None or now - self._last_call_end > self.turn_gap:
                self._turn += 1
                manager.on_turn_start(self._turn, "")
            try:
                return manager.handle_tool_call(name, args)
            except Exception as exc:  # the manager isolates providers; this is a last guard
                logger.warning("memory tool %r failed: %s", name, exc, exc_info=True)
                return tool_error(f"Memory tool '{name}' failed: {exc}")
            finally:
                self._last_call_end = time.monotonic()

        text = await self._run(run)
        return classify_result(text)

    # ----------------------------------------------------------------- internals
    async def _run(self, func: Callable[[], _T]) -> _T:
        return await asyncio.wrap_future(self._executor.submit(func))


_READ_ONLY_TOOLS = frozenset({"session_search"})
"""Tools known never to write to the home (served from an empty memory while it is missing)."""


def classify_result(text: str) -> ToolOutcome:
    """Parse a tool's JSON string; ``{"error": ...}`` or ``"success": false`` is an error."""
    try:
        payload = json.loads(text)
    except (TypeError, ValueError):
        return ToolOutcome(text=text, is_error=False)
    is_error = isinstance(payload, dict) and (
        payload.get("error") not in (None, "") or payload.get("success") is False
    )
    return ToolOutcome(text=text, is_error=is_error, payload=payload)
