"""The ``supermemory:`` settings: declared once, read from ``config.yaml`` then the environment.

Every key has an environment variable (``SUPERMEMORY_<KEY>``); the file wins over the
environment, the environment over the default. A wrong value is refused with a message
naming the key, and the provider stays inactive instead of guessing.

The container tag is the Supermemory *namespace* (the 5.x API scopes every document,
search, profile and forget by a namespace in the URL path: ``/ns/{namespace}/…``).
``{identity}`` in it is replaced by the ``user_id`` the agent passes at session start.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_memory_core.kit import Field, SettingsError, config_schema, load_section

__all__ = [
    "DEFAULT_URL",
    "FIELDS",
    "SupermemoryConfigError",
    "SupermemorySettings",
    "load_settings",
    "namespace_for",
    "schema",
]

#: Supermemory's hosted API.
DEFAULT_URL = "https://api.supermemory.ai"

SEARCH_MODES = ("memories", "hybrid", "chunks")

# The SDK puts the namespace into the URL path without percent-encoding it, so only
# characters that cannot change the path are accepted (letters of any script, digits, . _ : @ -).
_NAMESPACE = re.compile(r"^[\w.:@-]{1,100}$")

FIELDS = (
    Field("api_key", str, "", "API key (sent as a Bearer token).",
          env="SUPERMEMORY_API_KEY", secret=True),
    Field("base_url", str, DEFAULT_URL, "API URL (a proxy or a self-hosted deployment).",
          env="SUPERMEMORY_BASE_URL"),
    Field("container_tag", str, "hermes",
          "The Supermemory namespace everything is stored in and searched; "
          "{identity} is replaced by the agent's user id.",
          env="SUPERMEMORY_CONTAINER_TAG"),
    Field("timeout", float, 5.0, "Seconds one request may take (connect, send, each read).",
          env="SUPERMEMORY_TIMEOUT", minimum=0.1),
    Field("auto_recall", bool, True, "Search the container for each user message.",
          env="SUPERMEMORY_AUTO_RECALL"),
    Field("auto_capture", bool, True,
          "Ingest the conversation (at session end, compression and reset) and mirror "
          "curated memory writes.", env="SUPERMEMORY_AUTO_CAPTURE"),
    Field("profile_every", int, 5,
          "Refresh the container profile injected with recall every N turns (0: never).",
          env="SUPERMEMORY_PROFILE_EVERY", minimum=0),
    Field("search_mode", str, "memories",
          "What recall searches: memories (learned facts), hybrid (facts and source passages) "
          "or chunks.", env="SUPERMEMORY_SEARCH_MODE", choices=SEARCH_MODES),
    Field("search_limit", int, 5, "Memories recalled per turn.",
          env="SUPERMEMORY_SEARCH_LIMIT", minimum=1),
    Field("prefetch_wait", float, 3.0,
          "Seconds a turn waits for its recall; a late answer is used by the next turn "
          "that asks the same.", env="SUPERMEMORY_PREFETCH_WAIT", minimum=0),
    Field("recall_max_chars", int, 2000, "Longest recall block injected into a turn.",
          env="SUPERMEMORY_RECALL_MAX_CHARS", minimum=200),
    Field("max_session_chars", int, 100_000,
          "Longest conversation text sent in one ingest (older turns are sent first, in "
          "parts).", env="SUPERMEMORY_MAX_SESSION_CHARS", minimum=1000),
    Field("retries", int, 1,
          "Extra attempts after a timeout, a refused connection, a 429 or a 5xx.",
          env="SUPERMEMORY_RETRIES", minimum=0),
    Field("breaker_threshold", int, 3, "Consecutive failures that pause calls.",
          env="SUPERMEMORY_BREAKER_THRESHOLD", minimum=1),
    Field("breaker_cooldown", float, 60.0, "Seconds calls stay paused.",
          env="SUPERMEMORY_BREAKER_COOLDOWN", minimum=0),
    Field("max_pending", int, 256, "Writes kept while the service is unreachable.",
          env="SUPERMEMORY_MAX_PENDING", minimum=1),
)  # fmt: skip


class SupermemoryConfigError(SettingsError):
    """A ``supermemory:`` setting cannot be used; the message names the key."""


@dataclass(frozen=True)
class SupermemorySettings:
    """The resolved settings (see `FIELDS` for each one's meaning)."""

    api_key: str
    base_url: str
    container_tag: str
    timeout: float
    auto_recall: bool
    auto_capture: bool
    profile_every: int
    search_mode: str
    search_limit: int
    prefetch_wait: float
    recall_max_chars: int
    max_session_chars: int
    retries: int
    breaker_threshold: int
    breaker_cooldown: float
    max_pending: int
    unknown: tuple[str, ...] = ()

    def missing(self) -> str:
        """What keeps the provider from running, in one sentence (``""``: nothing)."""
        if not self.api_key:
            return "set SUPERMEMORY_API_KEY (or supermemory.api_key)"
        return ""


def namespace_for(tag: str, identity: str = "") -> str:
    """The namespace for container tag ``tag`` (``{identity}`` filled in).

    :raises SupermemoryConfigError: the result could change the URL path or is empty.
    """
    filled = tag.replace("{identity}", identity.strip() or "default")
    if not _NAMESPACE.match(filled) or filled in (".", ".."):
        raise SupermemoryConfigError(
            "supermemory.container_tag must be 1-100 letters, digits or . _ : @ - "
            f"(no spaces, slashes or invisible characters), got {filled!r}"
        )
    return filled


def _section(config: Mapping[str, Any] | None, home: Path | None) -> Any:
    if config is None and home is not None:
        path = home / "config.yaml"
        if path.is_file():
            import yaml

            try:
                config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            except (OSError, yaml.YAMLError) as exc:
                raise SupermemoryConfigError(f"cannot read {path}: {exc}") from None
    section = (config or {}).get("supermemory") if isinstance(config, Mapping) else None
    if section is not None and not isinstance(section, Mapping):
        raise SupermemoryConfigError("the supermemory section of config.yaml must be a mapping")
    return section


def load_settings(
    config: Mapping[str, Any] | None,
    home: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> SupermemorySettings:
    """Resolve the settings from ``config["supermemory"]`` (or ``<home>/config.yaml`` when
    ``config`` is None), then the environment, then the defaults.

    :raises SupermemoryConfigError: a value of the wrong type, out of range or unusable.
    """
    loaded = load_section(
        FIELDS,
        _section(config, home),
        where="supermemory",
        environ=environ,
        error=SupermemoryConfigError,
    )
    values = dict(loaded.values)
    url = str(values["base_url"]).rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise SupermemoryConfigError(f"supermemory.base_url must be an http(s) URL, got {url!r}")
    values["base_url"] = url
    namespace_for(str(values["container_tag"]), "x")  # validate the tag itself
    return SupermemorySettings(**values, unknown=loaded.unknown)


def schema() -> list[dict[str, Any]]:
    """Every setting in the ``get_config_schema`` vocabulary."""
    return config_schema(FIELDS)
