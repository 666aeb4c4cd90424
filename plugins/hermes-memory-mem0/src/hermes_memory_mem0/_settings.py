"""Configuration of the mem0 adapter: the ``mem0:`` section of ``config.yaml`` plus env vars,
declared once as `Mem0Settings` (core validates it and hands it to the provider as
``Mem0Provider.settings``).

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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_memory_core.kit import Settings, SettingsError, setting

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


class ConfigError(SettingsError):
    """A ``mem0:`` setting has the wrong type or value; the message names the key."""


@dataclass(frozen=True)
class Mem0Settings(Settings):
    """Resolved configuration of the adapter (see the module docstring for precedence).

    ``mode`` is always one of `MODES` once loaded; empty strings read as ``None``.
    """

    section = "mem0"

    mode: str = setting(
        "",
        "platform (hosted mem0), selfhosted (mem0 REST server at host) or oss (local "
        "mem0.Memory). Default: oss if an oss block exists, selfhosted if host is set, "
        "else platform.",
        env="MEM0_MODE",
        choices=MODES,
    )
    api_key: str | None = setting(
        None,
        "mem0 API key (platform: required; selfhosted: sent as X-API-Key only when set).",
        env="MEM0_API_KEY",
        secret=True,
    )
    host: str | None = setting(
        None,
        "Base URL of a self-hosted mem0 server (or a Platform-compatible host).",
        env="MEM0_HOST",
    )
    org_id: str | None = setting(
        None,
        "Expected mem0 organisation; a mismatch with the key's org is reported.",
        env="MEM0_ORG_ID",
    )
    project_id: str | None = setting(
        None,
        "Expected mem0 project; a mismatch with the key's project is reported.",
        env="MEM0_PROJECT_ID",
    )
    user_id: str | None = setting(
        None,
        f"Whose memories these are. Default: the gateway's user id, else '{DEFAULT_USER_ID}'.",
        env="MEM0_USER_ID",
    )
    agent_id: str = setting(
        DEFAULT_AGENT_ID, "Agent id attached to stored memories.", env="MEM0_AGENT_ID"
    )
    rerank: bool = setting(False, "Ask the Platform to rerank search results.", env="MEM0_RERANK")
    recall_top_k: int = setting(8, "Memories recalled into a turn (1..50).")
    recall_max_chars: int = setting(1500, "Cap on the recalled text per turn.")
    prefetch_wait: float = setting(
        1.5, "Seconds prefetch waits for a fresh search before returning what is cached."
    )
    sync_infer: bool = setting(True, "Let mem0 extract facts from synced turns (infer=True).")
    sync_max_chars: int = setting(
        450, "Each synced message is cut to this many chars at a sentence end."
    )
    timeout: float = setting(10.0, "Per-request read/write timeout in seconds.", env="MEM0_TIMEOUT")
    connect_timeout: float = setting(3.0, "TCP connect timeout in seconds.")
    connect_retries: int = setting(
        1,
        "Retries of a failed TCP connect (requests are never re-sent once the server "
        "received them).",
    )
    breaker_threshold: int = setting(5, "Consecutive failures that open the circuit breaker.")
    breaker_cooldown: float = setting(
        120.0, "Seconds the breaker stays open before one trial call."
    )
    flush_timeout: float = setting(10.0, "Seconds on_session_end waits for queued writes.")
    shutdown_timeout: float = setting(5.0, "Seconds shutdown waits for queued writes.")
    telemetry: bool = setting(
        False, "Allow mem0's own PostHog telemetry (off unless true).", env="MEM0_TELEMETRY"
    )
    oss: dict[str, Any] = setting(  # noqa: RUF009 (copied for every instance)
        {},
        "OSS mode: mem0 MemoryConfig pieces {llm, embedder, vector_store, reranker, "
        "history_db_path, custom_instructions}.",
    )

    @property
    def telemetry_explicit(self) -> bool:
        """Whether ``telemetry`` was set (file or environment) rather than defaulted."""
        return "telemetry" in self.explicit

    @property
    def unknown_keys(self) -> tuple[str, ...]:
        """The section's keys that no setting declares (same as `unknown`)."""
        return self.unknown

    @classmethod
    def adjust(cls, key: str, value: Any) -> Any:
        """``self-hosted``, ``server``, ``REST`` … all mean ``selfhosted``."""
        if key != "mode" or not isinstance(value, str):
            return value
        mode = value.strip().lower().replace("-", "").replace("_", "")
        return "selfhosted" if mode in ("selfhost", "server", "rest") else mode

    @classmethod
    def prepare(cls, values: dict[str, Any], explicit: frozenset[str]) -> dict[str, Any]:
        """Empty text is unset; the mode is inferred; the integers are clamped (mem0's rule:
        ``recall_top_k`` to 1..50, ``breaker_threshold`` to at least 1)."""
        values = {k: (v or None) if isinstance(v, str) else v for k, v in values.items()}
        values["agent_id"] = values.get("agent_id") or DEFAULT_AGENT_ID
        if values.get("user_id") == DEFAULT_USER_ID:  # the placeholder counts as unset
            values["user_id"] = None
        if values.get("mode") is None:
            values["mode"] = (
                "oss" if "oss" in explicit else "selfhosted" if values.get("host") else "platform"
            )
        if values.get("host"):
            values["host"] = str(values["host"]).rstrip("/")
        values["oss"] = values.get("oss") or {}
        values["recall_top_k"] = min(50, max(1, int(values["recall_top_k"])))
        values["breaker_threshold"] = max(1, int(values["breaker_threshold"]))
        return values

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


#: Every configuration key, its type, default and environment variable.
CONFIG_FIELDS = Mem0Settings.fields()


def load_settings(
    config: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
) -> Mem0Settings:
    """Resolve the adapter's settings outside a provider (core does it for the provider).

    :param config: the whole parsed ``config.yaml`` (its ``mem0:`` section is used) or None.
    :param env: environment variables (default ``os.environ``).
    :raises ConfigError: a value has the wrong type; the message names the key.
    """
    try:
        return Mem0Settings.from_config(config, environ=env)
    except SettingsError as exc:
        raise ConfigError(str(exc)) from None
