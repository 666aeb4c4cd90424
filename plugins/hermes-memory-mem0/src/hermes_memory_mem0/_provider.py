"""`Mem0Provider`: mem0 semantic memory as hermes-memory's external tier.

A thin composition of the kit (`hermes_memory_core.kit`) and four modules of its own:
`connection` (the backend, started on a ``mem0-connect`` thread, every call through one
`Guard`), `recall` (searches on the ``mem0-recall`` worker, cached per session), `writes`
(turn syncs and mirrored curated writes as rows of the kit's `PendingWrites`: ordered on
the ``mem0-write`` worker, spooled at shutdown, replayed at the next start) and `tools`.
Nothing here blocks the agent's turn on the network; failures are logged and recorded in the
provider's health record, never raised into the turn.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory_core import RecallStatus, tool_error
from hermes_memory_core.kit import RemoteProvider, fact_key
from hermes_memory_mem0 import _sdk as sdk
from hermes_memory_mem0 import _writes as writes
from hermes_memory_mem0._errors import classify
from hermes_memory_mem0._recall import Recaller
from hermes_memory_mem0._settings import DEFAULT_USER_ID, Mem0Settings
from hermes_memory_mem0._tools import Mem0Tools, tool_schemas

if TYPE_CHECKING:
    from hermes_memory_mem0._connection import Connection

__all__ = ["Mem0Provider"]

logger = logging.getLogger(__name__)

PROMPT = (
    "# mem0 long-term memory\n"
    "Relevant facts from earlier conversations may be recalled into a turn; use "
    "mem0_search for more, mem0_add to store a durable fact about the user."
)


class Mem0Provider(RemoteProvider):
    """mem0 as the external memory provider (platform, self-hosted server or local OSS).

    Construction is cheap (no I/O); configuration comes from the ``mem0:`` section of
    ``config.yaml`` and ``MEM0_*`` environment variables (see `get_config_schema`).

    :param hermes_home: the agent's home directory (status records, spooled writes, OSS data).
    :param config: the whole parsed ``config.yaml``.
    :param transport: an httpx transport for every HTTP request (tests inject
        ``httpx.MockTransport`` here); default: a real transport with connect retries.
    """

    name = "mem0"
    settings_class = Mem0Settings  # validated by core
    settings: Mem0Settings
    _settings: Mem0Settings | None = None  # the valid settings, from initialize on
    _session_id = ""
    _user_id = DEFAULT_USER_ID
    _agent_id = "hermes"
    _platform = ""
    _reason: str | None = None  # unavailable_reason() fixed by initialize
    _conn: Connection | None = None
    _recaller: Recaller | None = None
    _tools: Mem0Tools | None = None

    # ------------------------------------------------------------------ configuration
    def _load(self) -> Mem0Settings | None:
        return None if self.settings_error else self.settings

    def unavailable_reason(self) -> str:
        """What is missing, in words a user can act on (``""`` when nothing is).

        Checked afresh before `initialize`; from then on the answer `initialize` found is
        reused (no re-reading of settings or the environment on every turn).
        """
        return self._reason if self._reason is not None else self._check_available()

    def _check_available(self) -> str:
        if reason := super().unavailable_reason():  # a settings error, else what is missing
            return reason
        if self.settings.mode != "selfhosted" and not sdk.sdk_installed():
            return "the mem0ai package is not installed: pip install hermes-memory-mem0"
        return ""

    def backup_paths(self) -> list[str]:
        """OSS data kept outside the home directory (a custom store or history path)."""
        settings = self._settings or self._load()
        if settings is None or settings.mode != "oss" or self._home is None:
            return []
        from hermes_memory_mem0._backends import build_oss_config  # httpx: only when asked

        config = build_oss_config(settings, self._home)
        paths = [config["vector_store"]["config"].get("path"), config["history_db_path"]]
        home = self._home.resolve()
        resolved = [Path(p).resolve() for p in paths if p]
        return [str(p) for p in resolved if not p.is_relative_to(home)]

    # ------------------------------------------------------------------ lifecycle
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Read configuration and start connecting in the background (never blocks).

        Keyword arguments used: ``hermes_home``, ``platform``, ``agent_context`` (writes
        only for ``"primary"``), ``user_id`` (used when ``mem0.user_id`` is not set),
        ``curated_entries`` (facts the model already sees: never recalled again).
        """
        self._begin(kwargs)
        self._session_id = session_id
        self._platform = str(kwargs.get("platform") or "")
        self._reason = self._check_available()
        settings = self._settings = self._load()
        guard = self._make_guard(classify, label="mem0", logger=logger)
        if settings is None:
            guard.report("degraded", self.settings_error, warn=True)
            return
        guard.extra["mode"] = settings.mode
        self._user_id = settings.user_id or str(kwargs.get("user_id") or "") or DEFAULT_USER_ID
        self._agent_id = settings.agent_id
        if self._reason:
            return
        # Switch mem0's telemetry off before anything can import it.
        sdk.prepare_environment(self._home, telemetry_opt_in=settings.telemetry)
        from hermes_memory_mem0._connection import Connection  # httpx and the backends

        conn = self._conn = Connection(settings, guard, self._home, self._transport)
        self._recaller = Recaller(conn, lambda: self._user_id, self._known_facts)
        self._tools = Mem0Tools(
            conn, lambda: (self._user_id, self._agent_id), lambda: self._writes_enabled,
            lambda: self._platform,
        )  # fmt: skip
        conn.start()
        self._start_writes(lambda w: writes.send(conn, w), accept=writes.accept)

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        """Follow the new session id (recall is cached per session)."""
        self._session_id = new_session_id

    def _flush_timeout(self) -> float:
        return self._settings.flush_timeout if self._settings else 0.0

    def _shutdown_timeout(self) -> float:
        return self._settings.shutdown_timeout if self._settings else 0.0

    def _release(self, drained: bool) -> None:
        """Stop recall and close the backend (an OSS store mid-write is left to finish)."""
        if self._recaller is not None:
            self._recaller.worker.close(0.0)
        if self._conn is not None:
            self._conn.close(drained=drained)

    # ------------------------------------------------------------------ recall
    def system_prompt_block(self) -> str:
        """A two-line note telling the model mem0 recall and tools exist."""
        return PROMPT if self._conn is not None else ""

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """Start the recall search for this turn's message (returns at once)."""
        if self._recaller is not None:
            self._recaller.start(self._session_id, message)

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Warm the recall cache for ``session_id`` in the background."""
        if self._recaller is not None:
            self._recaller.start(session_id or self._session_id, query)

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Recall for this turn, waiting at most ``prefetch_wait`` seconds; otherwise the
        last recall cached for this session (or ``""``)."""
        if self._recaller is None or self._recaller.conn.closed:
            return ""
        return self._recaller.prefetch(session_id or self._session_id, query)

    def recall_status(self) -> RecallStatus | None:
        """How many mem0 facts the last prefetch returned (None when none)."""
        count = self._recaller.last_count if self._recaller else 0
        return RecallStatus("mem0", count) if count > 0 else None

    # ------------------------------------------------------------------ writes
    def _write(self, op: str, what: str, **fields: Any) -> None:
        ids = {"user_id": self._user_id, "agent_id": self._agent_id}
        self._enqueue(writes.row(op, what, **ids, **fields))

    def sync_turn(self, user_content: str, assistant_content: str, **kwargs: Any) -> None:
        """Queue the finished turn for mem0 (in order, in the background); ``session_id``
        (keyword) is stored with it."""
        if self._settings is not None:
            sid = str(kwargs.get("session_id") or self._session_id)
            batch = writes.turn_messages(user_content, assistant_content, self._settings)
            meta = {"source": "hermes-turn", "channel": self._platform or "unknown",
                    "session_id": sid}  # fmt: skip
            if batch:
                self._write("add", "sync_turn", messages=batch,
                            infer=self._settings.sync_infer, metadata=meta)  # fmt: skip

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        """Mirror a curated write: add verbatim; replace/remove the matching fact."""
        content = (content or "").strip()
        if not content or self._settings is None or action not in ("add", "replace", "remove"):
            return
        meta = {"source": "hermes-builtin", "target": target, "channel": self._platform or ""}
        old = writes.previous_text(metadata)
        self._known_facts.discard(fact_key(old))
        if action == "remove":
            self._known_facts.discard(fact_key(content))
        else:
            self._known_facts.add(fact_key(content))
        fields = writes.mirror_fields(action, content)
        self._write(action, f"mirror {action}", content=content, old=old, metadata=meta, **fields)

    # ------------------------------------------------------------------ tools
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """``mem0_search``, ``mem0_add``, ``mem0_update``, ``mem0_delete``."""
        settings = self._settings or self._load()
        return tool_schemas(rerank_supported=bool(settings and settings.mode == "platform"))

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run a mem0 tool; always a JSON string (errors as ``{"error": ...}``)."""
        reason = self.unavailable_reason()
        if reason:
            return tool_error(f"mem0 is not available: {reason}")
        if self._tools is None:
            return tool_error("mem0 is not initialized yet.")
        return self._tools.handle(tool_name, args)
