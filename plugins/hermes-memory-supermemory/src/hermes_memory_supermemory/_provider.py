"""`SupermemoryProvider`: a Supermemory container as the external tier of hermes-memory.

* **Recall** — each turn searches the container for the user's message (on a background
  worker, waited for at most ``prefetch_wait`` seconds); every ``profile_every`` turns the
  container profile (stable facts and current context) comes with it.
* **Ingest** — finished turns are buffered and sent as one Supermemory document per
  session (document id = session id; Supermemory appends when an id is re-used) at session
  end, before context compression, at a session switch/reset and at shutdown. Curated
  memory additions are mirrored as documents of their own.
* **Tools** — ``supermemory_save``, ``supermemory_search``, ``supermemory_forget``,
  ``supermemory_profile``.

The container tag is the SDK's *namespace*: every call is scoped to ``/ns/{tag}/…``.
The machinery is the kit's (`hermes_memory_core.kit`): one `Guard` (retries, breaker,
failure taxonomy, health record) around every call, and `PendingWrites` for ordered writes
that are spooled at shutdown and replayed at the next start.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from hermes_memory_core import RecallStatus
from hermes_memory_core.kit import BackgroundRecall, RemoteProvider, TurnBuffer, fact_key
from hermes_memory_supermemory import _recall as recall
from hermes_memory_supermemory import _writes as writes
from hermes_memory_supermemory._config import (
    SupermemoryConfigError,
    SupermemorySettings,
    namespace_for,
)
from hermes_memory_supermemory._tools import PROMPT, TOOLS, ToolContext, now

if TYPE_CHECKING:
    from hermes_memory_supermemory._client import SupermemoryClient

__all__ = ["SupermemoryProvider"]

logger = logging.getLogger("hermes_memory_supermemory")


class SupermemoryProvider(RemoteProvider):
    """Supermemory as a hermes-memory provider.

    :param hermes_home: the hermes home directory (health record, spooled writes).
    :param config: the whole parsed ``config.yaml``; `settings` come from its
        ``supermemory:`` section (`SupermemorySettings`), environment variables fill the
        gaps.
    :param transport: an ``httpx`` transport replacing the network (tests).
    :param environ: environment mapping to read instead of ``os.environ``.

    Constructing is cheap: no I/O, no network, no import of the SDK.
    """

    name = "supermemory"
    label = "Supermemory"
    settings_class = SupermemorySettings
    settings: SupermemorySettings
    _cfg: SupermemorySettings | None = None  # the valid settings, from initialize on
    _client: SupermemoryClient | None = None
    _recall: BackgroundRecall | None = None

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._session = "default"
        self._namespace = ""
        self._buffer = TurnBuffer()
        self._last_count = 0
        self._turns = 0

    # ------------------------------------------------------------------ configuration
    @property
    def namespace(self) -> str:
        """The Supermemory namespace in use (``""`` before `initialize`)."""
        return self._namespace

    def unavailable_reason(self) -> str:
        """What is missing (configuration, the ``supermemory`` SDK), in a sentence."""
        if self.settings_error:
            return self.settings_error
        from importlib.util import find_spec

        if find_spec("supermemory") is None:
            return "The supermemory package is not installed: pip install hermes-memory-supermemory"
        return self.settings.missing()

    # ------------------------------------------------------------------ lifecycle
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Prepare for ``session_id``; no network (the SDK loads on the first call).

        Recognised kwargs: ``hermes_home``, ``agent_context`` (writes only for
        ``"primary"``), ``curated_entries`` (facts the model already sees: never recalled),
        ``user_id`` (fills ``{identity}`` in the container tag).
        """
        self._begin(kwargs)
        self._session = str(session_id or "default")
        cfg = self._cfg = None if self.settings_error else self.settings
        base_url = cfg.base_url if cfg else ""
        from hermes_memory_supermemory._client import classify

        guard = self._make_guard(
            lambda exc: classify(exc, base_url=base_url), label="Supermemory", logger=logger
        )
        reason = self.unavailable_reason()
        if not reason and cfg is not None:
            try:
                self._namespace = namespace_for(cfg.container_tag, str(kwargs.get("user_id") or ""))
            except SupermemoryConfigError as exc:
                reason = f"Supermemory configuration is invalid: {exc}"
        if reason or cfg is None:
            self._inactive(reason)
            return
        guard.extra.update({"namespace": self._namespace, "url": base_url})
        from hermes_memory_supermemory._client import SupermemoryClient

        self._client = SupermemoryClient(cfg, self._namespace, self._transport)
        self._recall = BackgroundRecall("supermemory-recall")
        self._init_error = ""
        send = lambda write: writes.send(self._client, self._guard, write)  # noqa: E731
        self._start_writes(send, max_pending=cfg.max_pending, accept=writes.accept)

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        """Ingest what is buffered for the old session; later turns go to the new one."""
        self._ingest()
        self._session = str(new_session_id or "default")
        self._turns = 0

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Ingest the buffered turns before the context is summarised (nothing to carry)."""
        self._ingest()
        return ""

    def _settle(self) -> None:
        """Ingest the buffered turns before the session-end drain and before shutdown."""
        self._ingest()

    def _flush_timeout(self) -> float:
        return self._cfg.timeout * 2 if self._cfg else 0.0

    def _shutdown_timeout(self) -> float:
        return min(self._cfg.timeout, 10.0) if self._cfg else 0.0

    def _release(self, drained: bool) -> None:
        within = 3 * self._cfg.timeout + 5 if self._cfg else 5.0
        self._close_client(drained, self._recall.worker if self._recall else None, within=within)

    # ------------------------------------------------------------------ writes
    def _capturing(self) -> bool:
        return self.active and self._writes_enabled and bool(self._cfg and self._cfg.auto_capture)

    def sync_turn(self, user_content: str, assistant_content: str, **kwargs: Any) -> None:
        """Buffer the turn for this session's document (sent at the next ingest point)."""
        if not self._capturing():
            return
        session = str(kwargs.get("session_id") or "") or self._session
        if session != self._session:
            self._ingest()
            self._session = session
        self._buffer.add(user_content, assistant_content)

    def _ingest(self) -> None:
        cfg, turns = self._cfg, self._buffer.take()
        if not turns or cfg is None or not self._capturing():
            return
        at = now()
        for part in writes.parts("\n\n".join(turns), cfg.max_session_chars):
            self._enqueue({"namespace": self._namespace, "document_id": self._session,
                           "content": part, "kind": "conversation", "at": at})  # fmt: skip

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        """Mirror curated additions (``add`` and ``replace``) as documents of their own."""
        if action not in ("add", "replace") or not content.strip():
            return
        self._known_facts.add(fact_key(content))
        if self._capturing():
            kind = "user" if target == "user" else "memory"
            self._enqueue({"namespace": self._namespace, "document_id": "",
                           "content": content.strip(), "kind": kind, "at": now()})  # fmt: skip

    # ------------------------------------------------------------------ recall
    def system_prompt_block(self) -> str:
        """One short paragraph telling the model what Supermemory gives it."""
        return PROMPT if self.active else ""

    def _fetch(self, query: str, with_profile: bool) -> tuple[str, int] | None:
        client, guard, cfg = self._client, self._guard, self._cfg
        if guard is None or client is None or cfg is None:
            return None
        return recall.fetch(client, guard, cfg, query, self._known_facts, with_profile)

    def _profile_due(self) -> bool:
        every = self._cfg.profile_every if self._cfg else 0
        return every > 0 and (self._turns - 1) % every == 0

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Start recalling for ``query`` in the background."""
        if self._recall_on() and self._recall is not None and query.strip():
            query = query.strip()
            fetch = lambda: self._fetch(query, False)  # noqa: E731
            self._recall.queue(session_id or self._session, query, fetch)

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Recall for this turn, waiting at most ``prefetch_wait`` seconds (``""`` if late:
        the answer is kept for the next turn that asks the same)."""
        self._last_count = 0
        cfg, recall = self._cfg, self._recall
        if not self._recall_on() or cfg is None or recall is None or not query.strip():
            return ""
        self._turns += 1
        query, session, profile = query.strip(), session_id or self._session, self._profile_due()
        text, self._last_count = recall.answer(session, query, lambda: self._fetch(query, profile),
                                               cfg.prefetch_wait, refresh=profile)  # fmt: skip
        return text

    def recall_status(self) -> RecallStatus | None:
        """How many memories the last `prefetch` injected (None when it injected nothing)."""
        count = self._last_count
        return RecallStatus(provider_label="Supermemory", count=count) if count > 0 else None

    def _recall_on(self) -> bool:
        return self.active and self._cfg is not None and self._cfg.auto_recall

    # ------------------------------------------------------------------ tools
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """``supermemory_save``, ``_search``, ``_forget`` and ``_profile``."""
        return TOOLS.schemas()

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run a ``supermemory_*`` tool; always a JSON string, errors as ``{"error": …}``."""
        return self._run_tool(TOOLS, tool_name, args, owner=ToolContext(self._stored))

    def _stored(self, content: str) -> None:
        self._known_facts.add(fact_key(content))
