"""`HindsightProvider`: a Hindsight memory bank as the external tier of hermes-memory.

* **Retain** — finished turns are buffered and retained every ``retain_every`` turns into one
  Hindsight document per session (``update_mode="append"`` on servers from 0.5.0, found
  with one ``GET /version``; older servers get one document per batch,
  ``<session>.<n>``). Whatever is buffered is sent at session end, at a session switch and
  at shutdown. Curated additions are retained too.
* **Recall** — each turn gets the memories matching the user's message (``recall``) or
  Hindsight's synthesised answer (``reflect``), fetched on a background worker and waited
  for at most ``prefetch_wait`` seconds.
* **Tools** — ``hindsight_retain``, ``hindsight_recall``, ``hindsight_reflect``.

The machinery is the kit's (`hermes_memory_core.kit`): one `Guard` (retries, breaker,
failure taxonomy, health record) around every call, and `PendingWrites` for ordered retains
that are spooled at shutdown and replayed at the next start.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from hermes_memory_core import RecallStatus
from hermes_memory_core.kit import (
    BackgroundRecall,
    CallFailed,
    RemoteProvider,
    TurnBuffer,
    Unavailable,
    bullet_block,
    fact_key,
    truncate_text,
)
from hermes_memory_hindsight import _writes as writes
from hermes_memory_hindsight._config import HindsightSettings
from hermes_memory_hindsight._tools import CURATED, PROMPT, TOOLS, ToolContext, now

if TYPE_CHECKING:
    from hermes_memory_hindsight._client import HindsightClient

__all__ = ["HindsightProvider"]

logger = logging.getLogger("hermes_memory_hindsight")

_CONVERSATION = "conversation between the user and the assistant (hermes agent)"


class HindsightProvider(RemoteProvider):
    """Hindsight (cloud, or a server you run) as a hermes-memory provider.

    :param hermes_home: the hermes home directory (health record, spooled retains).
    :param config: the whole parsed ``config.yaml``; `settings` come from its ``hindsight:``
        section (`HindsightSettings`), environment variables fill the gaps.
    :param environ: environment mapping to read instead of ``os.environ``.

    Constructing is cheap: no I/O, no network, no import of the client library.
    """

    name = "hindsight"
    label = "Hindsight"
    settings_class = HindsightSettings
    settings: HindsightSettings
    _cfg: HindsightSettings | None = None  # the valid settings, from initialize on
    _client: HindsightClient | None = None
    _recall: BackgroundRecall | None = None

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._session = "default"
        self._turns = TurnBuffer()
        self._seq: dict[str, int] = {}
        self._seq_lock = threading.Lock()
        self._last_count = 0

    # ------------------------------------------------------------------ configuration
    def unavailable_reason(self) -> str:
        """What is missing (configuration, ``hindsight-client``), in a sentence or two."""
        if self.settings_error:
            return self.settings_error
        from importlib.util import find_spec

        if find_spec("hindsight_client") is None:
            return (
                "The hindsight-client package is not installed: pip install hermes-memory-hindsight"
            )
        return self.settings.missing()

    # ------------------------------------------------------------------ lifecycle
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Prepare for ``session_id``; no network (the first call happens in the background).

        Recognised kwargs: ``hermes_home``, ``agent_context`` (retains only for
        ``"primary"``), ``curated_entries`` (facts the model already sees: never recalled).
        """
        self._begin(kwargs)
        self._session = str(session_id or "default")
        cfg = self._cfg = None if self.settings_error else self.settings
        base_url = cfg.base_url if cfg else ""
        from hermes_memory_hindsight._client import classify

        guard = self._make_guard(
            lambda exc: classify(exc, base_url=base_url), label="Hindsight", logger=logger
        )
        reason = self.unavailable_reason()
        if reason or cfg is None:
            self._inactive(reason)
            return
        guard.extra.update({"mode": cfg.mode, "bank_id": cfg.bank_id, "url": base_url})
        from hermes_memory_hindsight._client import HindsightClient

        self._client = HindsightClient(cfg)
        self._recall = BackgroundRecall("hindsight-recall")
        client = self._client
        self._recall.worker.submit(lambda: client.sdk)  # import the library off the turn
        self._init_error = ""
        send = lambda write: writes.send(self._client, self._guard, write)  # noqa: E731
        self._start_writes(send, max_pending=cfg.max_pending, accept=writes.accept)

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        """Retain what is buffered for the old session; later turns go to the new one."""
        self._flush_buffer()
        self._session = str(new_session_id or "default")

    def _settle(self) -> None:
        """Retain the buffered turns before the session-end drain and before shutdown."""
        self._flush_buffer()

    def _flush_timeout(self) -> float:
        return self._cfg.timeout if self._cfg else 0.0

    def _shutdown_timeout(self) -> float:
        return min(self._cfg.timeout, 10.0) if self._cfg else 0.0

    def _release(self, drained: bool) -> None:
        within = 3 * self._cfg.timeout + 5 if self._cfg else 5.0
        self._close_client(drained, self._recall.worker if self._recall else None, within=within)

    # ------------------------------------------------------------------ retain
    def sync_turn(self, user_content: str, assistant_content: str, **kwargs: Any) -> None:
        """Buffer the turn; every ``retain_every`` turns the buffer is queued for retain."""
        cfg = self._cfg
        if not self.active or not self._writes_enabled or cfg is None:
            return
        session = str(kwargs.get("session_id") or "") or self._session
        if session != self._session:
            self._flush_buffer()
            self._session = session
        if self._turns.add(user_content, assistant_content) >= cfg.retain_every:
            self._flush_buffer()

    def _flush_buffer(self) -> None:
        with self._seq_lock:
            turns = self._turns.take()
            if not turns:
                return
            session = self._session
            seq = self._seq.get(session, 0)
            self._seq[session] = seq + 1
        self._enqueue({"document_id": session, "seq": seq, "content": "\n\n".join(turns),
                       "context": _CONVERSATION, "at": now()})  # fmt: skip

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        """Retain curated additions (``add`` and ``replace``) as facts of their own."""
        if action not in ("add", "replace") or not content.strip():
            return
        self._known_facts.add(fact_key(content))
        if self.active:
            about = "the user" if target == "user" else "the agent's notes"
            self._enqueue({"document_id": "", "seq": 0, "content": content.strip(),
                           "context": f"{CURATED}, about {about}", "at": now()})  # fmt: skip

    # ------------------------------------------------------------------ recall
    def system_prompt_block(self) -> str:
        """One short paragraph telling the model what Hindsight gives it."""
        return PROMPT if self.active else ""

    def _fetch(self, query: str) -> tuple[str, int] | None:
        guard, client, cfg = self._guard, self._client, self._cfg
        if guard is None or client is None or cfg is None:
            return None
        try:
            if cfg.prefetch_method == "reflect":
                answer = guard.call("reflect", lambda: client.reflect(query))
                text = truncate_text(answer, cfg.recall_max_chars)
                fresh = bool(text) and fact_key(text) not in self._known_facts
                return (f"## Hindsight reflection\n{text}", 1) if fresh else ("", 0)
            found = guard.call(
                "recall", lambda: client.recall(query, max_tokens=cfg.recall_max_tokens)
            )
        except (CallFailed, Unavailable) as exc:
            logger.debug("Hindsight recall skipped: %s", exc)
            return None
        return bullet_block("## Hindsight memory", [m.text for m in found],
                            exclude=self._known_facts, max_chars=cfg.recall_max_chars)  # fmt: skip

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Start recalling for ``query`` in the background."""
        if self._recall_on() and self._recall is not None and query.strip():
            query = query.strip()
            self._recall.queue(session_id or self._session, query, lambda: self._fetch(query))

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Recall for this turn, waiting at most ``prefetch_wait`` seconds (``""`` if late:
        the answer is kept for the next turn that asks the same)."""
        self._last_count = 0
        cfg, recall = self._cfg, self._recall
        if not self._recall_on() or cfg is None or recall is None or not query.strip():
            return ""
        query, session = query.strip(), session_id or self._session
        text, self._last_count = recall.answer(session, query, lambda: self._fetch(query),
                                               cfg.prefetch_wait)  # fmt: skip
        return text

    def recall_status(self) -> RecallStatus | None:
        """How many memories the last `prefetch` injected (None when it injected nothing)."""
        count = self._last_count
        return RecallStatus(provider_label="Hindsight", count=count) if count > 0 else None

    def _recall_on(self) -> bool:
        return self.active and self._cfg is not None and self._cfg.prefetch_method != "off"

    # ------------------------------------------------------------------ tools
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """``hindsight_retain``, ``hindsight_recall`` and ``hindsight_reflect``."""
        return TOOLS.schemas()

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run a ``hindsight_*`` tool; always a JSON string, errors as ``{"error": …}``."""
        return self._run_tool(TOOLS, tool_name, args, owner=ToolContext(self._stored))

    def _stored(self, content: str) -> None:
        self._known_facts.add(fact_key(content))
