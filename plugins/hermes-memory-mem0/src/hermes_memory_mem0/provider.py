"""`Mem0Provider`: mem0 semantic memory as hermes-memory's external tier.

Threading model (nothing here ever blocks the agent's turn on the network):

* ``initialize`` only reads configuration; the backend (``MemoryClient`` with its ping,
  ``mem0.Memory`` with its local store, or our REST client) is built on a short-lived
  ``mem0-connect`` thread. A failed start is retried on later use after a pause.
* recall searches run on the ``mem0-recall`` worker; ``prefetch`` waits at most
  ``prefetch_wait`` seconds for a fresh result and otherwise returns the last recall cached
  for that session (warmed by ``queue_prefetch`` / ``on_turn_start``).
* writes (turn syncs, mirrored builtin writes) run in order on the ``mem0-write`` worker;
  ``on_session_end`` and ``shutdown`` wait for it within a bound.
* tool calls run on the caller's thread (the model asked for them) and are bounded by the
  httpx timeouts.

Every backend call goes through one circuit breaker. Failures are logged at WARNING and
recorded with `hermes_memory_core.health.write_provider_status` so that
``hermes-memory provider status`` shows them; they never raise into the agent's turn.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

import httpx

from hermes_memory_core import first_threat_message
from hermes_memory_core.breaker import CircuitBreaker
from hermes_memory_core.health import write_provider_status
from hermes_memory_core.provider import MemoryProvider, RecallStatus
from hermes_memory_core.toolresult import tool_error, tool_result
from hermes_memory_core.worker import SerialWorker
from hermes_memory_mem0 import sdk
from hermes_memory_mem0.backends import (
    Backend,
    OSSBackend,
    PlatformBackend,
    SelfHostedBackend,
    build_http_client,
    build_oss_config,
)
from hermes_memory_mem0.errors import Failure, FailureKind, classify
from hermes_memory_mem0.recall import fact_key, format_recall, truncate_message
from hermes_memory_mem0.settings import (
    CONFIG_FIELDS,
    DEFAULT_USER_ID,
    ConfigError,
    Mem0Settings,
    load_settings,
)
from hermes_memory_mem0.tools import TOOL_NAMES, tool_schemas

__all__ = ["Mem0Provider"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: A recall older than this is not reused for the same query; a new search starts.
_RECALL_FRESH_SECONDS = 60.0
#: Sessions whose last recall is kept (least recently used dropped first).
_RECALL_SESSIONS = 8
_BUILTIN_SEPARATOR = "\n§\n"


class Unavailable(Exception):
    """mem0 cannot be called right now (not started, start failed, breaker open)."""


class CallFailed(Exception):
    """A backend call failed; ``failure`` says how."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


@dataclass(frozen=True)
class _Recall:
    query: str
    text: str
    count: int
    at: float


