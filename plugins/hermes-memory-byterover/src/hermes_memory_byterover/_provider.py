"""`ByteroverProvider`: ByteRover's context tree through the ``brv`` CLI
(``memory.provider: byterover``).

Every call runs ``brv … --format json`` as a subprocess in ``<home>/byterover/`` with a
deadline (the process group is killed past it). Recall before a turn is ``brv query`` bounded by
``min(memory.prefetch_timeout, byterover.timeout_query)``; finished turns and curated-memory
writes are queued and sent in order with ``brv curate --detach`` (spooled at shutdown, replayed
at the next start). Tools: ``brv_query``, ``brv_curate``, ``brv_status``.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
from pathlib import Path
from typing import Any

from hermes_memory_byterover._cli import classify, run_brv
from hermes_memory_byterover._settings import ByteroverSettings
from hermes_memory_core import kit

__all__ = ["TOOLS", "ByteroverProvider"]

logger = logging.getLogger(__name__)


_tool = kit.tool_schema
TOOL_TABLE = kit.ToolTable(
    kit.Tool(_tool("brv_query", "Ask ByteRover's context tree a question about the project or "
                   "the user (patterns, decisions, past errors). Ask a full question, not a "
                   "keyword.", {"query": {"type": "string", "description": "The question."}},
                   ["query"]), "_brv_query"),
    kit.Tool(_tool("brv_curate", "Store knowledge in ByteRover's context tree: a decision, "
                   "pattern, error and its fix, or insight, with specifics.",
                   {"content": {"type": "string", "description": "What to remember."}},
                   ["content"]), "_brv_curate"),
    kit.Tool(_tool("brv_status", "Show ByteRover's status (project, context tree, CLI "
                   "version).", {}, []), "_brv_status"),
    service="ByteRover",
    unavailable_error="ByteRover: {message}",
    failed_error="ByteRover: {message}",
    not_ready="{reason}",
)  # fmt: skip
TOOLS = TOOL_TABLE.schemas()


class ByteroverProvider(kit.RemoteProvider):
    """ByteRover through its CLI. Settings: the ``byterover:`` section of ``config.yaml``."""

    name = "byterover"
    settings_class = ByteroverSettings  # validated by core
    settings: ByteroverSettings
    _last_count = 0

    # ----------------------------------------------------------------- settings
    def _env(self) -> dict[str, str]:
        return dict(os.environ) if self._environ is None else dict(self._environ)

    def command(self) -> list[str] | None:
        """The CLI's argv prefix, resolved on PATH (None when it cannot be found)."""
        words = shlex.split(self.settings.command or "brv")
        if not words:
            return None
        found = shutil.which(words[0], path=self._env().get("PATH"))
        return [found, *words[1:]] if found else None

    def unavailable_reason(self) -> str:
        """Why the provider cannot run (``""`` when it can); no network, no subprocess."""
        if reason := super().unavailable_reason():
            return reason
        if self.command() is None:
            return (
                f"the ByteRover CLI '{self.settings.command}' was not found: "
                "npm install -g byterover-cli (or set byterover.command / BRV_COMMAND)"
            )
        return ""

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """``brv_query``, ``brv_curate``, ``brv_status``."""
        return TOOL_TABLE.schemas()

    def workdir(self) -> Path | None:
        """``<home>/byterover``: where the CLI runs (its ``.brv`` project lives there)."""
        return self._home / "byterover" if self._home else None

    def query_deadline(self) -> float:
        """``min(memory.prefetch_timeout, byterover.timeout_query)`` seconds."""
        memory = (self._raw_config or {}).get("memory")
        prefetch = memory.get("prefetch_timeout", 8.0) if isinstance(memory, dict) else 8.0
        try:
            bound = float(prefetch)
        except (TypeError, ValueError):
            bound = 8.0
        return max(0.1, min(bound, float(self.settings.timeout_query)))

    # ----------------------------------------------------------------- lifecycle
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Guard, working directory and the curate queue (replaying spooled writes)."""
        self._begin(kwargs)
        guard = self._make_guard(classify, label="ByteRover", logger=logger)
        if self.unavailable_reason():
            return
        workdir = self.workdir()
        if workdir is not None:
            try:
                kit.make_private_dirs(workdir)
            except OSError as exc:
                guard.report("degraded", f"cannot create {workdir}: {exc}", warn=True)

        def send(write: kit.Write) -> None:
            guard.call("curate", lambda: self._curate(str(write["content"]), True))

        self._start_writes(send, accept=lambda write: isinstance(write.get("content"), str))

    def _shutdown_timeout(self) -> float:
        return 3.0

    # ----------------------------------------------------------------- CLI calls
    def _run(self, args: list[str], timeout: float) -> dict[str, Any]:
        if reason := self.unavailable_reason():
            raise kit.Unavailable(reason)
        command, workdir = self.command(), self.workdir()
        if command is None or workdir is None:
            raise kit.Unavailable("no home directory")
        kit.make_private_dirs(workdir)
        env = self._env()
        key = self.settings.api_key
        if key:
            env["BRV_API_KEY"] = key  # in the environment, never in argv or a log line
        return run_brv(command, [*args, "--format", "json"], cwd=workdir, timeout=timeout,
                       env=env)  # fmt: skip

    def _query(self, query: str, timeout: float) -> str:
        seconds = max(1, int(timeout))
        data = self._run(["query", query, "--timeout", str(seconds)], timeout)
        result = data.get("result") or data.get("content") or ""
        return str(result).strip()

    def _curate(self, content: str, detach: bool) -> dict[str, Any]:
        args = ["curate", content]
        timeout = float(self.settings.timeout_curate)
        if detach:
            args.append("--detach")
        else:
            args += ["--timeout", str(max(1, int(timeout)))]
        return self._run(args, timeout)

    # ----------------------------------------------------------------- recall and writes
    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """``brv query`` for the message, within `query_deadline`; ``""`` on any failure."""
        guard = self._guard
        if guard is None or not query.strip() or self.unavailable_reason():
            return ""
        deadline = self.query_deadline()
        try:
            answer = guard.call("query", lambda: self._query(query, deadline))
        except (kit.CallFailed, kit.Unavailable):
            return ""
        text = kit.truncate_text(answer, 2000)
        self._last_count = 1 if text else 0
        return f"## ByteRover\n{text}" if text else ""

    def recall_status(self) -> Any:
        """One status line when the last prefetch recalled something."""
        from hermes_memory_core import RecallStatus

        return RecallStatus("ByteRover", 0) if self._last_count else None

    def sync_turn(self, user_content: str, assistant_content: str, **kwargs: Any) -> None:
        """Queue the turn for ``brv curate --detach`` (skipped for short messages)."""
        s = self.settings
        if not s.sync_turns or len(user_content.strip()) < s.min_turn_chars:
            return
        text = f"User: {user_content.strip()}\nAssistant: {assistant_content.strip()}"
        self._enqueue({"content": kit.truncate_text(text, 4000)})

    def on_memory_write(self, action: str, target: str, content: str, metadata: Any = None) -> None:
        """Curate added and replaced curated-memory entries."""
        if action in ("add", "replace") and content.strip():
            label = "User profile" if target == "user" else "Agent note"
            self._enqueue({"content": f"{label}: {content.strip()}"})

    # ----------------------------------------------------------------- tools
    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """``brv_query`` / ``brv_curate`` / ``brv_status``: always a JSON string."""
        guard = self._guard
        reason = self.unavailable_reason() if guard else "the ByteRover provider is not initialised"
        ready = (guard,) if guard is not None and not reason else None
        return TOOL_TABLE.dispatch(self, tool_name, args, context=ready, reason=reason)

    def _brv_query(self, args: dict[str, Any], guard: kit.Guard) -> dict[str, Any]:
        query = kit.required_text(args, "query")
        timeout = float(self.settings.timeout_query)
        return {"result": guard.call("query", lambda: self._query(query, timeout))}

    def _brv_curate(self, args: dict[str, Any], guard: kit.Guard) -> dict[str, Any]:
        content = kit.required_text(args, "content")
        data = guard.call("curate", lambda: self._curate(content, False))
        return {"status": str(data.get("status") or "curated"),
                "message": str(data.get("message") or "")}  # fmt: skip

    def _brv_status(self, args: dict[str, Any], guard: kit.Guard) -> dict[str, Any]:
        timeout = float(self.settings.timeout_curate)
        return {"status": guard.call("status", lambda: self._run(["status"], timeout))}
