"""`HonchoProvider`: Honcho's user modelling as the external tier of hermes-memory.

Model: one Honcho *workspace*; two *peers*, the user and the assistant ("AI peer"); one
Honcho *session* per hermes conversation. Finished turns are appended to the session with
``session.add_messages``; recall comes from ``peer.context`` (the user's card and
representation as seen by the AI peer) and, every few turns, ``peer.chat`` (Honcho's
dialectic); builtin ``user`` memory writes are mirrored as Honcho conclusions.

Every network call runs off the caller's thread: writes on one ordered background worker,
recall on another, tools on a small pool with a deadline. A circuit breaker stops calling a
failing server for a while; failures are logged as warnings and written to the provider
health record, never raised into the agent's turn.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

import httpx

from hermes_memory_core import first_threat_message, sanitize_context
from hermes_memory_core.provider import MemoryProvider, RecallStatus
from hermes_memory_core.toolresult import tool_error, tool_result
from hermes_memory_core.worker import SerialWorker
from hermes_memory_honcho import spool
from hermes_memory_honcho.breaker import CircuitBreaker
from hermes_memory_honcho.config import (
    ID_PATTERN,
    HonchoConfig,
    HonchoConfigError,
    config_schema,
    sanitize_id,
    session_key,
)
from hermes_memory_honcho.errors import Failure, classify
from hermes_memory_honcho.recall import fact_key, format_recall
from hermes_memory_honcho.tools import TOOL_NAMES, TOOL_SCHEMAS
from hermes_memory_honcho.transport import build_http_client

__all__ = ["HonchoProvider"]

logger = logging.getLogger("hermes_memory_honcho")
T = TypeVar("T")

#: Messages per ``add_messages`` request (the server's batch limit).
MESSAGES_PER_BATCH = 100
#: The single pending-writes file older versions wrote (see `hermes_memory_honcho.spool`
#: for the per-process files used now).
PENDING_FILE = spool.LEGACY_FILE
_CONTINUED = "[continued] "


class _CallFailed(Exception):
    """An SDK call failed; `failure` says how (already counted by the breaker)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class _CircuitOpen(Exception):
    """The breaker is open: the call was not attempted."""


@dataclass
class _PendingWrite:
    """One write waiting for Honcho: a turn's messages or a conclusion."""

    kind: str  # "messages" | "conclusion"
    session: str
    items: list[tuple[str, str]] = field(default_factory=list)  # (peer_id, content)
    sent: int = 0  # messages already accepted by the server (for partial batches)
    origin: Path | None = field(default=None, compare=False)  # claimed file it came from

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "session": self.session, "items": self.items[self.sent :]}

    @classmethod
    def from_json(cls, data: Any) -> _PendingWrite | None:
        try:
            kind, session = str(data["kind"]), str(data["session"])
            items = [(str(p), str(c)) for p, c in data["items"]]
        except (KeyError, TypeError, ValueError):
            return None
        if kind not in ("messages", "conclusion") or not ID_PATTERN.match(session):
            return None
        return cls(kind, session, items)


@dataclass
class _Snapshot:
    """The latest recall pieces and the turn each was fetched for."""

    card: list[str] = field(default_factory=list)
    representation: str = ""
    dialectic: str = ""
    context_turn: int | None = None
    dialectic_turn: int | None = None