class Mem0Provider(MemoryProvider):
    """mem0 as the external memory provider (platform, self-hosted server or local OSS).

    Construction is cheap (no I/O); configuration comes from the ``mem0:`` section of
    ``config.yaml`` and ``MEM0_*`` environment variables (see `get_config_schema`).

    :param hermes_home: the agent's home directory (status records, OSS data).
    :param config: the whole parsed ``config.yaml``.
    :param transport: an httpx transport for every HTTP request (tests inject
        ``httpx.MockTransport`` here); default: a real transport with connect retries.
    """

    name = "mem0"

    def __init__(
        self,
        *,
        hermes_home: str | Path | None = None,
        config: dict[str, Any] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._home = Path(hermes_home) if hermes_home else None
        self._config = dict(config or {})
        self._transport = transport
        self._lock = threading.RLock()
        self._settings: Mem0Settings | None = None
        self._settings_error = ""
        self._backend: Backend | None = None
        self._ready = threading.Event()
        self._connect_thread: threading.Thread | None = None
        self._init_error = ""
        self._init_failed_at = 0.0
        self._breaker = CircuitBreaker(5, 120.0)  # replaced by the configured one
        self._writer = SerialWorker("mem0-write", max_queued=256)
        self._reader = SerialWorker("mem0-recall", max_queued=8)
        self._session_id = ""
        self._user_id = DEFAULT_USER_ID
        self._agent_id = "hermes"
        self._platform = ""
        self._writes_enabled = True
        self._recall: OrderedDict[str, _Recall] = OrderedDict()  # bounded LRU by session
        self._inflight: dict[tuple[str, str], threading.Event] = {}
        self._known_facts: set[str] = set()
        self._last_count = 0
        self._skipped_writes = 0
        self._status_state = ""
        self._last_kind: FailureKind | None = None
        self._closed = False
        self._reason: str | None = None  # unavailable_reason() fixed by initialize

    # ------------------------------------------------------------------ configuration
    def _load(self) -> Mem0Settings | None:
        try:
            settings = load_settings(self._config)
        except ConfigError as exc:
            self._settings_error = str(exc)
            return None
        self._settings_error = ""
        return settings

    def is_available(self) -> bool:
        """True when configured for a mode and the SDK is importable (no network)."""
        return not self.unavailable_reason()

    def unavailable_reason(self) -> str:
        """What is missing, in words a user can act on (``""`` when nothing is).

        Checked afresh before `initialize`; from then on the answer `initialize` found is
        reused (no re-reading of settings or the environment on every turn).
        """
        if self._reason is not None:
            return self._reason
        return self._check_available()

    def _check_available(self) -> str:
        settings = self._load()
        if settings is None:
            return f"mem0 configuration error: {self._settings_error}"
        missing = settings.missing()
        if missing:
            return missing
        if settings.mode != "selfhosted" and not sdk.sdk_installed():
            return "the mem0ai package is not installed: pip install hermes-memory-mem0"
        return ""

    def get_config_schema(self) -> list[dict[str, Any]]:
        """Every setting: key, description, type, default, env var, secret."""
        return [f.as_schema() for f in CONFIG_FIELDS]

    def backup_paths(self) -> list[str]:
        """OSS data kept outside the home directory (a custom store or history path)."""
        settings = self._settings or self._load()
        if settings is None or settings.mode != "oss" or self._home is None:
            return []
        config = build_oss_config(settings, self._home)
        candidates = [config["vector_store"]["config"].get("path"), config["history_db_path"]]
        home = self._home.resolve()
        out = []
        for path in candidates:
            if path and not Path(path).resolve().is_relative_to(home):
                out.append(str(Path(path).resolve()))
        return out

    # ------------------------------------------------------------------ lifecycle
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Read configuration and start connecting in the background (never blocks).

        Keyword arguments used: ``hermes_home``, ``platform``, ``agent_context`` (writes
        only for ``"primary"``), ``user_id`` (used when ``mem0.user_id`` is not set).
        """
        home = kwargs.get("hermes_home")
        if home:
            self._home = Path(home)
        self._session_id = session_id
        self._platform = str(kwargs.get("platform") or "")
        context = kwargs.get("agent_context") or "primary"
        self._writes_enabled = context == "primary"
        self._reason = self._check_available()
        settings = self._load()
        if settings is None:
            self._init_error = f"configuration error: {self._settings_error}"
            self._report("degraded", self._init_error, warn=True)
            return
        self._settings = settings
        for key in settings.unknown_keys:
            logger.warning("mem0: unknown key mem0.%s in config.yaml is ignored", key)
        self._user_id = settings.user_id or str(kwargs.get("user_id") or "") or DEFAULT_USER_ID
        self._agent_id = settings.agent_id
        self._breaker = CircuitBreaker(settings.breaker_threshold, settings.breaker_cooldown)
        self._known_facts = self._read_builtin_facts()
        missing = self.unavailable_reason()
        if missing:
            self._init_error = missing
            return
        # Switch mem0's telemetry off before anything can import it.
        sdk.prepare_environment(self._home, telemetry_opt_in=settings.telemetry)
        self._start_connect()

    def _read_builtin_facts(self) -> set[str]:
        """Entries of the builtin tier (already in the system prompt): never recalled twice."""
        facts: set[str] = set()
        if self._home is None:
            return facts
        for name in ("MEMORY.md", "USER.md"):
            try:
                text = (self._home / "memories" / name).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            facts.update(fact_key(entry) for entry in text.split(_BUILTIN_SEPARATOR) if entry)
        facts.discard("")
        return facts

    def _start_connect(self) -> None:
        with self._lock:
            if self._backend is not None or self._closed:
                return
            if self._connect_thread is not None and self._connect_thread.is_alive():
                return
            self._ready.clear()
            self._connect_thread = threading.Thread(
                target=self._connect, name="mem0-connect", daemon=True
            )
            self._connect_thread.start()

    def _connect(self) -> None:
        settings = self._settings
        assert settings is not None
        backend: Backend | None = None
        try:
            if settings.mode == "selfhosted":
                backend = SelfHostedBackend.create(settings, self._transport)
            else:
                mem0 = sdk.import_mem0(self._home, telemetry_opt_in=settings.telemetry)
                if settings.mode == "platform":
                    # MemoryClient's constructor does a blocking GET /v1/ping/ to validate
                    # the key; that is why this runs on the mem0-connect thread, with our
                    # client's short timeouts instead of mem0's 300 s default.
                    http = build_http_client(settings, transport=self._transport)
                    try:
                        backend = PlatformBackend.connect(mem0, settings, http)
                    except BaseException:
                        http.close()
                        raise
                else:
                    home = self._home or Path.home() / ".hermes"
                    backend = OSSBackend.create(mem0, settings, home)
        except Exception as exc:
            failure = classify(exc)
            with self._lock:
                self._init_error = f"mem0 could not start ({settings.mode} mode): {failure.message}"
                self._init_failed_at = time.monotonic()
            self._report("degraded", self._init_error, kind=failure.kind, warn=True)
        else:
            with self._lock:
                closed = self._closed
                if not closed:
                    self._backend = backend
                    self._init_error = ""
            if closed:
                self._close_backend(backend)
            else:
                self._report("ok", f"connected ({settings.mode} mode)")
        finally:
            self._ready.set()

    def _retry_delay(self) -> float:
        settings = self._settings
        return min(60.0, settings.breaker_cooldown) if settings else 60.0

    def _get_backend(self, wait: float) -> Backend:
        """The connected backend, waiting up to ``wait`` s for a start in progress."""
        if self._settings is None:
            raise Unavailable(self._init_error or "mem0 is not initialized")
        if self._closed:
            raise Unavailable("mem0 provider is shut down")
        if self._backend is not None:
            return self._backend
        with self._lock:
            if (
                self._init_error
                and self._ready.is_set()
                and time.monotonic() - self._init_failed_at >= self._retry_delay()
                and not self.unavailable_reason()
            ):
                self._start_connect()  # retry after a failed start
        self._ready.wait(max(0.0, wait))
        backend = self._current_backend()
        if backend is not None:
            return backend
        if not self._ready.is_set():
            raise Unavailable("mem0 is still connecting; try again in a moment")
        raise Unavailable(self._init_error or "mem0 is not available")

    def _current_backend(self) -> Backend | None:
        with self._lock:
            return self._backend

    def _waiting_to_retry(self) -> bool:
        """The last start failed and its retry pause is not over."""
        return (
            self._backend is None
            and bool(self._init_error)
            and self._ready.is_set()
            and time.monotonic() - self._init_failed_at < self._retry_delay()
        )

    def _connect_wait(self) -> float:
        """How long a tool call waits for a start in progress (about one ping)."""
        settings = self._settings
        return (settings.connect_timeout + settings.timeout) if settings else 0.0

    def _background_wait(self) -> float:
        """How long a worker job waits for a start in progress (import + ping, bounded)."""
        return 2 * self._connect_wait() + 30.0

    # ------------------------------------------------------------------ guarded calls
    def _call(self, what: str, fn: Callable[[Backend], T], *, wait: float) -> T:
        """Run ``fn(backend)`` through the breaker; raise Unavailable or CallFailed."""
        backend = self._get_backend(wait)
        if not self._breaker.allow():
            raise Unavailable(
                "mem0 is temporarily unavailable after repeated failures "
                f"(retrying in {self._breaker.retry_in():.0f} s)"
            )
        try:
            result = fn(backend)
        except Exception as exc:
            failure = classify(exc)
            self._on_failure(what, failure)
            raise CallFailed(failure) from exc
        self._on_success()
        return result

    def _on_failure(self, what: str, failure: Failure) -> None:
        if not failure.kind.trips_breaker:
            # The service answered (unknown id, invalid input): it is healthy.
            self._on_success()
            return
        opened = self._breaker.record_failure()
        failures = self._breaker.failures
        self._last_kind = failure.kind
        detail = f"{what} failed: {failure.message}"
        if not opened and self._breaker.is_open:
            # a call that started before the breaker opened: keep the open state visible
            self._report("circuit_open", detail, failures=failures, warn=True)
        elif opened:
            detail = (
                f"circuit open after {failures} consecutive failures; pausing calls for "
                f"{self._breaker.cooldown:.0f} s (last: {detail})"
            )
            self._report("circuit_open", detail, failures=failures, kind=failure.kind, warn=True)
        else:
            self._report("degraded", detail, failures=failures, kind=failure.kind, warn=True)

    def _on_success(self) -> None:
        recovered = self._breaker.record_success()
        if recovered or self._status_state not in ("ok", ""):
            self._skipped_writes = 0
            self._report("ok", "recovered" if recovered else "ok")

    def _report(
        self,
        state: str,
        detail: str,
        *,
        failures: int = 0,
        kind: FailureKind | None = None,
        warn: bool = False,
    ) -> None:
        if warn:
            logger.warning("mem0: %s", detail)
        elif state == "ok" and self._status_state not in ("ok", ""):
            logger.info("mem0: %s", detail)
        self._status_state = state
        if self._home is None:
            return
        extra: dict[str, Any] = {"mode": self._settings.mode if self._settings else None}
        kind = kind or (self._last_kind if state != "ok" else None)
        if kind is not None:
            extra["last_error_kind"] = kind.value
        if self._skipped_writes:
            extra["skipped_writes"] = self._skipped_writes
        write_provider_status(
            self._home, self.name, state=state, detail=detail, failures=failures, **extra
        )

    # ------------------------------------------------------------------ recall
    def system_prompt_block(self) -> str:
        """A two-line note telling the model mem0 recall and tools exist."""
        if self._settings is None or self.unavailable_reason():
            return ""
        return (
            "# mem0 long-term memory\n"
            "Relevant facts from earlier conversations may be recalled into a turn; use "
            "mem0_search for more, mem0_add to store a durable fact about the user."
        )

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """Start the recall search for this turn's message (returns at once)."""
        self._start_search(self._session_id, message)

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Warm the recall cache for ``session_id`` in the background."""
        self._start_search(session_id or self._session_id, query)

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Recall for this turn, waiting at most ``prefetch_wait`` seconds.

        Returns the fresh result when the search finishes in time, otherwise the last
        recall cached for this session (or ``""``); a late result is kept for next time.
        """
        settings = self._settings
        if settings is None or self._closed:
            return ""
        sid = session_id or self._session_id
        query = query.strip()
        cached = self._cached_recall(sid)
        fresh = (
            cached is not None
            and cached.query == query
            and time.monotonic() - cached.at < _RECALL_FRESH_SECONDS
        )
        if query and not fresh and not self._breaker.is_open:  # open breaker: no waiting
            done = self._start_search(sid, query)
            if done is not None:
                done.wait(settings.prefetch_wait)
            cached = self._cached_recall(sid)
        self._last_count = cached.count if cached else 0
        return cached.text if cached else ""

    def _cached_recall(self, sid: str) -> _Recall | None:
        with self._lock:
            cached = self._recall.get(sid)
            if cached is not None:
                self._recall.move_to_end(sid)
            return cached

    def recall_status(self) -> RecallStatus | None:
        """How many mem0 facts the last prefetch returned (None when none)."""
        return RecallStatus("mem0", self._last_count) if self._last_count > 0 else None

    def _start_search(self, sid: str, query: str) -> threading.Event | None:
        settings = self._settings
        query = (query or "").strip()
        if settings is None or not query or self._closed or self._waiting_to_retry():
            return None
        key = (sid, query)
        with self._lock:
            event = self._inflight.get(key)
            if event is not None:
                return event
            event = threading.Event()
            self._inflight[key] = event

        def job() -> None:
            try:
                results = self._call(
                    "recall",
                    lambda b: b.search(
                        query,
                        user_id=self._user_id,
                        top_k=settings.recall_top_k,
                        rerank=settings.rerank,
                    ),
                    wait=self._background_wait(),
                )
                with self._lock:
                    exclude = set(self._known_facts)
                text, count = format_recall(
                    results,
                    exclude=exclude,
                    max_items=settings.recall_top_k,
                    max_chars=settings.recall_max_chars,
                )
                with self._lock:
                    self._recall[sid] = _Recall(query, text, count, time.monotonic())
                    self._recall.move_to_end(sid)
                    while len(self._recall) > _RECALL_SESSIONS:
                        self._recall.popitem(last=False)
            except (Unavailable, CallFailed):
                pass  # reported by _call (or nothing to report while the breaker is open)
            finally:
                with self._lock:
                    self._inflight.pop(key, None)
                event.set()

        if not self._reader.submit(job):
            with self._lock:
                self._inflight.pop(key, None)
            event.set()
            logger.debug("mem0: recall queue full; skipping a search")
        return event

    # ------------------------------------------------------------------ writes
    def _write(self, what: str, fn: Callable[[Backend], object]) -> None:
        """Queue one write on the ordered writer; failures are reported, never raised."""
        settings = self._settings
        if settings is None or not self._writes_enabled or self._closed:
            return
        if self.unavailable_reason():
            return

        def job() -> None:
            try:
                self._call(what, fn, wait=self._background_wait())
            except Unavailable as exc:
                if self._closed:
                    return  # shutdown already reported the abandoned writes
                self._skipped_writes += 1
                if self._skipped_writes == 1 or self._skipped_writes % 20 == 0:
                    state = "circuit_open" if self._breaker.is_open else "degraded"
                    self._report(
                        state,
                        f"{what} skipped: {exc} ({self._skipped_writes} write(s) skipped)",
                        failures=self._breaker.failures,
                        warn=True,
                    )
            except CallFailed:
                pass  # reported by _call

        if not self._writer.submit(job):
            self._skipped_writes += 1
            self._report(
                "degraded",
                f"{what} dropped: the mem0 write queue is full or closed",
                failures=self._breaker.failures,
                warn=True,
            )

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        """Queue the finished turn for mem0 (in order, in the background)."""
        settings = self._settings
        if settings is None:
            return
        limit = settings.sync_max_chars
        batch = [
            {"role": role, "content": truncate_message(text or "", limit)}
            for role, text in (("user", user_content), ("assistant", assistant_content))
        ]
        batch = [m for m in batch if m["content"]]
        if not batch:
            return
        metadata = {
            "source": "hermes-turn",
            "channel": self._platform or "unknown",
            "session_id": session_id or self._session_id,
        }
        user_id, agent_id, infer = self._user_id, self._agent_id, settings.sync_infer
        self._write(
            "sync_turn",
            lambda b: b.add(
                batch, user_id=user_id, agent_id=agent_id, infer=infer, metadata=metadata
            ),
        )

    def on_memory_write(
        self,
        action: str,
        target: str,
        content: str,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Mirror a builtin memory write: add verbatim; replace/remove the matching fact."""
        metadata = metadata or {}
        content = (content or "").strip()
        if not content or self._settings is None:
            return
        user_id, agent_id = self._user_id, self._agent_id
        meta = {"source": "hermes-builtin", "target": target, "channel": self._platform or ""}
        new_key = fact_key(content)

        def add(b: Backend) -> object:
            msg = [{"role": "user", "content": content}]
            return b.add(msg, user_id=user_id, agent_id=agent_id, infer=False, metadata=meta)

        def matching(b: Backend, text: str) -> list[str]:
            key = fact_key(text)
            hits = b.search(text, user_id=user_id, top_k=5, rerank=False)
            return [str(h["id"]) for h in hits if h.get("id") and fact_key(h["memory"]) == key]

        if action == "add":
            with self._lock:
                self._known_facts.add(new_key)
            self._write("mirror add", add)
        elif action == "replace":
            old = str(metadata.get("previous_content") or metadata.get("old_text") or "")
            with self._lock:
                self._known_facts.discard(fact_key(old))
                self._known_facts.add(new_key)

            def replace(b: Backend) -> object:
                ids = matching(b, old) if old.strip() else []
                if not ids:
                    return add(b)
                return b.update(ids[0], content)

            self._write("mirror replace", replace)
        elif action == "remove":
            with self._lock:
                self._known_facts.discard(new_key)

            def remove(b: Backend) -> object:
                for memory_id in matching(b, content):
                    b.delete(memory_id)
                return None

            self._write("mirror remove", remove)

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        """Follow the new session id (recall is cached per session)."""
        self._session_id = new_session_id

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """Wait (bounded by ``flush_timeout``) until queued writes reached mem0."""
        settings = self._settings
        if settings is None:
            return
        if not self._writer.drain(settings.flush_timeout):
            self._report(
                "degraded",
                f"session end: {self._writer.pending} write(s) still pending after "
                f"{settings.flush_timeout:.0f} s",
                failures=self._breaker.failures,
                warn=True,
            )

    def shutdown(self) -> None:
        """Drain writes within ``shutdown_timeout``, stop the workers, close the backend."""
        settings = self._settings
        timeout = settings.shutdown_timeout if settings else 0.0
        drained = self._writer.close(timeout)
        self._reader.close(0.0)
        with self._lock:
            self._closed = True
            backend, self._backend = self._backend, None
        self._ready.set()  # wake jobs still waiting for a start: they end as "shut down"
        if not drained:
            logger.warning(
                "mem0: shutdown after %.0f s with writes still pending; they are abandoned",
                timeout,
            )
        if backend is not None and (drained or backend.mode != "oss"):
            self._close_backend(backend)

    @staticmethod
    def _close_backend(backend: Backend | None) -> None:
        if backend is None:
            return
        try:
            backend.close()
        except Exception as exc:
            logger.debug("mem0: closing the backend failed: %s", exc)

    # ------------------------------------------------------------------ tools
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """``mem0_search``, ``mem0_add``, ``mem0_update``, ``mem0_delete``."""
        settings = self._settings or self._load()
        return tool_schemas(rerank_supported=bool(settings and settings.mode == "platform"))

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run a mem0 tool; always a JSON string (errors as ``{"error": ...}``)."""
        if tool_name not in TOOL_NAMES:
            return tool_error(f"Unknown tool: {tool_name}")
        if not isinstance(cast(object, args), dict):
            return tool_error("Tool arguments must be a JSON object.")
        reason = self.unavailable_reason()
        if reason:
            return tool_error(f"mem0 is not available: {reason}")
        if self._settings is None:
            return tool_error("mem0 is not initialized yet.")
        try:
            if tool_name == "mem0_search":
                return self._tool_search(args)
            if tool_name == "mem0_add":
                return self._tool_add(args)
            if tool_name == "mem0_update":
                return self._tool_update(args)
            return self._tool_delete(args)
        except Unavailable as exc:
            return tool_error(str(exc))
        except CallFailed as exc:
            failure = exc.failure
            memory_id = str(args.get("memory_id") or "").strip()
            if failure.kind is FailureKind.NOT_FOUND and memory_id:
                return tool_error(f"Memory not found: {memory_id}")
            return tool_error(f"{tool_name} failed: {failure.message}", kind=failure.kind.value)

    @staticmethod
    def _text_arg(args: dict[str, Any], key: str) -> str | None:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
        return None

    def _tool_search(self, args: dict[str, Any]) -> str:
        query = self._text_arg(args, "query")
        if query is None:
            return tool_error("mem0_search needs a non-empty 'query' string.")
        top_k_raw = args.get("top_k", 10)
        try:
            top_k = min(50, max(1, int(top_k_raw)))
        except (TypeError, ValueError):
            return tool_error(f"'top_k' must be an integer from 1 to 50, got {top_k_raw!r}.")
        settings = self._settings
        assert settings is not None
        rerank = bool(args.get("rerank", settings.rerank)) and settings.mode == "platform"
        results = self._call(
            "mem0_search",
            lambda b: b.search(query, user_id=self._user_id, top_k=top_k, rerank=rerank),
            wait=self._connect_wait(),
        )
        if not results:
            return tool_result({"result": "No relevant memories found.", "count": 0})
        items = [
            {"id": r.get("id"), "memory": r.get("memory"), "score": r.get("score")}
            for r in results[:top_k]
        ]
        return tool_result({"results": items, "count": len(items)})

    def _tool_add(self, args: dict[str, Any]) -> str:
        content = self._text_arg(args, "content")
        if content is None:
            return tool_error("mem0_add needs a non-empty 'content' string.")
        blocked = _threat_message(content)
        if blocked:
            return tool_error(blocked)
        if not self._writes_enabled:
            return tool_error("mem0_add is disabled for this agent context (read-only).")
        metadata = {"source": "hermes-tool", "channel": self._platform or ""}
        result = self._call(
            "mem0_add",
            lambda b: b.add(
                [{"role": "user", "content": content}],
                user_id=self._user_id,
                agent_id=self._agent_id,
                infer=False,
                metadata=metadata,
            ),
            wait=self._connect_wait(),
        )
        if result.get("event_id") or str(result.get("status", "")).upper() == "PENDING":
            queued = {"result": "Fact queued for storage.", "event_id": result.get("event_id")}
            return tool_result(queued)
        ids = [
            str(r["id"]) for r in result.get("results", []) if isinstance(r, dict) and r.get("id")
        ]
        payload: dict[str, Any] = {"result": "Fact stored."}
        if ids:
            payload["memory_ids"] = ids
        return tool_result(payload)

    def _tool_update(self, args: dict[str, Any]) -> str:
        memory_id = self._text_arg(args, "memory_id")
        text = self._text_arg(args, "text")
        if memory_id is None or text is None:
            return tool_error("mem0_update needs non-empty 'memory_id' and 'text' strings.")
        blocked = _threat_message(text)
        if blocked:
            return tool_error(blocked)
        if not self._writes_enabled:
            return tool_error("mem0_update is disabled for this agent context (read-only).")
        self._call("mem0_update", lambda b: b.update(memory_id, text), wait=self._connect_wait())
        return tool_result({"result": "Memory updated.", "memory_id": memory_id})

    def _tool_delete(self, args: dict[str, Any]) -> str:
        memory_id = self._text_arg(args, "memory_id")
        if memory_id is None:
            return tool_error("mem0_delete needs a non-empty 'memory_id' string.")
        if not self._writes_enabled:
            return tool_error("mem0_delete is disabled for this agent context (read-only).")
        self._call("mem0_delete", lambda b: b.delete(memory_id), wait=self._connect_wait())
        return tool_result({"result": "Memory deleted.", "memory_id": memory_id})


def _threat_message(text: str) -> str | None:
    """The core's strict threat scan: the refusal message, or None when ``text`` is clean."""
    return first_threat_message(text, scope="strict")
