"""Settings of the Honcho adapter: the ``honcho:`` section of ``config.yaml`` plus env vars.

Precedence, per key: ``config.yaml`` (``honcho:`` section) > environment variable > default.
Secrets belong in the environment (``HONCHO_API_KEY``); ``api_key`` in the file works but is
discouraged. An unknown key logs a warning; a value of the wrong type raises
`HonchoConfigError` naming the key.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any
from urllib.parse import urlsplit

from hermes_memory_core.coerce import as_bool, as_float, as_int

__all__ = [
    "CONFIG_FIELDS",
    "ConfigField",
    "HonchoConfig",
    "HonchoConfigError",
    "config_schema",
    "is_private_host",
    "normalize_base_url",
    "sanitize_id",
    "session_key",
]

logger = logging.getLogger(__name__)

#: Honcho accepts ids matching this pattern only (422 otherwise).
ID_PATTERN = re.compile(r"^[a-zA-Z0-9_-]+$")
#: Longest session id we send (the server's column limit).
MAX_SESSION_ID = 100
RECALL_MODES = ("hybrid", "context", "tools")
REASONING_LEVELS = ("minimal", "low", "medium", "high", "max")


class HonchoConfigError(ValueError):
    """The ``honcho:`` settings cannot be used; the message names the key."""


@dataclass(frozen=True)
class ConfigField:
    """One documented setting: its ``config.yaml`` key, env var, type and default."""

    key: str
    kind: type
    default: Any
    description: str
    env_var: str | None = None
    secret: bool = False
    choices: tuple[str, ...] = ()


CONFIG_FIELDS: tuple[ConfigField, ...] = (
    ConfigField("enabled", bool, True, "Set false to keep the provider off.", "HONCHO_ENABLED"),
    ConfigField(
        "api_key",
        str,
        "",
        "Honcho API key (Honcho cloud). Prefer the environment variable.",
        "HONCHO_API_KEY",
        secret=True,
    ),
    ConfigField(
        "base_url",
        str,
        "",
        "Base URL of a self-hosted Honcho server, e.g. http://127.0.0.1:8000 "
        "(a trailing /v3 is stripped). Empty means Honcho cloud.",
        "HONCHO_BASE_URL",
    ),
    ConfigField(
        "environment",
        str,
        "production",
        "Honcho cloud environment when no base_url is set.",
        "HONCHO_ENVIRONMENT",
        choices=("production", "local"),
    ),
    ConfigField("workspace", str, "hermes", "Honcho workspace id.", "HONCHO_WORKSPACE_ID"),
    ConfigField(
        "peer_name",
        str,
        "",
        "Peer id of the user; empty uses the gateway user id, else 'user'.",
        "HONCHO_PEER_NAME",
    ),
    ConfigField("ai_peer", str, "hermes", "Peer id of the assistant.", "HONCHO_AI_PEER"),
    ConfigField(
        "recall_mode",
        str,
        "hybrid",
        "hybrid: recall injected and tools offered; context: recall only; tools: tools only.",
        "HONCHO_RECALL_MODE",
        choices=RECALL_MODES,
    ),
    ConfigField("timeout", float, 8.0, "Seconds per HTTP attempt (read/write).", "HONCHO_TIMEOUT"),
    ConfigField("connect_timeout", float, 3.0, "Seconds to open a connection."),
    ConfigField(
        "max_retries",
        int,
        1,
        "SDK retries on 429/5xx/timeouts/connection errors (backoff 0.5 s, 1 s; a "
        "Retry-After header is honoured up to max_retry_after).",
    ),
    ConfigField("max_retry_after", float, 2.0, "Longest Retry-After wait honoured, seconds."),
    ConfigField(
        "tool_timeout", float, 15.0, "Longest a Honcho tool call may hold the agent, seconds."
    ),
    ConfigField(
        "prefetch_wait",
        float,
        1.5,
        "Longest prefetch waits for this turn's recall before returning what is ready.",
    ),
    ConfigField("context_tokens", int, 800, "Budget of injected recall, in tokens (~4 chars)."),
    ConfigField("context_cadence", int, 1, "Refresh the base context every N turns."),
    ConfigField(
        "dialectic_cadence", int, 3, "Ask Honcho's dialectic (peer.chat) every N turns; 0 = off."
    ),
    ConfigField(
        "dialectic_reasoning_level",
        str,
        "low",
        "reasoning_level of dialectic recall.",
        choices=REASONING_LEVELS,
    ),
    ConfigField("dialectic_max_chars", int, 600, "Cap of injected dialectic text."),
    ConfigField(
        "message_max_chars",
        int,
        25000,
        "Messages longer than this are split (the server's message size limit).",
    ),
    ConfigField("observe_me", bool, True, "Session peer config: others observe this peer."),
    ConfigField("observe_others", bool, True, "Session peer config: this peer observes others."),
    ConfigField("failure_threshold", int, 5, "Consecutive failures that open the circuit breaker."),
    ConfigField("cooldown", float, 60.0, "Seconds the breaker stays open before a retry."),
    ConfigField("flush_timeout", float, 10.0, "Longest on_session_end waits for pending writes."),
    ConfigField("shutdown_timeout", float, 5.0, "Longest shutdown waits for pending writes."),
    ConfigField("max_pending_turns", int, 200, "Unsynced turns kept while Honcho is down."),
)

_FIELD_BY_KEY = {f.key: f for f in CONFIG_FIELDS}
# camelCase spellings of hermes-agent's honcho.json, accepted so a user can paste them.
_ALIASES = {
    "apiKey": "api_key",
    "baseUrl": "base_url",
    "peerName": "peer_name",
    "aiPeer": "ai_peer",
    "recallMode": "recall_mode",
    "requestTimeout": "timeout",
    "contextTokens": "context_tokens",
    "contextCadence": "context_cadence",
    "dialecticCadence": "dialectic_cadence",
    "dialecticReasoningLevel": "dialectic_reasoning_level",
    "dialecticMaxChars": "dialectic_max_chars",
    "messageMaxChars": "message_max_chars",
}


@dataclass(frozen=True)
class HonchoConfig:
    """Resolved adapter settings (see `CONFIG_FIELDS` for each key's meaning)."""

    enabled: bool = True
    api_key: str = ""
    base_url: str = ""
    environment: str = "production"
    workspace: str = "hermes"
    peer_name: str = ""
    ai_peer: str = "hermes"
    recall_mode: str = "hybrid"
    timeout: float = 8.0
    connect_timeout: float = 3.0
    max_retries: int = 1
    max_retry_after: float = 2.0
    tool_timeout: float = 15.0
    prefetch_wait: float = 1.5
    context_tokens: int = 800
    context_cadence: int = 1
    dialectic_cadence: int = 3
    dialectic_reasoning_level: str = "low"
    dialectic_max_chars: int = 600
    message_max_chars: int = 25000
    observe_me: bool = True
    observe_others: bool = True
    failure_threshold: int = 5
    cooldown: float = 60.0
    flush_timeout: float = 10.0
    shutdown_timeout: float = 5.0
    max_pending_turns: int = 200

    @classmethod
    def load(
        cls,
        section: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> HonchoConfig:
        """Resolve settings from a ``honcho:`` mapping and the environment.

        :raises HonchoConfigError: a value of the wrong type or outside its choices.
        """
        env = os.environ if environ is None else environ
        given: dict[str, Any] = {}
        for raw_key, value in (section or {}).items():
            key = _ALIASES.get(str(raw_key), str(raw_key))
            if key not in _FIELD_BY_KEY:
                logger.warning("config.yaml honcho.%s is not a known setting; ignored", raw_key)
                continue
            given[key] = value
        values: dict[str, Any] = {}
        for spec in CONFIG_FIELDS:
            if spec.key in given and given[spec.key] is not None:
                values[spec.key] = _coerce(spec, given[spec.key], f"honcho.{spec.key}")
                continue
            env_value = _env(env, spec)
            if env_value is not None:
                values[spec.key] = _coerce(spec, env_value, spec.env_var or spec.key)
        cfg = cls(**values)
        cfg._check()
        return cfg

    def _check(self) -> None:
        positive = ("timeout", "connect_timeout", "tool_timeout", "context_tokens")
        for key in positive:
            if getattr(self, key) <= 0:
                raise HonchoConfigError(f"honcho.{key} must be greater than 0")
        non_negative = (
            "max_retries",
            "max_retry_after",
            "prefetch_wait",
            "context_cadence",
            "dialectic_cadence",
            "dialectic_max_chars",
            "cooldown",
            "flush_timeout",
            "shutdown_timeout",
            "max_pending_turns",
        )
        for key in non_negative:
            if getattr(self, key) < 0:
                raise HonchoConfigError(f"honcho.{key} must not be negative")
        if self.message_max_chars < 100:
            raise HonchoConfigError("honcho.message_max_chars must be at least 100")
        if self.failure_threshold < 1:
            raise HonchoConfigError("honcho.failure_threshold must be at least 1")
        for key in ("workspace", "ai_peer"):
            if not ID_PATTERN.match(getattr(self, key)):
                raise HonchoConfigError(
                    f"honcho.{key} {getattr(self, key)!r} must match ^[a-zA-Z0-9_-]+$"
                )
        if self.peer_name and not ID_PATTERN.match(self.peer_name):
            raise HonchoConfigError(
                f"honcho.peer_name {self.peer_name!r} must match ^[a-zA-Z0-9_-]+$"
            )

    @property
    def resolved_base_url(self) -> str:
        """The URL the SDK talks to (self-hosted base URL or the cloud environment)."""
        if self.base_url:
            return normalize_base_url(self.base_url)
        if self.environment == "local":
            return "http://localhost:8000"
        return "https://api.honcho.dev"

    @property
    def self_hosted(self) -> bool:
        """True when a base URL (or the ``local`` environment) is configured."""
        return bool(self.base_url) or self.environment == "local"

    def missing(self) -> str:
        """Why this configuration cannot reach Honcho (``""`` when it can)."""
        if not self.enabled:
            return "Honcho is disabled (honcho.enabled is false)."
        if not self.api_key and not self.self_hosted:
            return (
                "No Honcho credentials: set HONCHO_API_KEY for Honcho cloud, or "
                "HONCHO_BASE_URL (config.yaml honcho.base_url) for a self-hosted server."
            )
        return ""


def _env(env: Mapping[str, str], spec: ConfigField) -> str | None:
    names = [spec.env_var] if spec.env_var else []
    if spec.key == "base_url":
        names.append("HONCHO_URL")
    for name in names:
        if name and env.get(name, "").strip():
            return env[name].strip()
    return None


# Shared with core's config.yaml parsing: the same words mean true/false everywhere.
_CONVERTERS: dict[type, Callable[[Any], Any]] = {bool: as_bool, int: as_int, float: as_float}


def _coerce(spec: ConfigField, value: Any, label: str) -> Any:
    kind = spec.kind
    result: Any
    if kind in _CONVERTERS:
        try:
            result = _CONVERTERS[kind](value)
        except ValueError as exc:
            raise HonchoConfigError(f"{label} {exc}, got {value!r}") from None
    else:
        if not isinstance(value, str):
            raise HonchoConfigError(f"{label} must be a string, got {value!r}")
        result = value.strip()
    if spec.choices and result not in spec.choices:
        raise HonchoConfigError(f"{label} must be one of {', '.join(spec.choices)}; got {result!r}")
    return result


def config_schema() -> list[dict[str, Any]]:
    """The settings as `MemoryProvider.get_config_schema` entries."""
    defaults = {f.name: f.default for f in fields(HonchoConfig)}
    out: list[dict[str, Any]] = []
    for spec in CONFIG_FIELDS:
        entry: dict[str, Any] = {
            "key": spec.key,
            "description": spec.description,
            "type": {bool: "boolean", int: "integer", float: "number"}.get(spec.kind, "text"),
            "default": defaults[spec.key],
            "secret": spec.secret,
            "required": False,
        }
        if spec.env_var:
            entry["env_var"] = spec.env_var
        if spec.choices:
            entry["choices"] = list(spec.choices)
        out.append(entry)
    return out


def normalize_base_url(url: str) -> str:
    """Strip trailing slashes and a trailing ``/vN`` (the SDK's routes carry ``/v3``)."""
    url = url.strip().rstrip("/")
    return re.sub(r"/v\d+$", "", url)


def is_private_host(url: str) -> bool:
    """Loopback, RFC 1918, link-local or CGNAT host (or ``localhost``)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return False
    cgnat = ipaddress.ip_network("100.64.0.0/10")
    return addr.is_loopback or addr.is_private or addr.is_link_local or addr in cgnat


def sanitize_id(raw: str, *, fallback: str = "user", max_len: int = MAX_SESSION_ID) -> str:
    """Make ``raw`` a valid Honcho id: other characters become ``_``; long ids get a hash.

    Distinct inputs that sanitise to the same text stay distinct through the hash suffix
    whenever characters had to be replaced.
    """
    text = raw.strip()
    if not text:
        return fallback
    clean = re.sub(r"[^a-zA-Z0-9_-]", "_", text)
    if clean == text and len(clean) <= max_len:
        return clean
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
    return f"{clean[: max_len - 11]}-{digest}"


def session_key(session_id: str) -> str:
    """The Honcho session id for a hermes session id (valid, at most 100 chars)."""
    return sanitize_id(session_id, fallback="default")
