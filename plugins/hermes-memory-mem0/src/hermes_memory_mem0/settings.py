"""Configuration of the mem0 adapter: the ``mem0:`` section of ``config.yaml`` plus env vars.

Precedence for every key: a value in ``config.yaml`` (``mem0:`` section) wins over the
environment variable, which wins over the default. Secrets (``api_key``) are best kept in the
environment (``MEM0_API_KEY``).

Three modes:

* ``platform`` — mem0's hosted API through the real ``mem0.MemoryClient`` (``api.mem0.ai``,
  or ``host`` for a Platform-compatible endpoint). Needs ``api_key``.
* ``selfhosted`` — mem0's own REST server (``server/`` in the mem0 repository) at ``host``;
  ``X-API-Key`` is sent only when ``api_key`` is set.
* ``oss`` — the in-process ``mem0.Memory`` library with a local vector store (qdrant on disk
  under ``<home>/mem0/qdrant`` unless ``oss.vector_store`` says otherwise).

Without an explicit ``mode`` the adapter picks ``oss`` when an ``oss:`` block is present,
``selfhosted`` when a ``host`` is set, and ``platform`` otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_memory_core.coerce import as_bool, as_non_negative_float

__all__ = [
    "CONFIG_FIELDS",
    "DEFAULT_AGENT_ID",
    "DEFAULT_USER_ID",
    "MODES",
    "ConfigError",
    "Mem0Settings",
    "load_settings",
]

MODES = ("platform", "selfhosted", "oss")
DEFAULT_USER_ID = "hermes-user"
DEFAULT_AGENT_ID = "hermes"
PLATFORM_HOST = "https://api.mem0.ai"


class ConfigError(ValueError):
    """A ``mem0:`` setting has the wrong type or value; the message names the key."""


#: Internal type names → the `get_config_schema` vocabulary shared with Hermes' setup wizard
#: (text / integer / number / boolean; ``object`` for the nested ``oss`` section).
_SCHEMA_TYPES = {
    "str": "text",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "dict": "object",
}


@dataclass(frozen=True)
class _Field:
    key: str
    description: str
    type: str
    default: Any = None
    env_var: str | None = None
    secret: bool = False
    choices: tuple[str, ...] | None = None

    def as_schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "key": self.key,
            "description": self.description,
            "type": _SCHEMA_TYPES[self.type],
            "secret": self.secret,
            "required": False,
        }
        if self.default is not None:
            out["default"] = self.default
        if self.env_var:
            out["env_var"] = self.env_var
        if self.choices:
            out["choices"] = list(self.choices)
        return out


#: Every configuration key, its type, default and environment variable.
CONFIG_FIELDS: tuple[_Field, ...] = (
    _Field(
        "mode",
        "platform (hosted mem0), selfhosted (mem0 REST server at host) or oss (local "
        "mem0.Memory). Default: oss if an oss block exists, selfhosted if host is set, "
        "else platform.",
        "str",
        env_var="MEM0_MODE",
        choices=MODES,
    ),
    _Field(
        "api_key",
        "mem0 API key (platform: required; selfhosted: sent as X-API-Key only when set).",
        "str",
        env_var="MEM0_API_KEY",
        secret=True,
    ),
    _Field(
        "host",
        "Base URL of a self-hosted mem0 server (or a Platform-compatible host).",
        "str",
        env_var="MEM0_HOST",
    ),
    _Field(
        "org_id",
        "Expected mem0 organisation; a mismatch with the key's org is reported.",
        "str",
        env_var="MEM0_ORG_ID",
    ),
    _Field(
        "project_id",
        "Expected mem0 project; a mismatch with the key's project is reported.",
        "str",
        env_var="MEM0_PROJECT_ID",
    ),
    _Field(
        "user_id",
        f"Whose memories these are. Default: the gateway's user id, else '{DEFAULT_USER_ID}'.",
        "str",
        env_var="MEM0_USER_ID",
    ),
    _Field(
        "agent_id",
        "Agent id attached to stored memories.",
        "str",
        DEFAULT_AGENT_ID,
        env_var="MEM0_AGENT_ID",
    ),
    _Field(
        "rerank", "Ask the Platform to rerank search results.", "bool", False, env_var="MEM0_RERANK"
    ),
    _Field("recall_top_k", "Memories recalled into a turn (1..50).", "int", 8),
    _Field("recall_max_chars", "Cap on the recalled text per turn.", "int", 1500),
    _Field(
        "prefetch_wait",
        "Seconds prefetch waits for a fresh search before returning what is cached.",
        "float",
        1.5,
    ),
    _Field("sync_infer", "Let mem0 extract facts from synced turns (infer=True).", "bool", True),
    _Field(
        "sync_max_chars",
        "Each synced message is cut to this many chars at a sentence end.",
        "int",
        450,
    ),
    _Field(
        "timeout",
        "Per-request read/write timeout in seconds.",
        "float",
        10.0,
        env_var="MEM0_TIMEOUT",
    ),
    _Field("connect_timeout", "TCP connect timeout in seconds.", "float", 3.0),
    _Field(
        "connect_retries",
        "Retries of a failed TCP connect (requests are never re-sent "
        "once the server received them).",
        "int",
        1,
    ),
    _Field("breaker_threshold", "Consecutive failures that open the circuit breaker.", "int", 5),
    _Field(
        "breaker_cooldown", "Seconds the breaker stays open before one trial call.", "float", 120.0
    ),
    _Field("flush_timeout", "Seconds on_session_end waits for queued writes.", "float", 10.0),
    _Field("shutdown_timeout", "Seconds shutdown waits for queued writes.", "float", 5.0),
    _Field(
        "telemetry",
        "Allow mem0's own PostHog telemetry (off unless true).",
        "bool",
        False,
        env_var="MEM0_TELEMETRY",
    ),
    _Field(
        "oss",
        "OSS mode: mem0 MemoryConfig pieces {llm, embedder, vector_store, reranker, "
        "history_db_path, custom_instructions}.",
        "dict",
    ),
)

_ENV = {f.key: f.env_var for f in CONFIG_FIELDS if f.env_var}
_DEFAULTS = {f.key: f.default for f in CONFIG_FIELDS}
_TYPES = {f.key: f.type for f in CONFIG_FIELDS}


@dataclass(frozen=True)
class Mem0Settings:
    """Resolved configuration of the adapter (see the module docstring for precedence)."""

    mode: str
    api_key: str | None = None
    host: str | None = None
    org_id: str | None = None
    project_id: str | None = None
    user_id: str | None = None
    agent_id: str = DEFAULT_AGENT_ID
    rerank: bool = False
    recall_top_k: int = 8
    recall_max_chars: int = 1500
    prefetch_wait: float = 1.5
    sync_infer: bool = True
    sync_max_chars: int = 450
    timeout: float = 10.0
    connect_timeout: float = 3.0
    connect_retries: int = 1
    breaker_threshold: int = 5
    breaker_cooldown: float = 120.0
    flush_timeout: float = 10.0
    shutdown_timeout: float = 5.0
    telemetry: bool = False
    telemetry_explicit: bool = False
    oss: dict[str, Any] = field(default_factory=dict)
    unknown_keys: tuple[str, ...] = ()

    def missing(self) -> str:
        """What is missing for this mode to work (``""`` when nothing is)."""
        if self.mode == "platform" and not self.api_key:
            return (
                "mem0 platform mode needs an API key: set MEM0_API_KEY (or mem0.api_key in "
                "config.yaml); for a self-hosted server set MEM0_HOST, for local OSS mode add "
                "a `mem0: {mode: oss, oss: {...}}` section"
            )
        if self.mode == "selfhosted" and not self.host:
            return "mem0 selfhosted mode needs the server URL: set MEM0_HOST (or mem0.host)"
        return ""


def _parse_int(key: str, value: Any) -> int:
    # Not core's as_int: a fractional YAML number is truncated here (7.9 -> 7), as it always was.
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"mem0.{key} must be a number, got {value!r}") from None
    if isinstance(value, bool) or number < 0:
        raise ConfigError(f"mem0.{key} must be a non-negative number, got {value!r}")
    return number


def _coerce(key: str, value: Any) -> Any:
    kind = _TYPES[key]
    if kind == "int":
        return _parse_int(key, value)
    if kind in ("bool", "float"):
        try:
            return as_bool(value) if kind == "bool" else as_non_negative_float(value)
        except ValueError as exc:
            raise ConfigError(f"mem0.{key} {exc}, got {value!r}") from None
    if kind == "dict":
        if not isinstance(value, Mapping):
            raise ConfigError(f"mem0.{key} must be a mapping, got {type(value).__name__}")
        return dict(value)
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise ConfigError(f"mem0.{key} must be a string, got {value!r}")
    text = str(value).strip()
    return text or None


def load_settings(
    config: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
) -> Mem0Settings:
    """Resolve the adapter's settings.

    :param config: the whole parsed ``config.yaml`` (its ``mem0:`` section is used) or None.
    :param env: environment variables (default ``os.environ``).
    :raises ConfigError: a value has the wrong type; the message names the key.
    """
    env = os.environ if env is None else env
    section_raw = (config or {}).get("mem0") or {}
    if not isinstance(section_raw, Mapping):
        raise ConfigError("the mem0 section of config.yaml must be a mapping")
    section: dict[str, Any] = dict(section_raw)
    unknown = tuple(sorted(k for k in section if k not in _TYPES))

    values: dict[str, Any] = {}
    explicit: set[str] = set()
    for key in _TYPES:
        raw: Any = None
        if section.get(key) is not None:
            raw = section[key]
        elif _ENV.get(key) and env.get(_ENV[key], "").strip():
            raw = env[_ENV[key]]
        if raw is None:
            values[key] = _DEFAULTS[key]
            continue
        explicit.add(key)
        values[key] = _coerce(key, raw)
    if values.get("agent_id") is None:
        values["agent_id"] = DEFAULT_AGENT_ID
    if values.get("user_id") == DEFAULT_USER_ID:  # the placeholder counts as unset
        values["user_id"] = None

    mode = values.pop("mode")
    if mode is not None:
        mode = str(mode).lower().replace("-", "").replace("_", "")
        if mode in ("selfhost", "server", "rest"):
            mode = "selfhosted"
        if mode not in MODES:
            raise ConfigError(f"mem0.mode must be one of {', '.join(MODES)}, got {mode!r}")
    elif "oss" in explicit:
        mode = "oss"
    elif values.get("host"):
        mode = "selfhosted"
    else:
        mode = "platform"
    if values["host"]:
        values["host"] = str(values["host"]).rstrip("/")
    oss = values.pop("oss") or {}
    for key in ("recall_top_k", "breaker_threshold"):
        values[key] = max(1, int(values[key]))
    values["recall_top_k"] = min(50, values["recall_top_k"])
    values["connect_retries"] = int(values["connect_retries"])
    return Mem0Settings(
        mode=mode,
        oss=oss,
        telemetry_explicit="telemetry" in explicit,
        unknown_keys=unknown,
        **values,
    )
