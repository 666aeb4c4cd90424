"""`HonchoProvider`: Honcho's user modelling as the external tier of hermes-memory.

Model: one Honcho *workspace*; two *peers*, the user and the assistant ("AI peer"); one
Honcho *session* per hermes conversation. Finished turns are appended to the session
(`hermes_memory_honcho._writes`); recall comes from ``peer.context`` and, every few turns,
``peer.chat`` (`hermes_memory_honcho._recall`); curated ``user`` writes are mirrored as
Honcho conclusions, and removed again when the entry is removed or replaced
(`hermes_memory_honcho._conclusions`); the tools are in `hermes_memory_honcho._tools`.

The machinery is the kit's (`hermes_memory_core.kit`): one `Guard` (breaker, failure
taxonomy, health record) around every SDK call, and `PendingWrites` for ordered writes that
are spooled at shutdown and replayed at the next start. Nothing here blocks the agent's turn
on the network.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from contextlib import suppress
from functools import partial
from importlib import metadata
from typing import TYPE_CHECKING, Any

from hermes_memory_core import RecallStatus, tool_error
from hermes_memory_core.kit import Guard, RemoteProvider, fact_key, settings_error_message
from hermes_memory_honcho import _writes as writes
from hermes_memory_honcho._conclusions import ConclusionIndex, entry_text
from hermes_memory_honcho._config import (
    HonchoConfig,
    HonchoConfigError,
    compose_section,
    sanitize_id,
    session_key,
)
from hermes_memory_honcho._errors import classify
from hermes_memory_honcho._recall import Recaller
from hermes_memory_honcho._schemas import PROMPT_CONTEXT, PROMPT_HYBRID, TOOL_NAMES, TOOL_SCHEMAS
from hermes_memory_honcho._tools import HonchoTools

if TYPE_CHECKING:
    from pathlib import Path

    from hermes_memory_honcho._client import HonchoClient

__all__ = ["HonchoProvider"]

logger = logging.getLogger("hermes_memory_honcho")

#: The single pending-writes file older versions wrote (still replayed once).
PENDING_FILE = "honcho_pending.json"


class HonchoProvider(RemoteProvider):
    """Honcho (https://honcho.dev, or a self-hosted server) as a hermes-memory provider.

    :param hermes_home: the hermes home directory (health records, spooled writes,
        ``honcho.json``, ``config.yaml`` when ``config`` is not given).
    :param config: the whole parsed ``config.yaml``; `settings` come from its ``honcho:``
        section, then ``honcho.json``, then environment variables (`HonchoConfig`).
    :param transport: replaces the network under the shared ``httpx`` client (tests
        pass an ``httpx.MockTransport``).
    :param environ: environment mapping to read instead of ``os.environ``.

    Constructing is cheap: no I/O, no network.
    """

    name = "honcho"
    settings_class = HonchoConfig
    settings: HonchoConfig
    _compose_error = ""
    _source_error = ""
    _init_error = ""
    _session_key = ""
    _client: HonchoClient | None = None
    _recaller: Recaller | None = None
    _tools: HonchoTools | None = None

    # ------------------------------------------------------------------ configuration
    def configure(
        self, config: Mapping[str, Any] | None, *, environ: Mapping[str, str] | None = None
    ) -> None:
        """Core's one validation of the settings, after folding ``honcho.json``, the
        camelCase aliases and the host's default workspace into the ``honcho:`` section
        (`hermes_memory_honcho._config.compose_section`). Never raises: a problem becomes
        `settings_error`."""
        env = os.environ if environ is None else environ
        self._compose_error = ""
        try:
            section, env = compose_section(config, self._home, env)
        except HonchoConfigError as exc:
            self._compose_error = settings_error_message(str(exc))
            section = {}
        super().configure({"honcho": section}, environ=env)

    def _settings_source(self) -> tuple[dict[str, Any] | None, dict[str, str] | None]:
        """Built directly without ``config``: read ``config.yaml`` from the home."""
        if self._raw_config is None and self._home is not None:
            from hermes_memory_core.config import ConfigError, load_config

            try:
                return load_config(self._home).raw, self._environ
            except ConfigError as exc:
                self._source_error = settings_error_message(str(exc))
        return self._raw_config, self._environ

    @property
    def settings_error(self) -> str:
        """``"configuration error: ..."`` naming the file and key, or ``""``."""
        error = super().settings_error
        return self._source_error or self._compose_error or error

    @property
    def config(self) -> HonchoConfig | None:
        """The resolved settings, or None when they are invalid (see `unavailable_reason`)."""
        return None if self.settings_error else self.settings

    def unavailable_reason(self) -> str:
        """What is missing (configuration, ``honcho-ai``), in one or two sentences."""
        if error := self.settings_error:
            return error
        try:
            metadata.version("honcho-ai")
        except metadata.PackageNotFoundError:
            return "The honcho-ai package is not installed: pip install hermes-memory-honcho"
        return self.settings.missing()

    # ------------------------------------------------------------------ lifecycle
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Prepare for ``session_id``; returns at once (setup runs on the background worker).

        Recognised kwargs: ``hermes_home``, ``agent_context`` (writes only for
        ``"primary"``), ``user_id`` (user peer id when ``honcho.peer_name`` is unset),
        ``curated_entries`` (facts the model already sees: never recalled again).
        """
        self._begin(kwargs)
        self._session_key = session_key(session_id or "default")
        cfg = self.config
        guard = self._make_guard(
            lambda exc: classify(exc, base_url=cfg.resolved_base_url if cfg else ""),
            threshold=cfg.failure_threshold if cfg else 5, cooldown=cfg.cooldown if cfg else 60.0,
            label="Honcho", single_trial=False, logger=logger,
        )  # fmt: skip
        reason = self.unavailable_reason()
        if reason or cfg is None:
            self._init_error = reason
            logger.warning("Honcho provider inactive: %s", reason)
            guard.report("degraded", reason)
            return
        user = cfg.peer_name or str(kwargs.get("user_id") or "")
        from hermes_memory_honcho._client import HonchoClient  # httpx: only when used

        self._client = client = HonchoClient(
            cfg, guard, user_id=sanitize_id(user, fallback="user") if user else "user",
            ai_id=cfg.ai_peer, transport=self._transport,
        )  # fmt: skip
        self._recaller = Recaller(client, lambda: self._session_key, self._known_facts)
        self._tools = HonchoTools(client, lambda: self._session_key, lambda: self._writes_enabled)
        self._init_error = ""
        send = partial(writes.send, client, ConclusionIndex(self._home))
        _adopt_earlier_spool(self._home)
        pending = self._start_writes(send, max_pending=cfg.max_pending_turns,
                                     accept=writes.accept)  # fmt: skip
        if cfg.recall_mode != "tools" or len(pending):
            pending.worker.submit(partial(client.warm, self._session_key))

    @property
    def active(self) -> bool:
        """Initialised with a usable client (it may still be failing: see `breaker`)."""
        return self._client is not None and not self._init_error and not self._closed

    @property
    def breaker(self) -> Guard | None:
        """The guard (breaker and health record; None before `initialize`)."""
        return self._guard

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        """Move to another conversation: later turns go to its own Honcho session."""
        self._session_key = session_key(new_session_id or "default")
        if self._recaller is not None:
            self._recaller.forget_dialectic()

    def _flush_timeout(self) -> float:
        return self._client.cfg.flush_timeout if self._client else 0.0

    def _shutdown_timeout(self) -> float:
        return self._client.cfg.shutdown_timeout if self._client else 0.0

    def _release(self, drained: bool) -> None:
        """Stop recall and the tools; close the HTTP client once no call is in flight."""
        recall = self._recaller.worker if self._recaller else None
        if recall is not None:
            recall.close(0)
        if self._tools is not None:
            self._tools.close()
        if self._client is not None and self._pending is not None:
            writer = self._pending.worker
            self._client.close(
                idle=lambda: drained or not (writer.pending or (recall and recall.pending))
            )

    # ------------------------------------------------------------------ recall
    def system_prompt_block(self) -> str:
        """One short paragraph telling the model what Honcho gives it."""
        cfg = self.config
        if not self.active or cfg is None:
            return ""
        return PROMPT_CONTEXT if cfg.recall_mode == "context" else PROMPT_HYBRID

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Start fetching recall for the next turn in the background."""
        if self._recall_enabled() and query.strip() and self._recaller is not None:
            self._recaller.queue(query)

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Recall for this turn: waits at most ``honcho.prefetch_wait`` seconds.

        Returns the freshest recall that is ready (possibly from a previous turn), or ``""``.
        """
        if not self._recall_enabled() or self._recaller is None:
            return ""
        return self._recaller.prefetch(query)

    def recall_status(self) -> RecallStatus | None:
        """How many lines the last `prefetch` injected (None when it injected nothing)."""
        count = self._recaller.last_count if self._recaller else 0
        return RecallStatus(provider_label="Honcho", count=count) if count > 0 else None

    def _recall_enabled(self) -> bool:
        cfg = self.config
        return self.active and cfg is not None and cfg.recall_mode != "tools"

    # ------------------------------------------------------------------ writes
    def sync_turn(self, user_content: str, assistant_content: str, **kwargs: Any) -> None:
        """Queue the turn for ``session.add_messages``; returns at once, sends in order.

        ``session_id`` (keyword) picks the Honcho session; the tool-call messages are not
        sent (Honcho models what the user and the assistant said).
        """
        if self.active and self._writes_enabled and self._client is not None:
            session_id = str(kwargs.get("session_id") or "")
            key = session_key(session_id) if session_id else self._session_key
            row = writes.turn(self._client, key, user_content, assistant_content)
            if row is not None:
                self._enqueue(row)

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        """Mirror curated ``user`` writes as Honcho conclusions about the user.

        ``add``: a conclusion is created. ``remove``: the conclusions holding ``content``
        (the removed entry) are deleted. ``replace``: those holding the previous entry
        (``metadata["previous_content"]``) are deleted, then the new entry is added. Writes
        are queued in order with the turns, spooled at shutdown and replayed at the next
        start; ``memory`` (agent notes) writes are not mirrored.
        """
        if target != "user" or action not in ("add", "replace", "remove"):
            return
        previous = (metadata or {}).get("previous_content")
        old = content if action == "remove" else previous if action == "replace" else None
        new = content if action != "remove" else ""
        if not isinstance(old, str):
            old = ""
        elif entry_text(old) == entry_text(new):
            return  # a replace that changed nothing Honcho holds
        client = self._client if self.active else None
        if old.strip():
            self._known_facts.discard(fact_key(old))
            if client is not None:
                self._enqueue(writes.forget(self._session_key, client.user_id, old))
        if new.strip():
            self._known_facts.add(fact_key(new))
            if client is not None:
                self._enqueue(writes.conclusion(self._session_key, client.user_id, new))

    # ------------------------------------------------------------------ tools
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """The five ``honcho_*`` tools (none in ``context`` recall mode)."""
        cfg = self.config
        if cfg is not None and cfg.recall_mode == "context":
            return []
        return [dict(s) for s in TOOL_SCHEMAS]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run a ``honcho_*`` tool; always a JSON string, errors as ``{"error": …}``.

        A call never holds the agent longer than ``honcho.tool_timeout`` seconds.
        """
        if not self.active or self._tools is None:
            reason = self._init_error or "the provider is not initialised or was shut down"
            if tool_name in TOOL_NAMES:
                return tool_error(f"Honcho is not available: {reason}")
            return tool_error(f"Unknown tool: {tool_name}")
        return self._tools.handle(tool_name, args)


def _adopt_earlier_spool(home: Path | None) -> None:
    """Honcho 0.1 kept unsent writes in one ``honcho_pending.json``: give it the kit's spool
    name (stamp 1, so it is replayed first) for `PendingWrites.restore` to send and remove."""
    if home is not None:
        with suppress(OSError):  # absent (the usual case), or another process took it
            os.replace(home / PENDING_FILE, home / f"honcho_pending.{os.getpid()}.1.json")
