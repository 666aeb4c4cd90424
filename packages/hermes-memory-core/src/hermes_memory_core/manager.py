"""`MemoryManager`: one builtin tier plus at most one external provider, each isolated.

Method names follow Hermes Agent's manager, so an agent written against it ports by changing
an import. Every hook is called for one provider at a time inside its own try/except; an
external provider's prefetch runs on a daemon thread bounded by ``prefetch_timeout``; syncs
run in order on one background worker. Everything handed to a provider passes the secret
scrubber first, and recall comes back fenced in a ``<memory-context>`` block.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

import pluggy

from hermes_memory_core.config import HermesConfig, load_config, resolve_home
from hermes_memory_core.fencing import build_memory_context_block, sanitize_context
from hermes_memory_core.hookspecs import PROJECT_NAME, PROVIDER_HOOK_NAMES, ProviderSpec
from hermes_memory_core.plugins import PluginRegistry, accepted_kwargs, get_registry
from hermes_memory_core.provider import BUILTIN_TIER_NAMES, MemoryProvider, ToolSchema
from hermes_memory_core.redact import scrub_secrets
from hermes_memory_core.threats import scan_for_threats
from hermes_memory_core.toolresult import tool_error
from hermes_memory_core.trivial import is_trivial_prompt
from hermes_memory_core.worker import SerialWorker

__all__ = ["MemoryManager"]

logger = logging.getLogger(__name__)

DEFAULT_PREFETCH_TIMEOUT = 8.0
DEFAULT_SHUTDOWN_TIMEOUT = 5.0
MEMORY_TOOL_NAME = "memory"


class _ProviderHookValidator(pluggy.PluginManager):
    """Registers provider instances against `ProviderSpec` without needing markers.

    A subclass method that overrides a marked base method loses pluggy's marker; here every
    public method named like a lifecycle hook counts as an implementation, so pluggy can
    still refuse a method whose parameters the spec does not know.
    """

    def parse_hookimpl_opts(self, plugin: object, name: str) -> pluggy.HookimplOpts | None:
        if name in PROVIDER_HOOK_NAMES and callable(getattr(plugin, name, None)):
            return {
                "wrapper": False,
                "hookwrapper": False,
                "optionalhook": False,
                "tryfirst": False,
                "trylast": False,
                "specname": None,
            }
        return None


class MemoryManager:
    """Route memory hooks and tools to the builtin tier and at most one external provider.

    ``MemoryManager()`` needs no arguments: add providers with `add_provider`. Or build the
    whole stack from ``<home>/config.yaml`` with `MemoryManager.from_config`.

    :param prefetch_timeout: seconds an external provider's `prefetch` may take before the
        turn goes on without it (default 8).
    :param shutdown_timeout: seconds `shutdown_all` and `on_session_end` wait for queued
        syncs (default 5).
    :param hermes_home: passed to providers' `initialize` as ``hermes_home``.
    :param scrub_secrets: mask credentials in everything handed to providers (default on).
    """

    def __init__(
        self,
        *,
        prefetch_timeout: float = DEFAULT_PREFETCH_TIMEOUT,
        shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT,
        hermes_home: str | Path | None = None,
        scrub_secrets: bool = True,
    ) -> None:
        if not prefetch_timeout > 0:
            raise ValueError(
                f"prefetch_timeout must be a positive number of seconds, got {prefetch_timeout!r}"
            )
        if not shutdown_timeout >= 0:
            raise ValueError(f"shutdown_timeout must be >= 0 seconds, got {shutdown_timeout!r}")
        self.prefetch_timeout = float(prefetch_timeout)
        self.shutdown_timeout = float(shutdown_timeout)
        self.hermes_home = Path(hermes_home).expanduser() if hermes_home is not None else None
        self.scrub = scrub_secrets
        self.config: HermesConfig | None = None
        self.session_id = ""
        self._providers: list[MemoryProvider] = []
        self._tool_routes: dict[str, MemoryProvider] = {}
        self._tool_schemas: list[ToolSchema] = []
        self._validator = _ProviderHookValidator(PROJECT_NAME)
        self._validator.add_hookspecs(ProviderSpec)
        self._worker = SerialWorker("hermes-memory-sync")
        self._prefetch_inflight: dict[str, threading.Thread] = {}
        self._lock = threading.RLock()

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_config(
        cls,
        home: str | Path | None = None,
        *,
        registry: PluginRegistry | None = None,
        **options: Any,
    ) -> MemoryManager:
        """Build builtin + sessions + the configured external provider from ``config.yaml``.

        ``home`` defaults to ``$HERMES_HOME`` or ``~/.hermes``. Providers come from the
        installed plugins (``registry`` defaults to the entry-point registry). A provider that
        is missing or unavailable is skipped with a warning; a malformed config raises
        `hermes_memory_core.ConfigError` naming the key. ``options`` override constructor
        arguments (e.g. ``prefetch_timeout``).
        """
        config = load_config(home)
        registry = registry if registry is not None else get_registry()
        options.setdefault("prefetch_timeout", config.memory.prefetch_timeout)
        manager = cls(hermes_home=config.home, **options)
        manager.config = config
        wanted = []
        if config.memory.memory_enabled or config.memory.user_profile_enabled:
            wanted.append("builtin")
        wanted.append("sessions")
        for name in wanted:
            if name not in registry.providers:
                logger.warning(
                    "memory tier %r is not installed; install hermes-memory-%s", name, name
                )
                continue
            manager._add_from_registry(registry, name, config)
        external = config.memory.provider
        if external and external not in BUILTIN_TIER_NAMES:
            if external not in registry.providers:
                installed = ", ".join(n for n in registry.names() if n not in BUILTIN_TIER_NAMES)
                logger.warning(
                    "memory.provider is %r but no such provider is installed (installed: %s); "
                    "try: pip install hermes-memory-%s",
                    external,
                    installed or "none",
                    external,
                )
            else:
                manager._add_from_registry(registry, external, config)
        return manager

    def _add_from_registry(self, registry: PluginRegistry, name: str, config: HermesConfig) -> None:
        try:
            provider = registry.create(name, hermes_home=config.home, config=config.raw)
            available = provider.is_available()
        except Exception as exc:
            logger.warning("memory provider %r could not be created: %s", name, exc)
            return
        if not available:
            reason = _safe_call(provider.unavailable_reason, "") or "not configured"
            logger.warning("memory provider %r is not available: %s", name, reason)
            return
        self.add_provider(provider)

    # ----------------------------------------------------------------- registration
    def add_provider(self, provider: MemoryProvider) -> bool:
        """Register ``provider``; returns whether it was accepted.

        Refused, with a warning: a non-provider, a duplicate name, a second external
        provider, a provider whose hook signatures do not match the specs, or one whose
        `get_tool_schemas` raises (it then does not take the external slot).
        """
        if not isinstance(cast(object, provider), MemoryProvider):  # untyped callers
            logger.warning("Rejected %r: memory providers must subclass MemoryProvider", provider)
            return False
        try:
            name = provider.name
            schemas = [s for s in (_normalise_schema(s) for s in provider.get_tool_schemas()) if s]
        except Exception as exc:
            logger.warning(
                "Rejected memory provider %r: get_tool_schemas() failed: %s", provider, exc
            )
            return False
        with self._lock:
            if self.get_provider(name) is not None:
                logger.warning(
                    "Rejected memory provider %r: a provider of that name is registered", name
                )
                return False
            if name not in BUILTIN_TIER_NAMES:
                current = self.external_provider
                if current is not None:
                    logger.warning(
                        "Rejected memory provider '%s' — external provider '%s' is already "
                        "registered. Only one external memory provider is allowed at a time. "
                        "Configure which one via memory.provider in config.yaml.",
                        name,
                        current.name,
                    )
                    return False
            try:
                self._validator.register(provider, name=f"{name}-{id(provider)}")
            except (pluggy.PluginValidationError, ValueError) as exc:
                logger.warning("Rejected memory provider %r: %s", name, exc)
                return False
            self._providers.append(provider)
            for schema in schemas:
                tool = schema["name"]
                owner = self._tool_routes.get(tool)
                if owner is not None:
                    logger.warning(
                        "Memory tool %r of provider %r is ignored: provider %r already provides it",
                        tool,
                        name,
                        owner.name,
                    )
                    continue
                self._tool_routes[tool] = provider
                self._tool_schemas.append(schema)
        return True

    @property
    def providers(self) -> list[MemoryProvider]:
        """Registered providers in registration order (a copy)."""
        with self._lock:
            return list(self._providers)

    @property
    def external_provider(self) -> MemoryProvider | None:
        """The one external provider, if any."""
        return next((p for p in self.providers if _name(p) not in BUILTIN_TIER_NAMES), None)

    def get_provider(self, name: str) -> MemoryProvider | None:
        """The provider called ``name``, or None."""
        return next((p for p in self.providers if _name(p) == name), None)

    # ----------------------------------------------------------------- session lifecycle
    def initialize_all(self, session_id: str, **kwargs: Any) -> None:
        """Initialise every provider for ``session_id`` (``hermes_home`` injected if missing)."""
        self.session_id = session_id
        home = self.hermes_home if self.hermes_home is not None else resolve_home()
        kwargs.setdefault("hermes_home", str(home))
        kwargs.setdefault("platform", "cli")
        for provider in self.providers:
            self._call(provider, "initialize", session_id, level=logging.WARNING, **kwargs)

    def build_system_prompt(self) -> str:
        """Non-empty `system_prompt_block`s joined by a blank line."""
        blocks = []
        for provider in self.providers:
            block = self._call(provider, "system_prompt_block", default="", level=logging.WARNING)
            if isinstance(block, str) and block.strip():
                blocks.append(block)
        return "\n\n".join(blocks)

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """Tell providers a user turn begins (extras passed where accepted)."""
        message = self._scrub(message)
        for provider in self.providers:
            self._call(provider, "on_turn_start", turn_number, message, **kwargs)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """A real session boundary: wait (bounded) for queued syncs, then tell every provider."""
        if not self._worker.drain(self.shutdown_timeout):
            logger.warning(
                "session end: queued memory syncs still running after %.1fs", self.shutdown_timeout
            )
        messages = self._scrub(messages)
        for provider in self.providers:
            self._call(provider, "on_session_end", messages, level=logging.WARNING)

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        """The agent continues under ``new_session_id`` (no-op for an empty id)."""
        if not new_session_id:
            return
        # Turns queued for the old session must land before providers close or end it.
        if not self._worker.drain(self.shutdown_timeout):
            logger.warning(
                "session switch: queued memory syncs still running after %.1fs",
                self.shutdown_timeout,
            )
        self.session_id = new_session_id
        extra: dict[str, Any] = {"parent_session_id": parent_session_id, "reset": reset, **kwargs}
        if rewound:
            extra["rewound"] = True
        for provider in self.providers:
            self._call(provider, "on_session_switch", new_session_id, **extra)

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Text providers want kept through compression, joined by a blank line."""
        messages = self._scrub(messages)
        parts = []
        for provider in self.providers:
            text = self._call(provider, "on_pre_compress", messages, default="")
            if isinstance(text, str) and text.strip():
                parts.append(text)
        return "\n\n".join(parts)

    def on_delegation(
        self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any
    ) -> None:
        """A subagent finished a delegated task."""
        task, result = self._scrub((task, result))
        for provider in self.providers:
            self._call(
                provider, "on_delegation", task, result, child_session_id=child_session_id, **kwargs
            )

    def shutdown_all(self) -> None:
        """Drain queued syncs (bounded), then shut providers down in reverse order."""
        if not self._worker.close(self.shutdown_timeout):
            logger.warning(
                "memory shutdown: %d queued sync(s) abandoned after %.1fs",
                self._worker.pending,
                self.shutdown_timeout,
            )
        for provider in reversed(self.providers):
            self._call(provider, "shutdown", level=logging.WARNING)

    # ----------------------------------------------------------------- recall
    def prefetch_all(self, query: str, *, session_id: str = "") -> str:
        """Recall for the coming turn, fenced in a ``<memory-context>`` block (``""`` if none).

        Builtin-tier providers run inline. The external provider runs on a daemon thread and
        is waited for at most ``prefetch_timeout``; while a previous call of it is still
        running it is skipped, and lines of its recall that the threat scanner flags (scope
        ``context``) are dropped: a remote memory store is untrusted text. Trivial prompts
        ("ok", "thanks", slash commands) recall nothing.
        """
        if is_trivial_prompt(query):
            return ""
        query = self._scrub(query)
        session_id = session_id or self.session_id
        parts: list[str] = []
        for provider in self.providers:
            if _name(provider) in BUILTIN_TIER_NAMES:
                text = self._call(provider, "prefetch", query, session_id=session_id, default="")
            else:
                recalled = self._bounded_prefetch(provider, query, session_id)
                text = _drop_threat_lines(recalled, provider)
            if isinstance(text, str) and text.strip():
                parts.append(text.strip())
        return build_memory_context_block("\n\n".join(parts))

    def _bounded_prefetch(self, provider: MemoryProvider, query: str, session_id: str) -> str:
        name = _name(provider)
        with self._lock:
            running = self._prefetch_inflight.get(name)
            if running is not None and running.is_alive():
                logger.debug(
                    "memory provider %r skipped: its previous prefetch is still running", name
                )
                return ""
            box: list[Any] = []

            def run() -> None:
                box.append(
                    self._call(provider, "prefetch", query, session_id=session_id, default="")
                )

            thread = threading.Thread(
                target=run, name=f"hermes-memory-prefetch-{name}", daemon=True
            )
            self._prefetch_inflight[name] = thread
        try:
            thread.start()
        except RuntimeError as exc:  # no threads left, or the interpreter is exiting
            logger.warning("memory provider %r prefetch not started: %s", name, exc)
            return ""
        thread.join(self.prefetch_timeout)
        if thread.is_alive():
            logger.warning(
                "memory provider %r prefetch exceeded %.1fs; continuing without it",
                name,
                self.prefetch_timeout,
            )
            return ""
        return box[0] if box and isinstance(box[0], str) else ""

    def queue_prefetch_all(self, query: str, *, session_id: str = "") -> None:
        """Warm every provider's next recall on the background worker."""
        if not self._providers or not query or not query.strip():
            return
        query = self._scrub(query)
        session_id = session_id or self.session_id
        providers = self.providers

        def task() -> None:
            for provider in providers:
                self._call(provider, "queue_prefetch", query, session_id=session_id)

        self._worker.submit(task)

    def sync_all(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> None:
        """Persist a finished turn in every provider, in order, on the background worker.

        ``messages`` (and any extra keyword) reach only providers whose ``sync_turn`` accepts
        them. Skipped when there is no provider or the user content is blank.
        """
        if not self._providers or not user_content or not user_content.strip():
            return
        # A host may pass the API copy of the user message, recall block included: storing it
        # would feed recalled text back into memory as if the user had said it.
        user_content = _strip_recall(user_content)
        if messages is not None:
            messages = [_strip_recall_message(m) for m in messages]
        user_content, assistant_content, messages, kwargs = self._scrub(
            (user_content, assistant_content, messages, kwargs)
        )
        session_id = session_id or self.session_id
        providers = self.providers
        extra: dict[str, Any] = {"session_id": session_id, **kwargs}
        if messages is not None:
            extra["messages"] = messages

        def task() -> None:
            for provider in providers:
                self._call(
                    provider,
                    "sync_turn",
                    user_content,
                    assistant_content,
                    level=logging.WARNING,
                    **extra,
                )

        if not self._worker.submit(task):
            logger.warning("memory sync after shutdown_all() was dropped (session %r)", session_id)

    def flush_pending(self, timeout: float | None = None) -> bool:
        """Block until queued syncs and prefetch warm-ups finished; False on timeout."""
        return self._worker.drain(timeout)

    # ----------------------------------------------------------------- tools
    def get_all_tool_schemas(self) -> list[ToolSchema]:
        """Every provider's tool schemas, first registration winning a name."""
        with self._lock:
            return [dict(s) for s in self._tool_schemas]

    def get_all_tool_names(self) -> list[str]:
        """Names of every routed tool."""
        with self._lock:
            return list(self._tool_routes)

    def has_tool(self, name: str) -> bool:
        """Whether some provider handles tool ``name``."""
        with self._lock:
            return name in self._tool_routes

    def handle_tool_call(
        self, name: str, args: Mapping[str, Any] | str | None, **kwargs: Any
    ) -> str:
        """Run tool ``name`` and return its JSON string.

        ``args`` is the model's argument object (or its raw JSON string). An unknown tool,
        arguments that are not an object, or a provider that raises all come back as
        ``{"error": ...}``. Successful builtin ``memory`` writes are mirrored to the external
        provider through `on_memory_write`.
        """
        with self._lock:
            provider = self._tool_routes.get(name)
        if provider is None:
            return tool_error(f"No memory provider handles tool '{name}'")
        if args is None:
            args = {}
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                return tool_error(f"Arguments for tool '{name}' are not valid JSON")
        if not isinstance(cast(object, args), Mapping):
            return tool_error(f"Arguments for tool '{name}' must be a JSON object")
        clean_args = self._scrub_tool_args(provider, dict(args))
        try:
            result = provider.handle_tool_call(name, clean_args, **kwargs)
        except Exception as exc:
            logger.warning("memory tool %r of provider %r failed: %s", name, _name(provider), exc)
            return tool_error(f"Memory tool '{name}' failed: {exc}")
        if not isinstance(cast(object, result), str):  # a provider may break its contract
            try:
                result = json.dumps(result, ensure_ascii=False, default=str)
            except (TypeError, ValueError):
                return tool_error(f"Memory tool '{name}' returned a non-JSON result")
        if name == MEMORY_TOOL_NAME and _name(provider) == "builtin":
            if clean_args != args:
                result = _note_redaction(result)
            self.notify_memory_tool_write(result, clean_args)
        return result

    def notify_memory_tool_write(self, tool_result: str, tool_args: Mapping[str, Any]) -> None:
        """Mirror a builtin ``memory`` tool result to the external provider, if it succeeded."""
        if self.external_provider is None:
            return
        try:
            payload = json.loads(tool_result)
        except ValueError:
            return
        if (
            not isinstance(payload, dict)
            or payload.get("success") is not True
            or payload.get("staged")
        ):
            return
        target = str(payload.get("target") or tool_args.get("target") or "memory")
        for action, content, metadata in _memory_writes(payload, tool_args):
            self.on_memory_write(action, target, content, metadata)

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        """Tell external providers about a builtin memory write."""
        content, metadata = self._scrub((content, metadata))
        meta = dict(metadata or {})
        meta.setdefault("session_id", self.session_id)
        for provider in self.providers:
            if _name(provider) in BUILTIN_TIER_NAMES:
                continue
            self._call(provider, "on_memory_write", action, target, content, metadata=meta)

    # ----------------------------------------------------------------- internals
    def _scrub(self, value: Any) -> Any:
        return scrub_secrets(value) if self.scrub else value

    def _scrub_tool_args(self, provider: MemoryProvider, args: dict[str, Any]) -> dict[str, Any]:
        """Scrub tool arguments, except the builtin tier's ``old_text`` locators.

        A locator only finds an entry and is never stored; scrubbing it would make an entry
        that already holds a credential (a hand edit) impossible to replace or remove.
        """
        clean: dict[str, Any] = self._scrub(args)
        if not self.scrub or _name(provider) not in BUILTIN_TIER_NAMES:
            return clean
        if "old_text" in args:
            clean["old_text"] = args["old_text"]
        ops, clean_ops = args.get("operations"), clean.get("operations")
        if isinstance(ops, list) and isinstance(clean_ops, list):
            for op, clean_op in zip(ops, clean_ops, strict=True):
                if isinstance(op, Mapping) and isinstance(clean_op, dict) and "old_text" in op:
                    clean_op["old_text"] = op["old_text"]
        return clean

    def _call(
        self,
        provider: MemoryProvider,
        hook: str,
        *args: Any,
        default: Any = None,
        level: int = logging.DEBUG,
        **kwargs: Any,
    ) -> Any:
        """Call one hook of one provider; an exception is logged and gives ``default``."""
        method: Callable[..., Any] | None = getattr(provider, hook, None)
        if method is None:
            return default
        try:
            return method(*args, **accepted_kwargs(method, kwargs))
        except Exception as exc:
            logger.log(
                level,
                "memory provider %r failed in %s: %s",
                _name(provider),
                hook,
                exc,
                exc_info=True,
            )
            return default


_REDACTION_NOTE = (
    "Credentials in the content were replaced by [redacted] before saving: memory is shown "
    "in every future prompt, so secrets are never stored there."
)


def _note_redaction(result: str) -> str:
    """Tell the model that the saved text differs from what it sent (secrets masked)."""
    try:
        payload = json.loads(result)
    except ValueError:
        return result
    if not isinstance(payload, dict) or payload.get("success") is not True:
        return result
    payload["redacted"] = _REDACTION_NOTE
    return json.dumps(payload, ensure_ascii=False)


def _drop_threat_lines(text: str, provider: MemoryProvider) -> str:
    """``text`` without the lines the threat scanner flags at ``context`` scope."""
    if not text:
        return text
    kept = []
    for line in text.splitlines():
        threats = scan_for_threats(line, "context")
        if threats:
            logger.warning(
                "memory provider %r recalled a line flagged as %s; it was not injected",
                _name(provider),
                ", ".join(threats),
            )
            continue
        kept.append(line)
    return "\n".join(kept)


def _strip_recall(text: str) -> str:
    return sanitize_context(text) if "<memory-context" in text.lower() else text


def _strip_recall_message(message: Any) -> Any:
    if isinstance(message, Mapping) and isinstance(message.get("content"), str):
        content = message["content"]
        cleaned = _strip_recall(content)
        if cleaned != content:
            return {**message, "content": cleaned}
    return message


def _memory_writes(
    payload: Mapping[str, Any], args: Mapping[str, Any]
) -> list[tuple[str, str, dict[str, Any]]]:
    """The (action, content, metadata) writes a successful memory tool result stands for."""
    operations = args.get("operations")
    if isinstance(operations, list) and operations:
        replaced = _index_map(payload.get("replaced_entries"))
        removed = _index_map(payload.get("removed_entries"))
        writes = []
        for index, op in enumerate(operations, start=1):
            if isinstance(op, Mapping):
                previous = replaced.get(index) or removed.get(index)
                writes.extend(_one_write(op, previous))
        return writes
    previous = payload.get("replaced_entry") or payload.get("removed_entry")
    return _one_write(args, previous if isinstance(previous, str) else None)


def _one_write(
    op: Mapping[str, Any], previous: str | None
) -> list[tuple[str, str, dict[str, Any]]]:
    action = op.get("action")
    if action not in ("add", "replace", "remove"):
        return []
    content = op.get("content")
    if content is None:
        content = op.get("new_text")
    metadata: dict[str, Any] = {}
    if op.get("old_text") is not None:
        metadata["old_text"] = op.get("old_text")
    if previous is not None:
        metadata["previous_content"] = previous
    if action == "remove":
        content = previous if previous is not None else op.get("old_text")
    if not isinstance(content, str):
        return []
    return [(action, content.strip(), metadata)]


def _index_map(value: Any) -> dict[int, str]:
    if not isinstance(value, Mapping):
        return {}
    result = {}
    for key, text in value.items():
        try:
            result[int(key)] = str(text)
        except (TypeError, ValueError):
            continue
    return result


def _normalise_schema(schema: Any) -> ToolSchema | None:
    if not isinstance(schema, Mapping):
        return None
    if schema.get("type") == "function" and isinstance(schema.get("function"), Mapping):
        schema = schema["function"]
    name = schema.get("name")
    if not isinstance(name, str) or not name:
        return None
    return dict(schema)


def _name(provider: MemoryProvider) -> str:
    try:
        return str(provider.name)
    except Exception:
        return "?"


def _safe_call(func: Callable[[], Any], default: Any) -> Any:
    try:
        return func()
    except Exception:
        return default
