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

from hermes_memory_core.kit import Field, load_section

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


#: Every configuration key, its type, default and environment variable.
CONFIG_FIELDS: tuple[Field, ...] = (
    Field(
        "mode",
        str,
        None,
        "platform (hosted mem0), selfhosted (mem0 REST server at host) or oss (local "
        "mem0.Memory). Default: oss if an oss block exists, selfhosted if host is set, "
        "else platform.",
        env="MEM0_MODE",
        choices=MODES,
    ),
    Field(
        "api_key",
        str,
        None,
        "mem0 API key (platform: required; selfhosted: sent as X-API-Key only when set).",
        env="MEM0_API_KEY",
        secret=True,
    ),
    Field(
        "host",
        str,
        None,
        "Base URL of a self-hosted mem0 server (or a Platform-compatible host).",
        env="MEM0_HOST",
    ),
    Field(
        "org_id",
        str,
        None,
        "Expected mem0 organisation; a mismatch with the key's org is reported.",
        env="MEM0_ORG_ID",
    ),
    Field(
        "project_id",
        str,
        None,
        "Expected mem0 project; a mismatch with the key's project is reported.",
        env="MEM0_PROJECT_ID",
    ),
    Field(
        "user_id",
        str,
        None,
        f"Whose memories these are. Default: the gateway's user id, else '{DEFAULT_USER_ID}'.",
        env="MEM0_USER_ID",
    ),
    Field(
        "agent_id",
        str,
        DEFAULT_AGENT_ID,
        "Agent id attached to stored memories.",
        env="MEM0_AGENT_ID",
    ),
    Field("rerank", bool, False, "Ask the Platform to rerank search results.", env="MEM0_RERANK"),
    Field("recall_top_k", int, 8, "Memories recalled into a turn (1..50)."),
    Field("recall_max_chars", int, 1500, "Cap on the recalled text per turn."),
    Field(
        "prefetch_wait",
        float,
        1.5,
        "Seconds prefetch waits for a fresh search before returning what is cached.",
    ),
    Field("sync_infer", bool, True, "Let mem0 extract facts from synced turns (infer=True)."),
    Field(
        "sync_max_chars",
        int,
        450,
        "Each synced message is cut to this many chars at a sentence end.",
    ),
    Field("timeout", float, 10.0, "Per-request read/write timeout in seconds.", env="MEM0_TIMEOUT"),
    Field("connect_timeout", float, 3.0, "TCP connect timeout in seconds."),
    Field(
        "connect_retries",
        int,
        1,
        "Retries of a failed TCP connect (requests are never re-sent "
        "once the server received them).",
    ),
    Field("breaker_threshold", int, 5, "Consecutive failures that open the circuit breaker."),
    Field(
        "breaker_cooldown", float, 120.0, "Seconds the breaker stays open before one trial call."
    ),
    Field("flush_timeout", float, 10.0, "Seconds on_session_end waits for queued writes."),
    Field("shutdown_timeout", float, 5.0, "Seconds shutdown waits for queued writes."),
    Field(
        "telemetry",
        bool,
        False,
        "Allow mem0's own PostHog telemetry (off unless true).",
        env="MEM0_TELEMETRY",
    ),
    Field(
        "oss",
        dict,
        None,
        "OSS mode: mem0 MemoryConfig pieces {llm, embedder, vector_store, reranker, "
        "history_db_path, custom_instructions}.",
    ),
)


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


def _mode_alias(text: str) -> str:
    """``self-hosted``, ``server``, ``REST`` … all mean ``selfhosted``."""
    mode = text.strip().lower().replace("-", "").replace("_", "")
    return "selfhosted" if mode in ("selfhost", "server", "rest") else mode


def load_settings(
    config: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
) -> Mem0Settings:
    """Resolve the adapter's settings.

    :param config: the whole parsed ``config.yaml`` (its ``mem0:`` section is used) or None.
    :param env: environment variables (default ``os.environ``).
    :raises ConfigError: a value has the wrong type; the message names the key.
    """
    section_raw = (config or {}).get("mem0") or {}
    if not isinstance(section_raw, Mapping):
        raise ConfigError("the mem0 section of config.yaml must be a mapping")
    section, environ = dict(section_raw), dict(os.environ if env is None else env)
    if isinstance(section.get("mode"), str):
        section["mode"] = _mode_alias(section["mode"])
    if environ.get("MEM0_MODE"):
        environ["MEM0_MODE"] = _mode_alias(environ["MEM0_MODE"])
    loaded = load_section(CONFIG_FIELDS, section, where="mem0", environ=environ, error=ConfigError)
    values: dict[str, Any] = {
        key: (value or None) if isinstance(value, str) else value
        for key, value in loaded.values.items()
    }
    explicit, unknown = loaded.explicit, loaded.unknown
    if values.get("agent_id") is None:
        values["agent_id"] = DEFAULT_AGENT_ID
    if values.get("user_id") == DEFAULT_USER_ID:  # the placeholder counts as unset
        values["user_id"] = None

    mode = values.pop("mode")
    if mode is None:
        mode = "oss" if "oss" in explicit else "selfhosted" if values.get("host") else "platform"
    if values["host"]:
        values["host"] = str(values["host"]).rstrip("/")
    oss = values.pop("oss") or {}
    for key in ("recall_top_k", "breaker_threshold"):
        values[key] = max(1, int(values[key]))
    values["recall_top_k"] = min(50, values["recall_top_k"])
    return Mem0Settings(
        mode=mode,
        oss=oss,
        telemetry_explicit="telemetry" in explicit,
        unknown_keys=unknown,
        **values,
    )
