"""Settings of the Honcho adapter: the ``honcho:`` section of ``config.yaml``, Hermes'
``honcho.json``, and environment variables.

Precedence, per key: ``config.yaml`` (``honcho:`` section) > ``honcho.json`` (its
``hosts.<host>`` block, then its root; see `hermes_memory_honcho.honcho_json`) >
environment variable > default. ``config.yaml`` is this project's own file and wins; the
JSON file beats the environment as it does in Hermes. With ``HERMES_HONCHO_HOST`` set and no
workspace given anywhere, the workspace is the host name (as in Hermes).

Secrets belong in the environment (``HONCHO_API_KEY``); ``api_key`` in ``config.yaml`` or
``apiKey`` in ``honcho.json`` works but is discouraged; the key is never logged or shown.
The fields are declared once with the kit (`hermes_memory_core.kit.Field`): an unknown key
logs a warning; a value of the wrong type raises `HonchoConfigError` naming the key and
where it was set.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hermes_memory_core.kit import Field, load_section
from hermes_memory_core.kit import config_schema as kit_config_schema
from hermes_memory_honcho.honcho_json import (
    DEFAULT_HOST,
    FileSettings,
    HonchoJsonError,
    read_honcho_json,
)

__all__ = [
    "CONFIG_FIELDS",
    "HonchoConfig",
    "HonchoConfigError",
    "config_schema",
    "is_private_host",
    "load_settings",
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


CONFIG_FIELDS: tuple[Field, ...] = (
    Field("enabled", bool, True, "Set false to keep the provider off.", env="HONCHO_ENABLED"),
    Field(
        "api_key",
        str,
        "",
        "Honcho API key (Honcho cloud). Prefer the environment variable.",
        env="HONCHO_API_KEY",
        secret=True,
    ),
    Field(
        "base_url",
        str,
        "",
        "Base URL of a self-hosted Honcho server, e.g. http://127.0.0.1:8000 "
        "(a trailing /v3 is stripped). Empty means Honcho cloud.",
        env="HONCHO_BASE_URL",
    ),
    Field(
        "environment",
        str,
        "production",
        "Honcho cloud environment when no base_url is set.",
        env="HONCHO_ENVIRONMENT",
        choices=("production", "local"),
    ),
    Field("workspace", str, "hermes", "Honcho workspace id.", env="HONCHO_WORKSPACE_ID"),
    Field(
        "peer_name",
        str,
        "",
        "Peer id of the user; empty uses the gateway user id, else 'user'.",
        env="HONCHO_PEER_NAME",
    ),
    Field("ai_peer", str, "hermes", "Peer id of the assistant.", env="HONCHO_AI_PEER"),
    Field(
        "recall_mode",
        str,
        "hybrid",
        "hybrid: recall injected and tools offered; context: recall only; tools: tools only.",
        env="HONCHO_RECALL_MODE",
        choices=RECALL_MODES,
    ),
    Field("timeout", float, 8.0, "Seconds per HTTP attempt (read/write).", env="HONCHO_TIMEOUT"),
    Field("connect_timeout", float, 3.0, "Seconds to open a connection."),
    Field(
        "max_retries",
        int,
        1,
        "SDK retries on 429/5xx/timeouts/connection errors (backoff 0.5 s, 1 s; a "
        "Retry-After header is honoured up to max_retry_after).",
    ),
    Field("max_retry_after", float, 2.0, "Longest Retry-After wait honoured, seconds."),
    Field("tool_timeout", float, 15.0, "Longest a Honcho tool call may hold the agent, seconds."),
    Field(
        "prefetch_wait",
        float,
        1.5,
        "Longest prefetch waits for this turn's recall before returning what is ready.",
    ),
    Field("context_tokens", int, 800, "Budget of injected recall, in tokens (~4 chars)."),
    Field("context_cadence", int, 1, "Refresh the base context every N turns."),
    Field(
        "dialectic_cadence", int, 3, "Ask Honcho's dialectic (peer.chat) every N turns; 0 = off."
    ),
    Field(
        "dialectic_reasoning_level",
        str,
        "low",
        "reasoning_level of dialectic recall.",
        choices=REASONING_LEVELS,
    ),
    Field("dialectic_max_chars", int, 600, "Cap of injected dialectic text."),
    Field(
        "message_max_chars",
        int,
        25000,
        "Messages longer than this are split (the server's message size limit).",
    ),
    Field("observe_me", bool, True, "Session peer config: others observe this peer."),
    Field("observe_others", bool, True, "Session peer config: this peer observes others."),
    Field("failure_threshold", int, 5, "Consecutive failures that open the circuit breaker."),
    Field("cooldown", float, 60.0, "Seconds the breaker stays open before a retry."),
    Field("flush_timeout", float, 10.0, "Longest on_session_end waits for pending writes."),
    Field("shutdown_timeout", float, 5.0, "Longest shutdown waits for pending writes."),
    Field("max_pending_turns", int, 200, "Unsynced turns kept while Honcho is down."),
)

_FIELD_BY_KEY = {f.key: f for f in CONFIG_FIELDS}
#: Environment variables read as another field's when that field's own is unset.
_ENV_ALIASES = {"HONCHO_BASE_URL": "HONCHO_URL"}
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
        file: FileSettings | None = None,
    ) -> HonchoConfig:
        """Resolve settings from a ``honcho:`` mapping, a read ``honcho.json`` and the
        environment (in that order of precedence).

        :raises HonchoConfigError: a value of the wrong type or outside its choices.
        """
        env = dict(os.environ if environ is None else environ)
        for name, alias in _ENV_ALIASES.items():
            if not env.get(name, "").strip() and env.get(alias, "").strip():
                env[name] = env[alias]
        given = {_ALIASES.get(str(k), str(k)): v for k, v in (section or {}).items()}
        key = given.get("api_key")
        if key is not None and not isinstance(key, str):
            raise HonchoConfigError("honcho.api_key must be a string")  # never echo a key
        labels: dict[str, str] = {}
        for name, value in (file.values if file is not None else {}).items():
            if given.get(name) is None:
                given[name] = value
                labels[name] = file.labels[name] if file is not None else name
        loaded = load_section(
            CONFIG_FIELDS, given, where="honcho", environ=env, error=HonchoConfigError
        )
        for unknown in loaded.unknown:
            logger.warning("config.yaml honcho.%s is not a known setting; ignored", unknown)
        values = {k: v for k, v in loaded.values.items() if k in loaded.explicit}
        if file is not None and "workspace" not in values and file.host != DEFAULT_HOST:
            values["workspace"] = sanitize_id(file.host, fallback=DEFAULT_HOST)
            labels["workspace"] = "the host name (HERMES_HONCHO_HOST)"
        cfg = cls(**values)
        cfg._check(lambda k: labels.get(k, f"honcho.{k}"))
        return cfg

    def _check(self, name: Callable[[str], str] | None = None) -> None:
        label = name or (lambda k: f"honcho.{k}")
        positive = ("timeout", "connect_timeout", "tool_timeout", "context_tokens")
        for key in positive:
            if getattr(self, key) <= 0:
                raise HonchoConfigError(f"{label(key)} must be greater than 0")
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
                raise HonchoConfigError(f"{label(key)} must not be negative")
        if self.message_max_chars < 100:
            raise HonchoConfigError(f"{label('message_max_chars')} must be at least 100")
        if self.failure_threshold < 1:
            raise HonchoConfigError(f"{label('failure_threshold')} must be at least 1")
        for key in ("workspace", "ai_peer"):
            if not ID_PATTERN.match(getattr(self, key)):
                raise HonchoConfigError(
                    f"{label(key)} {getattr(self, key)!r} must match ^[a-zA-Z0-9_-]+$"
                )
        if self.peer_name and not ID_PATTERN.match(self.peer_name):
            raise HonchoConfigError(
                f"{label('peer_name')} {self.peer_name!r} must match ^[a-zA-Z0-9_-]+$"
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


def load_settings(
    raw: Mapping[str, Any] | None, home: Path | None, environ: Mapping[str, str] | None
) -> HonchoConfig:
    """The ``honcho:`` section of ``raw`` (the parsed ``config.yaml``; read from ``home``
    when None) resolved with ``honcho.json`` (``home/honcho.json``, else
    ``$HOME/.honcho/config.json``) and the environment.

    :raises HonchoConfigError: a malformed file or setting; the message names the file and
        the key, never the API key's value.
    """
    env = os.environ if environ is None else environ
    try:
        file = read_honcho_json(home, env, CONFIG_FIELDS)
    except HonchoJsonError as exc:
        raise HonchoConfigError(str(exc)) from None
    if raw is None and home is not None:
        from hermes_memory_core.config import ConfigError, load_config

        try:
            raw = load_config(home).raw
        except ConfigError as exc:
            raise HonchoConfigError(str(exc)) from exc
    section = (raw or {}).get("honcho") if isinstance(raw, Mapping) else None
    if section is not None and not isinstance(section, Mapping):
        raise HonchoConfigError("config.yaml honcho: must be a mapping")
    return HonchoConfig.load(section, environ, file)


def config_schema() -> list[dict[str, Any]]:
    """The settings as `MemoryProvider.get_config_schema` entries."""
    return kit_config_schema(CONFIG_FIELDS)


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

    Distinct inputs that sanitize to the same text stay distinct through the hash suffix
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
