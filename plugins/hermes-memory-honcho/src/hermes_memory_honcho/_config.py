"""Settings of the Honcho adapter, declared once as the typed `HonchoConfig`.

Three sources, per key, first one that sets it wins:

1. ``config.yaml``, section ``honcho:`` (this project's own file; the camelCase spellings of
   ``honcho.json`` are accepted there too);
2. Hermes' ``honcho.json`` (its ``hosts.<host>`` block, then its root; see
   `hermes_memory_honcho._honcho_json`): it beats the environment as it does in Hermes;
3. the environment variable (``HONCHO_API_KEY``, ``HONCHO_BASE_URL`` or ``HONCHO_URL``, ...);
4. the default.

With ``HERMES_HONCHO_HOST`` set and no workspace given anywhere, the workspace is the host
name (as in Hermes). Core validates the result once (`hermes_memory_core.kit.Settings`) and
hands it to the provider as ``HonchoProvider.settings``; `compose_section` is the step that
folds ``honcho.json``, the aliases and the host default into the section first.

Secrets belong in the environment (``HONCHO_API_KEY``); ``api_key`` in ``config.yaml`` or
``apiKey`` in ``honcho.json`` works but is discouraged; the key is never logged or shown,
not even in the message about a key of the wrong type.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hermes_memory_core.kit import Field, Settings, SettingsError, setting
from hermes_memory_honcho._honcho_json import (
    DEFAULT_HOST,
    JSON_KEYS,
    HonchoJsonError,
    read_honcho_json,
)

__all__ = [
    "CONFIG_FIELDS",
    "HonchoConfig",
    "HonchoConfigError",
    "compose_section",
    "is_private_host",
    "normalize_base_url",
    "sanitize_id",
    "session_key",
    "value_problem",
]

#: Honcho accepts ids matching this pattern only (422 otherwise).
ID_PATTERN = re.compile(r"^[a-zA-Z0-9_-]+$")
#: Longest session id we send (the server's column limit).
MAX_SESSION_ID = 100
RECALL_MODES = ("hybrid", "context", "tools")
REASONING_LEVELS = ("minimal", "low", "medium", "high", "max")


class HonchoConfigError(SettingsError):
    """The Honcho settings cannot be used; the message names the key and where it was set."""


@dataclass(frozen=True)
class HonchoConfig(Settings):
    """The resolved ``honcho:`` settings (each attribute's description is its meaning)."""

    section = "honcho"

    enabled: bool = setting(True, "Set false to keep the provider off.", env="HONCHO_ENABLED")
    api_key: str = setting(
        "",
        "Honcho API key (Honcho cloud). Prefer the environment variable.",
        env="HONCHO_API_KEY",
        secret=True,
    )
    base_url: str = setting(
        "",
        "Base URL of a self-hosted Honcho server, e.g. http://127.0.0.1:8000 "
        "(a trailing /v3 is stripped). Empty means Honcho cloud.",
        env="HONCHO_BASE_URL",
    )
    environment: str = setting(
        "production",
        "Honcho cloud environment when no base_url is set.",
        env="HONCHO_ENVIRONMENT",
        choices=("production", "local"),
    )
    workspace: str = setting("hermes", "Honcho workspace id.", env="HONCHO_WORKSPACE_ID")
    peer_name: str = setting(
        "",
        "Peer id of the user; empty uses the gateway user id, else 'user'.",
        env="HONCHO_PEER_NAME",
    )
    ai_peer: str = setting("hermes", "Peer id of the assistant.", env="HONCHO_AI_PEER")
    recall_mode: str = setting(
        "hybrid",
        "hybrid: recall injected and tools offered; context: recall only; tools: tools only.",
        env="HONCHO_RECALL_MODE",
        choices=RECALL_MODES,
    )
    timeout: float = setting(8.0, "Seconds per HTTP attempt (read/write).", env="HONCHO_TIMEOUT")
    connect_timeout: float = setting(3.0, "Seconds to open a connection.")
    max_retries: int = setting(
        1,
        "SDK retries on 429/5xx/timeouts/connection errors (backoff 0.5 s, 1 s; a "
        "Retry-After header is honoured up to max_retry_after).",
    )
    max_retry_after: float = setting(2.0, "Longest Retry-After wait honoured, seconds.")
    tool_timeout: float = setting(15.0, "Longest a Honcho tool call may hold the agent, seconds.")
    prefetch_wait: float = setting(
        1.5, "Longest prefetch waits for this turn's recall before returning what is ready."
    )
    context_tokens: int = setting(800, "Budget of injected recall, in tokens (~4 chars).")
    context_cadence: int = setting(1, "Refresh the base context every N turns.")
    dialectic_cadence: int = setting(
        3, "Ask Honcho's dialectic (peer.chat) every N turns; 0 = off."
    )
    dialectic_reasoning_level: str = setting(
        "low", "reasoning_level of dialectic recall.", choices=REASONING_LEVELS
    )
    dialectic_max_chars: int = setting(600, "Cap of injected dialectic text.")
    message_max_chars: int = setting(
        25000, "Messages longer than this are split (the server's message size limit)."
    )
    observe_me: bool = setting(True, "Session peer config: others observe this peer.")
    observe_others: bool = setting(True, "Session peer config: this peer observes others.")
    failure_threshold: int = setting(5, "Consecutive failures that open the circuit breaker.")
    cooldown: float = setting(60.0, "Seconds the breaker stays open before a retry.")
    flush_timeout: float = setting(10.0, "Longest on_session_end waits for pending writes.")
    shutdown_timeout: float = setting(5.0, "Longest shutdown waits for pending writes.")
    max_pending_turns: int = setting(200, "Unsynced turns kept while Honcho is down.")

    def check(self) -> None:
        """Ranges and id patterns (`value_problem`), naming the ``honcho.<key>``."""
        for spec in CONFIG_FIELDS:
            problem = value_problem(spec.key, getattr(self, spec.key))
            if problem:
                raise HonchoConfigError(f"honcho.{spec.key} {problem}")

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


#: The settings as kit `Field` objects (types, environment variables, defaults).
CONFIG_FIELDS: tuple[Field, ...] = HonchoConfig.fields()

_POSITIVE = frozenset({"timeout", "connect_timeout", "tool_timeout", "context_tokens"})
_NON_NEGATIVE = frozenset(
    {
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
    }
)
_IDS = frozenset({"workspace", "ai_peer", "peer_name"})


def value_problem(key: str, value: Any) -> str:
    """What is wrong with an already typed ``value`` of setting ``key`` (``""``: nothing):
    ``"must be greater than 0"`` and the like. One rule set for every source."""
    if key in _POSITIVE and value <= 0:
        return "must be greater than 0"
    if key in _NON_NEGATIVE and value < 0:
        return "must not be negative"
    if key == "message_max_chars" and value < 100:
        return "must be at least 100"
    if key == "failure_threshold" and value < 1:
        return "must be at least 1"
    if key in _IDS and value and not ID_PATTERN.match(value):
        return f"{value!r} must match ^[a-zA-Z0-9_-]+$"
    return ""


#: Environment variables read as another field's when that field's own is unset.
_ENV_ALIASES = {"HONCHO_BASE_URL": "HONCHO_URL"}
# camelCase spellings of hermes-agent's honcho.json, accepted so a user can paste them.
_ALIASES = JSON_KEYS


class _Hidden:
    """Stands in for a secret of the wrong type, so no message can print it."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"{self.kind} (value not shown)"


def compose_section(
    config: Mapping[str, Any] | None, home: Path | None, environ: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The ``honcho:`` section and environment that `HonchoConfig` is validated with:
    ``config.yaml``'s section (camelCase aliases folded), below it the values of
    ``honcho.json``, the workspace from ``HERMES_HONCHO_HOST`` when nothing sets one, and
    ``HONCHO_URL`` as ``HONCHO_BASE_URL``.

    :raises HonchoConfigError: ``config.yaml``'s ``honcho:`` is not a mapping, or
        ``honcho.json`` cannot be used (the message names the file and the key).
    """
    env = dict(environ)
    for name, alias in _ENV_ALIASES.items():
        if not env.get(name, "").strip() and env.get(alias, "").strip():
            env[name] = env[alias]
    section = (config or {}).get("honcho") if isinstance(config, Mapping) else None
    if section is not None and not isinstance(section, Mapping):
        raise HonchoConfigError(
            f"honcho must be a mapping of settings, got {type(section).__name__}"
        )
    given = {_ALIASES.get(str(k), str(k)): v for k, v in (section or {}).items()}
    key = given.get("api_key")
    if key is not None and not isinstance(key, str):
        given["api_key"] = _Hidden(type(key).__name__)
    try:
        file = read_honcho_json(home, env, CONFIG_FIELDS, value_problem)
    except HonchoJsonError as exc:
        raise HonchoConfigError(str(exc)) from None
    for name, value in file.values.items():
        if given.get(name) is None:
            given[name] = value
    unset = given.get("workspace") is None and not env.get("HONCHO_WORKSPACE_ID", "").strip()
    if unset and file.host != DEFAULT_HOST:
        given["workspace"] = sanitize_id(file.host, fallback=DEFAULT_HOST)
    return given, env


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