class HonchoProvider(MemoryProvider):
    """Honcho (https://honcho.dev, or a self-hosted server) as a hermes-memory provider.

    :param hermes_home: the hermes home directory (health records, pending writes,
        ``config.yaml`` when ``config`` is not given).
    :param config: the whole parsed ``config.yaml``; settings are read from its
        ``honcho:`` section (see `get_config_schema`), environment variables fill gaps.
    :param http_transport: replaces the network under the shared ``httpx`` client (tests
        pass an ``httpx.MockTransport``).
    :param environ: environment mapping to read instead of ``os.environ``.

    Constructing is cheap: no I/O, no network.
    """

    name = "honcho"

    def __init__(
        self,
        *,
        hermes_home: str | Path | None = None,
        config: dict[str, Any] | None = None,
        http_transport: httpx.BaseTransport | None = None,
        environ: dict[str, str] | None = None,
    ) -> None:
        self._home: Path | None = Path(hermes_home) if hermes_home is not None else None
        self._raw_config = config
        self._transport = http_transport
        self._environ = environ
        self._cfg: HonchoConfig | None = None
        self._config_error = ""
        self._lock = threading.RLock()
        self._setup_lock = threading.Lock()
        self._writer = SerialWorker("honcho-sync")
        self._reader = SerialWorker("honcho-recall")
        self._tool_pool: ThreadPoolExecutor | None = None
        self._http: httpx.Client | None = None
        self._honcho: Any = None
        self._initialized = False
        self._breaker: CircuitBreaker | None = None
        self._init_error = ""
        self._session_id = ""
        self._session_key = ""
        self._user_id = "user"
        self._ai_id = "hermes"
        self._peers: dict[str, Any] = {}
        self._sessions: dict[str, Any] = {}
        self._writes_enabled = True
        self._pending: deque[_PendingWrite] = deque()
        self._pending_lock = threading.Lock()
        self._dropped = 0
        self._claimed: dict[Path, int] = {}  # claimed file -> writes from it not yet settled
        self._known_facts: set[str] = set()
        self._snapshot = _Snapshot()
        self._turn = 0
        self._queued_for = -1
        self._recall_future: Future[None] | None = None
        self._last_recall_count = 0
        self._closed = False

    # ------------------------------------------------------------------ configuration
    def _settings(self) -> HonchoConfig | None:
        if self._cfg is not None or self._config_error:
            return self._cfg
        try:
            raw = self._raw_config
            if raw is None and self._home is not None:
                from hermes_memory_core.config import ConfigError, load_config

                try:
                    raw = load_config(self._home).raw
                except ConfigError as exc:
                    raise HonchoConfigError(str(exc)) from exc
            section = (raw or {}).get("honcho") if isinstance(raw, dict) else None
            if section is not None and not isinstance(section, dict):
                raise HonchoConfigError("config.yaml honcho: must be a mapping")
            self._cfg = HonchoConfig.load(section, self._environ)
        except HonchoConfigError as exc:
            self._config_error = str(exc)
        return self._cfg

    @property
    def config(self) -> HonchoConfig | None:
        """The resolved settings, or None when they are invalid (see `unavailable_reason`)."""
        return self._settings()

    def get_config_schema(self) -> list[dict[str, Any]]:
        """Every setting with its ``config.yaml`` key, env var, type and default."""
        return config_schema()

    def is_available(self) -> bool:
        """Configured (API key or base URL), enabled, and ``honcho-ai`` installed. No network."""
        return not self.unavailable_reason()

    def unavailable_reason(self) -> str:
        """What is missing, in one or two sentences (``""`` when available)."""
        cfg = self._settings()
        if cfg is None:
            return f"Honcho configuration is invalid: {self._config_error}"
        try:
            metadata.version("honcho-ai")
        except metadata.PackageNotFoundError:
            return "The honcho-ai package is not installed: pip install hermes-memory-honcho"
        return cfg.missing()

    # ------------------------------------------------------------------ lifecycle
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Prepare for ``session_id``; returns at once (setup runs on the background worker).

        Recognised kwargs: ``hermes_home``, ``agent_context`` (writes only for
        ``"primary"``), ``user_id`` (user peer id when ``honcho.peer_name`` is unset).
        """
        if kwargs.get("hermes_home"):
            self._home = Path(str(kwargs["hermes_home"]))
        self._writes_enabled = str(kwargs.get("agent_context") or "primary") == "primary"
        self._session_id = session_id or "default"
        self._session_key = session_key(self._session_id)
        cfg = self._settings()
        reason = self.unavailable_reason()
        self._breaker = CircuitBreaker(
            threshold=cfg.failure_threshold if cfg else 5,
            cooldown=cfg.cooldown if cfg else 60.0,
            home=self._home,
            provider_name=self.name,
        )
        if reason or cfg is None:
            self._init_error = reason
            logger.warning("Honcho provider inactive: %s", reason)
            self._breaker.report("degraded", reason)
            return
        user = cfg.peer_name or str(kwargs.get("user_id") or "")
        self._user_id = sanitize_id(user, fallback="user") if user else "user"
        self._ai_id = cfg.ai_peer
        self._load_known_facts()
        self._init_error = ""
        self._initialized = True
        self._closed = False
        self._restore_pending()
        if cfg.recall_mode != "tools" or self._pending:
            key = self._session_key
            self._writer.submit(lambda: self._background("setup", partial(self._ensure, key)))
            if self._pending:
                self._writer.submit(self._flush_pending)

    def _sdk(self) -> Any:
        """The Honcho client, built on first use on a background thread (imports the SDK and
        loads TLS certificates: local work, but not the caller's to wait for)."""
        with self._lock:
            if self._honcho is None:
                cfg = self._settings()
                assert cfg is not None
                try:
                    self._http = build_http_client(cfg, transport=self._transport)
                    self._honcho = self._build_sdk(cfg, self._http)
                except Exception as exc:
                    failure = Failure("other", f"cannot build the Honcho client: {exc}")
                    assert self._breaker is not None
                    self._breaker.record_failure(failure, operation="client setup")
                    raise _CallFailed(failure) from exc
            return self._honcho

    @staticmethod
    def _build_sdk(cfg: HonchoConfig, client: httpx.Client) -> Any:
        from honcho import Honcho  # type: ignore[import-untyped]

        from hermes_memory_honcho import __version__

        return Honcho(
            api_key=cfg.api_key or None,
            base_url=cfg.resolved_base_url,
            workspace_id=cfg.workspace,
            timeout=cfg.timeout,
            max_retries=cfg.max_retries,
            http_client=client,
            default_headers={"X-Honcho-Host": f"hermes-memory-honcho/{__version__}"},
        )

    @property
    def active(self) -> bool:
        """Initialised with a usable client (it may still be failing: see the breaker)."""
        return self._initialized and not self._init_error and not self._closed

    @property
    def breaker(self) -> CircuitBreaker | None:
        """The circuit breaker (None before `initialize`)."""
        return self._breaker

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        """Move to another conversation: later turns go to its own Honcho session."""
        self._session_id = new_session_id or "default"
        self._session_key = session_key(self._session_id)
        with self._lock:
            self._snapshot.dialectic = ""
            self._snapshot.dialectic_turn = None

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """Send every pending write, waiting at most ``honcho.flush_timeout`` seconds."""
        if not self.active or not self._writes_enabled:
            return
        cfg = self._settings()
        assert cfg is not None
        self._writer.submit(self._flush_pending)
        if not self._writer.drain(cfg.flush_timeout):
            logger.warning(
                "Honcho: session end flush still running after %.0fs; %d write(s) pending",
                cfg.flush_timeout,
                len(self._pending),
            )

    def shutdown(self) -> None:
        """Drain pending writes within ``honcho.shutdown_timeout``, then release the client.

        Writes Honcho has not accepted by then are saved under the home directory and sent
        by the next `initialize`; without a home directory they are reported as lost.
        """
        if not self._initialized or self._closed:
            return
        cfg = self._settings()
        assert cfg is not None
        if self._writes_enabled:
            self._writer.submit(self._flush_pending)
        drained = self._writer.close(cfg.shutdown_timeout)
        self._reader.close(0)
        if self._tool_pool is not None:
            self._tool_pool.shutdown(wait=False, cancel_futures=True)
        self._closed = True
        self._save_pending()
        if self._http is not None:
            if drained:
                self._http.close()
            else:  # a call is still in flight: close once it ends (bounded by the timeouts)
                threading.Thread(
                    target=self._close_when_idle, args=(self._http, cfg), daemon=True
                ).start()

    def _close_when_idle(self, client: httpx.Client, cfg: HonchoConfig) -> None:
        deadline = time.monotonic() + cfg.timeout * (cfg.max_retries + 1) * 3 + 5
        while time.monotonic() < deadline and (self._writer.pending or self._reader.pending):
            time.sleep(0.05)
        client.close()

    # ------------------------------------------------------------------ system prompt
    def system_prompt_block(self) -> str:
        """One short paragraph telling the model what Honcho gives it."""
        cfg = self._settings()
        if not self.active or cfg is None:
            return ""
        if cfg.recall_mode == "context":
            return (
                "Honcho memory is active: what it has learned about the user is added to "
                "your context automatically."
            )
        return (
            "Honcho memory is active: it models the user across conversations. Use "
            "honcho_profile / honcho_context for what it knows, honcho_search for past "
            "messages, honcho_reasoning to ask it a question, honcho_conclude to record a "
            "durable fact about the user."
        )

    # ------------------------------------------------------------------ recall
    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Start fetching recall for the next turn in the background."""
        if not self._recall_enabled() or not query.strip():
            return
        with self._lock:
            self._queued_for = self._turn + 1
            self._start_recall(query, self._turn + 1)

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Recall for this turn: waits at most ``honcho.prefetch_wait`` seconds.

        Returns the freshest recall that is ready (possibly from a previous turn), or ``""``.
        """
        if not self._recall_enabled():
            return ""
        cfg = self._settings()
        assert cfg is not None
        with self._lock:
            self._turn += 1
            turn = self._turn
            if self._queued_for != turn and query.strip():
                self._start_recall(query, turn)
            future = self._recall_future
        if future is not None:
            with contextlib.suppress(Exception):
                future.result(timeout=cfg.prefetch_wait)
        with self._lock:
            snap = self._snapshot
            text = format_recall(
                user_label=self._user_id,
                card=snap.card,
                representation=snap.representation,
                dialectic=snap.dialectic,
                known=self._known_facts,
                max_chars=cfg.context_tokens * 4,
                dialectic_max_chars=cfg.dialectic_max_chars,
            )
        self._last_recall_count = max(0, text.count("\n"))
        return text

    def recall_status(self) -> RecallStatus | None:
        """How many lines the last `prefetch` injected (None when it injected nothing)."""
        if self._last_recall_count <= 0:
            return None
        return RecallStatus(provider_label="Honcho", count=self._last_recall_count)

    def _recall_enabled(self) -> bool:
        cfg = self._settings()
        return self.active and cfg is not None and cfg.recall_mode != "tools"

    def _start_recall(self, query: str, turn: int) -> None:
        # Called with self._lock held. One recall in flight at most: a hung server must not
        # pile up jobs; the next turn reuses what is ready.
        if self._recall_future is not None and not self._recall_future.done():
            return
        self._recall_future = _submit_tracked(
            self._reader, lambda: self._background("recall", lambda: self._recall(query, turn))
        )

    def _recall(self, query: str, turn: int) -> None:
        cfg = self._settings()
        assert cfg is not None
        with self._lock:
            snap = self._snapshot
            want_context = (
                snap.context_turn is None or turn - snap.context_turn >= cfg.context_cadence
            )
            want_dialectic = cfg.dialectic_cadence > 0 and (
                snap.dialectic_turn is None or turn - snap.dialectic_turn >= cfg.dialectic_cadence
            )
        if not (want_context or want_dialectic):
            return
        _, user, ai = self._ensure(self._session_key)
        if want_context:
            ctx = self._call("peer.context", lambda: ai.context(target=user, search_query=query))
            with self._lock:
                self._snapshot.card = [str(c) for c in (ctx.peer_card or [])]
                self._snapshot.representation = str(ctx.representation or "")
                self._snapshot.context_turn = turn
        if want_dialectic:
            answer = self._call(
                "peer.chat",
                lambda: ai.chat(
                    query[:2000], target=user, reasoning_level=cfg.dialectic_reasoning_level
                ),
            )
            with self._lock:
                self._snapshot.dialectic = answer if isinstance(answer, str) else ""
                self._snapshot.dialectic_turn = turn

    def _load_known_facts(self) -> None:
        """Facts the builtin tier already shows the model (USER.md, MEMORY.md): not repeated."""
        if self._home is None:
            return
        for name in ("USER.md", "MEMORY.md"):
            path = self._home / "memories" / name
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for entry in text.split("\n§\n"):
                if entry.strip():
                    self._known_facts.add(fact_key(entry))

    # ------------------------------------------------------------------ writes
    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        """Queue the turn for ``session.add_messages``; returns at once, sends in order."""
        if not self.active or not self._writes_enabled:
            return
        cfg = self._settings()
        assert cfg is not None
        key = session_key(session_id) if session_id else self._session_key
        items: list[tuple[str, str]] = []
        for peer_id, content in (
            (self._user_id, _strip_recall(user_content)),
            (self._ai_id, assistant_content),
        ):
            items += [(peer_id, chunk) for chunk in split_message(content, cfg.message_max_chars)]
        if items:
            self._enqueue(_PendingWrite("messages", key, items))

    def on_memory_write(
        self,
        action: str,
        target: str,
        content: str,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Mirror builtin ``user`` memory additions as Honcho conclusions about the user."""
        if target != "user" or action not in ("add", "replace") or not content.strip():
            return
        self._known_facts.add(fact_key(content))
        if not self.active or not self._writes_enabled:
            return
        self._enqueue(_PendingWrite("conclusion", self._session_key, [(self._user_id, content)]))

    def _enqueue(self, write: _PendingWrite) -> None:
        cfg = self._settings()
        assert cfg is not None
        with self._pending_lock:
            self._pending.append(write)
            overflow = len(self._pending) - max(1, cfg.max_pending_turns)
            dropped = [self._pending.popleft() for _ in range(max(0, overflow))]
            self._dropped += len(dropped)
        self._settle(dropped)
        if overflow > 0 and self._breaker is not None:
            detail = (
                f"{self._dropped} write(s) dropped: Honcho unreachable and more than "
                f"{cfg.max_pending_turns} pending"
            )
            logger.warning("Honcho: %s", detail)
            self._breaker.report(self._breaker.state, detail)
        self._writer.submit(self._flush_pending)

    def _flush_pending(self) -> None:
        """Send pending writes oldest first; stop at the first transient failure."""
        while True:
            with self._pending_lock:
                if not self._pending or self._closed:
                    return
                write = self._pending[0]
            try:
                self._send(write)
            except _CircuitOpen:
                return
            except _CallFailed as exc:
                if exc.failure.trips_breaker:
                    return  # keep it; retried on the next turn, session end or next start
                logger.warning("Honcho rejected a %s write; dropped: %s", write.kind, exc)
            except Exception:  # a bug must not wedge the queue
                logger.warning("Honcho: unexpected error sending a write; dropped", exc_info=True)
            with self._pending_lock:
                done = bool(self._pending) and self._pending[0] is write
                if done:
                    self._pending.popleft()
            if done:
                self._settle([write])

    def _settle(self, writes: list[_PendingWrite]) -> None:
        """Writes left the queue: delete each claimed file none of whose writes remain."""
        finished: list[Path] = []
        with self._pending_lock:
            for write in writes:
                if write.origin is None or write.origin not in self._claimed:
                    continue
                self._claimed[write.origin] -= 1
                if self._claimed[write.origin] <= 0:
                    del self._claimed[write.origin]
                    finished.append(write.origin)
        for path in finished:
            spool.release(path)

    def _send(self, write: _PendingWrite) -> None:
        session, user, ai = self._ensure(write.session)
        if write.kind == "conclusion":
            payload = [{"content": c, "session_id": write.session} for _, c in write.items]
            self._call("conclusions.create", lambda: ai.conclusions_of(user).create(payload))
            return
        peers = {self._user_id: user, self._ai_id: ai}
        while write.sent < len(write.items):
            batch = write.items[write.sent : write.sent + MESSAGES_PER_BATCH]
            msgs = [peers.get(p, user).message(c) for p, c in batch if c.strip()]
            if msgs:
                self._call("session.add_messages", partial(session.add_messages, msgs))
            write.sent += len(batch)

    def _save_pending(self) -> None:
        """Save unsent writes to this process's own file; then the claimed files they came
        from are no longer needed. Nothing is deleted unless the new file was written."""
        with self._pending_lock:
            pending = [w.to_json() for w in self._pending if w.sent < len(w.items)]
            self._pending.clear()
            claimed = list(self._claimed)
            self._claimed.clear()
        if not pending:
            for old in claimed:
                spool.release(old)
            return
        if self._home is None:
            logger.warning("Honcho: %d write(s) not sent before shutdown are lost", len(pending))
            return
        try:
            path = spool.save_writes(self._home, pending)
        except OSError as exc:
            logger.warning("Honcho: %d unsent write(s) lost (%s)", len(pending), exc)
            return
        for old in claimed:
            spool.release(old)
        detail = f"{len(pending)} write(s) not sent before shutdown; saved to {path}"
        logger.warning("Honcho: %s", detail)
        if self._breaker is not None:
            self._breaker.report(self._breaker.state, detail)

    def _restore_pending(self) -> None:
        """Queue the writes saved by earlier shutdowns (of any process sharing the home).

        Each saved file is claimed (renamed) first and deleted only when its writes are
        settled, so a crash before the resend leaves it for the next start.
        """
        if self._home is None or not self._writes_enabled:
            return
        try:
            paths = spool.claim_saved(self._home)
        except OSError as exc:
            logger.warning("Honcho: cannot list saved writes in %s (%s)", self._home, exc)
            return
        restored: list[_PendingWrite] = []
        for path in paths:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                logger.warning("Honcho: cannot read %s (%s); left in place", path, exc)
                continue
            rows = data if isinstance(data, list) else []
            writes = [w for w in map(_PendingWrite.from_json, rows) if w is not None]
            if not writes:
                spool.release(path)
                continue
            for write in writes:
                write.origin = path
            restored += writes
            with self._pending_lock:
                self._claimed[path] = len(writes)
        with self._pending_lock:
            self._pending.extendleft(reversed(restored))
        if restored:
            logger.info("Honcho: resending %d write(s) saved at an earlier shutdown", len(restored))

    # ------------------------------------------------------------------ SDK access
    def _ensure(self, key: str) -> tuple[Any, Any, Any]:
        """Get-or-create both peers and session ``key`` (once each); returns them."""
        cfg = self._settings()
        assert cfg is not None
        with self._setup_lock:
            honcho = self._sdk()
            for peer_id in (self._user_id, self._ai_id):
                if peer_id not in self._peers:
                    self._peers[peer_id] = self._get_peer(honcho, peer_id)
            user, ai = self._peers[self._user_id], self._peers[self._ai_id]
            if key not in self._sessions:
                from honcho.api_types import (  # type: ignore[import-untyped]
                    SessionPeerConfig,
                )

                conf = SessionPeerConfig(
                    observe_me=cfg.observe_me, observe_others=cfg.observe_others
                )
                session = self._call("session get-or-create", lambda: honcho.session(key))
                pairs = [(user, conf), (ai, conf)]
                self._call("session.add_peers", partial(session.add_peers, pairs))
                self._sessions[key] = session
            return self._sessions[key], user, ai

    def _get_peer(self, honcho: Any, peer_id: str) -> Any:
        return self._call("peer get-or-create", partial(honcho.peer, peer_id))

    def _call(self, operation: str, fn: Callable[[], T]) -> T:
        """Run one SDK call through the breaker; failures become `_CallFailed`."""
        breaker = self._breaker
        assert breaker is not None
        if self._closed or not breaker.allow():
            raise _CircuitOpen(operation)
        cfg = self._settings()
        try:
            result = fn()
        except Exception as exc:
            failure = classify(exc, base_url=cfg.resolved_base_url if cfg else "")
            if not self._closed:  # after shutdown the health record is already final
                breaker.record_failure(failure, operation=operation)
            raise _CallFailed(failure) from exc
        if not self._closed:
            breaker.record_success()
        return result

    def _background(self, what: str, fn: Callable[[], object]) -> None:
        """Run a background job; failures are already logged and recorded by `_call`."""
        try:
            fn()
        except (_CallFailed, _CircuitOpen):
            pass
        except Exception:
            logger.warning("Honcho %s failed unexpectedly", what, exc_info=True)

    # ------------------------------------------------------------------ tools
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """The five ``honcho_*`` tools (none in ``context`` recall mode)."""
        cfg = self._settings()
        if cfg is not None and cfg.recall_mode == "context":
            return []
        return [dict(s) for s in TOOL_SCHEMAS]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run a ``honcho_*`` tool; always a JSON string, errors as ``{"error": …}``.

        A call never holds the agent longer than ``honcho.tool_timeout`` seconds.
        """
        if tool_name not in TOOL_NAMES:
            return tool_error(f"Unknown tool: {tool_name}")
        if not isinstance(args, dict):  # models send anything
            return tool_error(  # type: ignore[unreachable]
                f"{tool_name}: arguments must be a JSON object"
            )
        if not self.active:
            reason = self._init_error or "the provider is not initialised or was shut down"
            return tool_error(f"Honcho is not available: {reason}")
        cfg = self._settings()
        breaker = self._breaker
        assert cfg is not None
        assert breaker is not None
        if not breaker.allow():
            return tool_error(
                "Honcho is temporarily unavailable (circuit open after repeated failures; "
                f"retry in {breaker.seconds_until_retry():.0f}s). Last error: {breaker.detail}"
            )
        try:
            job = self._tool_job(tool_name, args, cfg)
        except ValueError as exc:
            return tool_error(f"{tool_name}: {exc}")
        with self._lock:
            if self._tool_pool is None:
                self._tool_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="honcho")
            pool = self._tool_pool
        started = time.monotonic()
        try:
            future = pool.submit(job)
        except RuntimeError:
            return tool_error("Honcho is not available: the provider was shut down")
        try:
            return future.result(timeout=cfg.tool_timeout)
        except FutureTimeout:
            return tool_error(
                f"Honcho did not answer within {cfg.tool_timeout:g}s; try again later."
            )
        except _CircuitOpen:
            return tool_error("Honcho is temporarily unavailable (circuit open).")
        except _CallFailed as exc:
            return tool_error(f"Honcho {tool_name} failed: {exc.failure.message}")
        except Exception as exc:
            logger.warning("Honcho %s failed unexpectedly", tool_name, exc_info=True)
            elapsed = time.monotonic() - started
            return tool_error(f"Honcho {tool_name} failed after {elapsed:.1f}s: {exc}")

    def _peer_arg(self, args: dict[str, Any]) -> str:
        raw = args.get("peer")
        if raw is None or raw == "" or raw == "user":
            return self._user_id
        if raw == "ai":
            return self._ai_id
        if not isinstance(raw, str) or not ID_PATTERN.match(raw):
            raise ValueError("'peer' must be 'user', 'ai' or a peer id of [a-zA-Z0-9_-]")
        return raw

    def _tool_job(self, tool: str, args: dict[str, Any], cfg: HonchoConfig) -> Callable[[], str]:
        """Validate ``args`` now (ValueError) and return the network part as a callable."""
        target = self._peer_arg(args)
        if tool == "honcho_profile":
            card = args.get("card")
            if card is not None:
                if not isinstance(card, list) or not all(isinstance(c, str) for c in card):
                    raise ValueError("'card' must be a list of strings")
                card = [c.strip() for c in card if c.strip()]
                self._check_writable(card)
            return lambda: self._tool_profile(target, card)
        if tool == "honcho_search":
            query = _required_text(args, "query")
            max_tokens = _int_arg(args, "max_tokens", 800, low=50, high=2000)
            return lambda: self._tool_search(query, target, max_tokens)
        if tool == "honcho_reasoning":
            query = _required_text(args, "query")
            level = args.get("reasoning_level") or cfg.dialectic_reasoning_level
            if level not in ("minimal", "low", "medium", "high", "max"):
                raise ValueError("'reasoning_level' must be minimal, low, medium, high or max")
            return lambda: self._tool_reasoning(query, target, str(level))
        if tool == "honcho_context":
            focus = args.get("query")
            if focus is not None and not isinstance(focus, str):
                raise ValueError("'query' must be a string")
            return lambda: self._tool_context((focus or "").strip() or None, target, cfg)
        # honcho_conclude
        conclusion = args.get("conclusion")
        delete_id = args.get("delete_id")
        has_c = isinstance(conclusion, str) and bool(conclusion.strip())
        has_d = isinstance(delete_id, str) and bool(delete_id.strip())
        if has_c == has_d:
            raise ValueError("give exactly one of 'conclusion' (text) or 'delete_id'")
        if has_c:
            assert isinstance(conclusion, str)
            self._check_writable([conclusion])
            return lambda: self._tool_conclude_create(conclusion.strip(), target)
        assert isinstance(delete_id, str)
        return lambda: self._tool_conclude_delete(delete_id.strip())

    def _check_writable(self, texts: list[str]) -> None:
        if not self._writes_enabled:
            raise ValueError("writing to Honcho is disabled outside the primary agent")
        for text in texts:
            message = first_threat_message(text, scope="strict")
            if message:
                raise ValueError(message)

    def _tool_profile(self, target: str, card: list[str] | None) -> str:
        _, _, ai = self._ensure(self._session_key)
        kw: dict[str, Any] = {} if target == self._ai_id else {"target": target}
        if card is not None:
            stored = self._call("peer.set_card", lambda: ai.set_card(card, **kw))
            return tool_result({"peer": target, "card": list(stored or card), "updated": True})
        got = self._call("peer.get_card", lambda: ai.get_card(**kw)) or []
        if not got:
            return tool_result(
                {
                    "peer": target,
                    "card": [],
                    "hint": "No card yet: Honcho builds it from conversations over time; "
                    "pass 'card' to set one.",
                }
            )
        return tool_result({"peer": target, "card": list(got)})

    def _tool_search(self, query: str, target: str, max_tokens: int) -> str:
        self._ensure(self._session_key)
        honcho = self._sdk()
        limit = max(3, min(20, max_tokens // 100))
        try:
            found = self._call(
                "search",
                lambda: honcho.search(query, filters={"peer_perspective": target}, limit=limit),
            )
        except _CallFailed as exc:
            if exc.failure.kind != "client":
                raise
            peer = self._peers.get(target) or self._get_peer(honcho, target)
            found = self._call("peer.search", lambda: peer.search(query, limit=limit))
        budget = max_tokens * 4
        results = []
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

    def _tool_reasoning(self, query: str, target: str, level: str) -> str:
        _, _, ai = self._ensure(self._session_key)
        kw: dict[str, Any] = {} if target == self._ai_id else {"target": target}
        answer = self._call("peer.chat", lambda: ai.chat(query, reasoning_level=level, **kw))
        if not isinstance(answer, str) or not answer.strip():
            return tool_result({"result": "Honcho has no answer to that yet.", "peer": target})
        return tool_result({"answer": answer.strip(), "peer": target})

    def _tool_context(self, query: str | None, target: str, cfg: HonchoConfig) -> str:
        session, _, _ = self._ensure(self._session_key)
        kw: dict[str, Any] = {"peer_target": target, "tokens": cfg.context_tokens}
        if target != self._ai_id:
            kw["peer_perspective"] = self._ai_id
        if query:
            kw["search_query"] = query
        ctx = self._call("session.context", lambda: session.context(summary=True, **kw))
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

    def _tool_conclude_create(self, conclusion: str, target: str) -> str:
        _, _, ai = self._ensure(self._session_key)
        key = self._session_key
        created = self._call(
            "conclusions.create",
            lambda: ai.conclusions_of(target).create([{"content": conclusion, "session_id": key}]),
        )
        ids = [getattr(c, "id", "") for c in created or []]
        return tool_result({"stored": True, "id": ids[0] if ids else "", "conclusion": conclusion})

    def _tool_conclude_delete(self, conclusion_id: str) -> str:
        if not ID_PATTERN.match(conclusion_id):
            return tool_error(f"Conclusion not found: {conclusion_id}")
        _, user, ai = self._ensure(self._session_key)
        try:
            self._call("conclusions.delete", lambda: ai.conclusions_of(user).delete(conclusion_id))
        except _CallFailed as exc:
            if exc.failure.status == 404:
                return tool_error(f"Conclusion not found: {conclusion_id}")
            raise
        return tool_result({"deleted": conclusion_id})


def split_message(content: str, max_chars: int) -> list[str]:
    """Split ``content`` into pieces of at most ``max_chars``; later pieces say [continued].

    Cuts prefer a paragraph, line or sentence end in the second half of the window. Empty
    or whitespace-only content gives ``[]``.
    """
    text = content.strip()
    if not text:
        return []
    if len(text) <= max_chars:
        return [text]
    pieces: list[str] = []
    while text:
        room = max_chars - (len(_CONTINUED) if pieces else 0)
        if len(text) <= room:
            piece, text = text, ""
        else:
            cut = -1
            for sep in ("\n\n", "\n", ". ", "。", " "):
                cut = text.rfind(sep, room // 2, room)
                if cut != -1:
                    cut += len(sep)
                    break
            if cut <= 0:
                cut = room
            piece, text = text[:cut].rstrip(), text[cut:].lstrip()
        if piece:
            pieces.append(f"{_CONTINUED}{piece}" if pieces else piece)
    return pieces


def _strip_recall(text: str) -> str:
    """Remove an injected recall block from user text before it is stored."""
    try:
        return str(sanitize_context(text))
    except Exception:
        return text


def _required_text(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"'{key}' is required and must be a non-empty string")
    return value.strip()[:4000]


def _int_arg(args: dict[str, Any], key: str, default: int, *, low: int, high: int) -> int:
    value = args.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"'{key}' must be an integer")
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"'{key}' must be an integer") from None
    return max(low, min(high, number))


def _submit_tracked(worker: SerialWorker, fn: Callable[[], None]) -> Future[None]:
    """Queue ``fn`` on ``worker``; the future is done when ``fn`` ran (or the worker refused)."""
    future: Future[None] = Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            fn()
        except BaseException as exc:  # the waiter sees it; the worker thread lives on
            future.set_exception(exc)
        else:
            future.set_result(None)

    if not worker.submit(run):
        future.set_exception(RuntimeError(f"{worker.name} worker is closed"))
    return future
