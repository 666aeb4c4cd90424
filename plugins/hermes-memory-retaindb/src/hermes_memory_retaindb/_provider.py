"""`RetainDBProvider`: RetainDB (https://retaindb.com) as the external tier of hermes-memory.

* **Recall** — at session start the user's profile is read in the background; each turn's
  `prefetch` adds the memories RetainDB's context query finds for the message (the
  "overlay": profile + relevant memories, without what the curated tier already shows).
* **Writes** — each finished turn is handed to ``/v1/memory/ingest/session`` and each curated
  addition mirrored to ``/v1/memory``, through a write-behind queue journaled to disk as each
  write is queued (`JournaledWrites`): a crash loses nothing, the next start replays it.
* **Tools** — ``retaindb_profile``, ``retaindb_search``, ``retaindb_context``,
  ``retaindb_remember``, ``retaindb_forget``, and the file store: ``retaindb_upload_file``,
  ``retaindb_list_files``, ``retaindb_read_file``, ``retaindb_ingest_file``,
  ``retaindb_delete_file`` (uploads confined as `hermes_memory_retaindb._files` describes).

Every call goes through the kit's `Guard` (breaker, failure taxonomy, health record read by
``hermes-memory provider status``); a failing RetainDB costs a turn at most its timeouts.
"""

from __future__ import annotations

import logging
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hermes_memory_core import RecallStatus, kit
from hermes_memory_core.kit import SerialWorker
from hermes_memory_retaindb._client import RetainDBClient, classify
from hermes_memory_retaindb._journal import JournaledWrites
from hermes_memory_retaindb._settings import RetainDBSettings
from hermes_memory_retaindb._tools import TOOL_SCHEMAS, TOOLS

__all__ = ["TOOL_SCHEMAS", "RetainDBProvider"]

logger = logging.getLogger("hermes_memory_retaindb")


def _accept(write: kit.Write) -> bool:
    """Whether a replayed spool row is a write this version can send."""
    if not (isinstance(write.get("user_id"), str) and isinstance(write.get("session_id"), str)):
        return False
    if write.get("op") == "ingest":
        return isinstance(write.get("messages"), list)
    return write.get("op") == "remember" and isinstance(write.get("content"), str)


