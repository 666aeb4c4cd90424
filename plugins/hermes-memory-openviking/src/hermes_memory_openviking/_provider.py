"""`OpenVikingProvider`: OpenViking (a ``viking://`` context database) as the external tier.

* **Recall** - at session start the user's profile (``<memory_root>/profile.md``) is read in
  the background; each turn's `prefetch` adds what ``search/find`` returns for the message,
  without what the curated tier already shows. One search per turn, ``recall_timeout`` (3 s)
  per request and ``recall_total`` (4 s) for the whole turn.
* **Writes** - each finished turn is written to an OpenViking session (``messages/batch``);
  the session is committed (OpenViking archives it and extracts memories) at session end, at
  a session switch and at shutdown - never when no turn was written. Curated additions are
  mirrored as memory files (``content/write`` mode ``create``). Writes go through the kit's
  `PendingWrites`: ordered, bounded, spooled at shutdown and replayed at the next start.
* **Tools** - ``viking_search``, ``viking_read``, ``viking_browse``, ``viking_remember``,
  ``viking_forget``, ``viking_add_resource``.

Every call goes through the kit's `Guard` (breaker, failure taxonomy, health record read by
``hermes-memory provider status``).
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from hermes_memory_core import RecallStatus, kit
from hermes_memory_core.kit import SerialWorker
from hermes_memory_openviking import _writes as writes
from hermes_memory_openviking._client import OpenVikingClient, classify
from hermes_memory_openviking._settings import OpenVikingSettings
from hermes_memory_openviking._tools import TOOL_SCHEMAS, TOOLS, ToolContext
from hermes_memory_openviking._writes import memory_uri, ov_session_id

__all__ = ["TOOL_SCHEMAS", "OpenVikingProvider"]

logger = logging.getLogger("hermes_memory_openviking")


class OpenVikingProvider(kit.RemoteProvider):
    """OpenViking as a hermes-memory provider. Settings: the ``openviking:`` section of
    ``config.yaml``, then ``OPENVIKING_URL``, ``OPENVIKING_API_KEY``, ``OPENVIKING_ACCOUNT``,
    ``OPENVIKING_USER``. Available once a URL or an API key is set (the URL defaults to
    ``http://127.0.0.1:1933``).

    :param hermes_home: the hermes home (health record, spooled writes).
    :param config: the whole parsed ``config.yaml``.
    :param transport: replaces the network under the httpx client (tests).
    :param environ: environment mapping to read instead of ``os.environ``.

    Constructing is cheap: no I/O, no network, no httpx import.
    """

    name = "openviking"
    label = "OpenViking"
    settings_class = OpenVikingSettings  # validated by core; unavailable_reason from it
    settings: OpenVikingSettings
    _client: OpenVikingClient | None = None
    _recall: SerialWorker | None = None
    _session = "default"
    _written: set[str]
    _profile: list[str] | None = None
    _last_count = 0

    # ------------------------------------------------------------------ settings
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """The six ``viking_*`` tools."""
        return TOOLS.schemas()

    # ------------------------------------------------------------------ lifecycle
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Connect lazily, replay writes spooled by an earlier shutdown, and start reading
        the user's profile in the background. Never waits on the network.

        Recognised kwargs: ``hermes_home``, ``agent_context`` (writes only for
        ``"primary"``), ``curated_entries``.
        """
        self._begin(kwargs)
        self._written = set()
        self._session = session_id or "default"
        s = self.settings
        self._make_guard(classify, label="OpenViking", logger=logger)
        reason = self.unavailable_reason()
        if reason:
            self._inactive(reason)
            return
        self._client = OpenVikingClient(
            base_url=s.base_url,
            api_key=s.api_key,
            account=s.account,
            user=s.user,
            timeout=s.timeout,
            transport=self._transport,
        )
        self._init_error = ""
        self._recall = SerialWorker("openviking-recall")
        send = lambda write: writes.send(self._client, self._guard, write)  # noqa: E731
        self._start_writes(send, max_pending=s.max_pending, accept=writes.accept)
        self._recall.submit(self._refresh_profile)

    def _commit(self) -> None:
        """Queue the commit of the current session if a turn was written to it."""
        ov = ov_session_id(self._session)
        if ov in self._written:
            self._written.discard(ov)
            self._enqueue({"op": "commit", "session_id": ov})

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        """Commit the session left behind; later turns go to ``new_session_id``."""
        if new_session_id and new_session_id != self._session:
            if self.active:
                self._commit()
            self._session = new_session_id

    def _settle(self) -> None:
        """Commit the session before the session-end drain and before shutdown (when a
        turn was written to it)."""
        if self.active:
            self._commit()

    def _flush_timeout(self) -> float:
        return float(self.settings.flush_timeout)

    def _shutdown_timeout(self) -> float:
        return float(self.settings.shutdown_timeout)

    def _release(self, drained: bool) -> None:
        self._close_client(drained, self._recall, within=3 * float(self.settings.timeout) + 5)

    # ------------------------------------------------------------------ writes
    def _memory_uri(self, content: str) -> str:
        return memory_uri(str(self.settings.memory_root), content)

    def sync_turn(self, user_content: str, assistant_content: str, **kwargs: Any) -> None:
        """Queue the turn for the OpenViking session (returns at once)."""
        if not self.active or not self._writes_enabled or not user_content.strip():
            return
        ov = ov_session_id(str(kwargs.get("session_id") or self._session))
        messages = [{"role": "user", "content": user_content}]
        if assistant_content.strip():
            messages.append({"role": "assistant", "content": assistant_content})
        self._written.add(ov)
        self._enqueue({"op": "messages", "session_id": ov, "messages": messages})

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        """Mirror curated additions as OpenViking memory files (``mode=create``)."""
        if action != "add" or not content.strip():
            return
        self._known_facts.add(kit.fact_key(content))
        if self.active:
            text = content.strip()
            self._enqueue({"op": "remember", "uri": self._memory_uri(text), "content": text})

    # ------------------------------------------------------------------ recall
    def system_prompt_block(self) -> str:
        """One short paragraph naming the tools (empty when inactive)."""
        if not self.active:
            return ""
        return (
            "# OpenViking memory\nActive. Relevant memories are recalled into each turn; use "
            "viking_search to look further, viking_read / viking_browse for viking:// URIs, "
            "viking_remember to store a fact."
        )

    def _refresh_profile(self) -> list[str]:
        client, guard = self._client, self._guard
        if client is None or guard is None:
            return []
        uri = f"{str(self.settings.memory_root).rstrip('/')}/profile.md"
        wait = self.settings.recall_timeout
        try:
            text = guard.call("profile", lambda: client.read(uri, timeout=wait))
        except kit.CallFailed as exc:
            if exc.failure.status == 404:  # no profile yet: an answer, not a failure
                self._profile = []
            return self._profile or []
        except kit.Unavailable:
            return self._profile or []
        lines = [ln.strip().lstrip("-*# ").strip() for ln in text.splitlines()]
        self._profile = [ln for ln in lines if ln]
        return self._profile

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """The overlay for this turn: the profile read at session start and what OpenViking's
        search finds for ``query``, without the curated facts. At most ``recall_total``
        seconds; ``""`` when OpenViking fails (the failure is on the health record)."""
        client, guard, worker = self._client, self._guard, self._recall
        self._last_count = 0
        if not self.active or client is None or guard is None or worker is None:
            return ""
        if not query.strip():
            return ""
        s = self.settings
        results: list[dict[str, Any]] = []

        def search() -> None:
            with contextlib.suppress(kit.Unavailable, kit.CallFailed):
                results.extend(
                    guard.call(
                        "search", lambda: client.find(query, limit=8, timeout=s.recall_timeout)
                    )
                )

        task = worker.call(search, label="openviking.prefetch")
        if task is None or not task.wait(s.recall_total):
            guard.report("degraded", f"recall took longer than {s.recall_total} s", warn=True)
            found: list[dict[str, Any]] = []
        else:
            found = list(results)
        lines = [str(i.get("abstract") or "").strip() or str(i["uri"]) for i in found]
        text, self._last_count = kit.overlay(
            "## OpenViking profile",
            self._profile or [],
            "## Relevant memories",
            lines,
            exclude=self._known_facts,
        )
        return text

    def recall_status(self) -> RecallStatus | None:
        """How many items the last `prefetch` recalled (None when none)."""
        count = self._last_count
        return RecallStatus(provider_label="OpenViking", count=count) if count > 0 else None

    # ------------------------------------------------------------------ tools
    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run a ``viking_*`` tool; always a JSON string, errors as ``{"error": …}``."""
        tools = ToolContext(
            memory_root=str(self.settings.memory_root),
            memory_uri=self._memory_uri,
            enqueue=self._enqueue,
            stored=self._stored,
        )
        return self._run_tool(TOOLS, tool_name, args, owner=tools)

    def _stored(self, content: str) -> None:
        self._known_facts.add(kit.fact_key(content))