class RetainDBProvider(kit.RemoteProvider):
    """RetainDB as a hermes-memory provider. Settings: the ``retaindb:`` section of
    ``config.yaml``, then ``RETAINDB_API_KEY``, ``RETAINDB_BASE_URL``, ``RETAINDB_PROJECT``.

    :param hermes_home: the hermes home (health record, write journal).
    :param config: the whole parsed ``config.yaml``.
    :param transport: replaces the network under the httpx client (tests).
    :param environ: environment mapping to read instead of ``os.environ``.

    Constructing is cheap: no I/O, no network, no httpx import.
    """

    name = "retaindb"
    label = "RetainDB"
    settings_class = RetainDBSettings  # validated by core; unavailable_reason from it
    settings: RetainDBSettings
    _client: RetainDBClient | None = None
    _recall: SerialWorker | None = None
    _session = "default"
    _user = "default"
    _profile: list[str] | None = None
    _profile_at = 0.0
    _last_count = 0
    _cwd: Path | None = None

    # ------------------------------------------------------------------ settings
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """The ten ``retaindb_*`` tools (five memory tools, five file-store tools)."""
        return TOOLS.schemas()

    # ------------------------------------------------------------------ lifecycle
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Connect lazily, replay writes left by an earlier crash or shutdown, and start
        reading the user's profile in the background. Never waits on the network.

        Recognised kwargs: ``hermes_home``, ``agent_context`` (writes only for
        ``"primary"``), ``user_id``, ``curated_entries``, ``cwd`` (the working directory
        uploads are confined to; default: the process's current directory at each call).
        """
        self._begin(kwargs)
        self._cwd = Path(str(kwargs["cwd"])) if kwargs.get("cwd") else None
        self._session = session_id or "default"
        s = self.settings
        guard = self._make_guard(classify, label="RetainDB", logger=logger)
        reason = self.unavailable_reason()
        if reason:
            self._inactive(reason)
            return
        self._user = s.user_id or str(kwargs.get("user_id") or "") or "default"
        self._client = RetainDBClient(
            api_key=s.api_key,
            base_url=s.base_url,
            project=s.project,
            timeout=s.timeout,
            transport=self._transport,
        )
        self._init_error = ""
        self._recall = SerialWorker("retaindb-recall")
        self._pending = JournaledWrites(
            guard, self._send, home=self._home, max_pending=s.max_pending, accept=_accept
        )
        if self._writes_enabled:
            self._pending.restore()
        self._recall.submit(self._refresh_profile)

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        """Later turns and tools belong to ``new_session_id``."""
        self._session = new_session_id or self._session

    def _flush_timeout(self) -> float:
        return float(self.settings.flush_timeout)

    def _shutdown_timeout(self) -> float:
        return float(self.settings.shutdown_timeout)

    def _release(self, drained: bool) -> None:
        self._close_client(drained, self._recall, within=3 * float(self.settings.timeout) + 5)

    # ------------------------------------------------------------------ writes
    def _send(self, write: kit.Write) -> None:
        client, guard = self._client, self._guard
        if client is None or guard is None:
            raise kit.Unavailable("RetainDB is not connected")
        if write.get("op") == "ingest":
            guard.call("ingest", lambda: client.ingest(write))
        else:
            guard.call("remember", lambda: client.add(write))
            self._profile_at = 0.0  # the profile may have changed

    def _write(self, op: str, **fields: Any) -> kit.Write:
        return {"op": op, "user_id": self._user, "session_id": self._session, **fields}

    def sync_turn(self, user_content: str, assistant_content: str, **kwargs: Any) -> None:
        """Queue the turn for RetainDB's session ingest (journaled; returns at once)."""
        if not self.active or not user_content.strip():
            return
        now = datetime.now(UTC).isoformat()
        row = self._write(
            "ingest",
            messages=[
                {"role": "user", "content": user_content, "timestamp": now},
                {"role": "assistant", "content": assistant_content, "timestamp": now},
            ],
        )
        if kwargs.get("session_id"):
            row["session_id"] = str(kwargs["session_id"])
        self._enqueue(row)

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        """Mirror curated additions as RetainDB memories (``user`` ones as preferences)."""
        if action != "add" or not content.strip():
            return
        self._known_facts.add(kit.fact_key(content))
        if self.active:
            kind = "preference" if target == "user" else "factual"
            self._enqueue(
                self._write("remember", content=content.strip(), memory_type=kind, importance=0.7)
            )

    # ------------------------------------------------------------------ recall
    def system_prompt_block(self) -> str:
        """One short paragraph naming the tools (empty when inactive)."""
        if not self.active or self._client is None:
            return ""
        return (
            f"# RetainDB memory\nActive (project {self._client.project}). Relevant memories "
            "are recalled into each turn; use retaindb_search to look further, "
            "retaindb_remember to store a fact, retaindb_profile for the user's profile."
        )

    def _refresh_profile(self, *, inline: bool = False) -> list[str]:
        client, guard = self._client, self._guard
        if client is None or guard is None:
            return []
        wait = self.settings.recall_timeout
        try:
            items = guard.call("profile", lambda: client.profile(self._user, timeout=wait))
        except (kit.Unavailable, kit.CallFailed):
            return self._profile or []
        self._profile = [str(m["content"]) for m in items]
        self._profile_at = time.monotonic()
        return self._profile

    def _profile_stale(self) -> bool:
        return time.monotonic() - self._profile_at > float(self.settings.profile_refresh)

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Refresh the profile in the background when it is older than ``profile_refresh``."""
        if self.active and self._recall is not None and self._profile_stale():
            self._recall.submit(self._refresh_profile)

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """The overlay for this turn: the profile (fetched at session start) and the memories
        RetainDB's context query finds for ``query``, without the curated facts.

        At most one request of ``recall_timeout`` seconds when the profile is cached, two when
        it is not; ``""`` when RetainDB fails (the failure is on the health record).
        """
        client, guard = self._client, self._guard
        self._last_count = 0
        if not self.active or client is None or guard is None or not query.strip():
            return ""
        profile = self._profile
        if profile is None:
            profile = self._refresh_profile()
        wait = self.settings.recall_timeout
        session = session_id or self._session
        try:
            found = guard.call(
                "context", lambda: client.context(self._user, session, query, timeout=wait)
            )
        except (kit.Unavailable, kit.CallFailed):
            found = []
        text, self._last_count = kit.overlay(
            "## RetainDB profile",
            profile,
            "## Relevant memories",
            [str(m["content"]) for m in found],
            exclude=self._known_facts,
        )
        return text

    def recall_status(self) -> RecallStatus | None:
        """How many memories the last `prefetch` recalled (None when none)."""
        count = self._last_count
        return RecallStatus(provider_label="RetainDB", count=count) if count > 0 else None

    # ------------------------------------------------------------------ tools
    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run a ``retaindb_*`` tool; always a JSON string, errors as ``{"error": …}``."""
        return self._run_tool(TOOLS, tool_name, args, owner=_ToolView(self))


class _ToolView:
    """The tools' `ToolContext`: the few provider calls they need, read when used."""

    __slots__ = ("_provider",)

    def __init__(self, provider: RetainDBProvider) -> None:
        self._provider = provider

    @property
    def user(self) -> str:
        return self._provider._user

    @property
    def session(self) -> str:
        return self._provider._session

    @property
    def profile(self) -> list[str]:
        return self._provider._profile or []

    @property
    def file_timeout(self) -> float:
        return float(self._provider.settings.file_timeout)

    @property
    def cwd(self) -> Path:
        return self._provider._cwd or Path(os.getcwd())

    def keep_profile(self, profile: list[str]) -> None:
        self._provider._profile = profile
        self._provider._profile_at = time.monotonic()

    def profile_changed(self) -> None:
        self._provider._profile_at = 0.0

    def write(self, op: str, **fields: Any) -> kit.Write:
        return self._provider._write(op, **fields)

    def enqueue(self, row: kit.Write) -> None:
        self._provider._enqueue(row)
