"""The ``hindsight:`` settings: declared once, read from ``config.yaml`` then the environment.

Every key has an environment variable (``HINDSIGHT_<KEY>``); the file wins over the
environment, the environment over the default. A wrong value is refused with a message
naming the key, and the provider stays inactive instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_memory_core.kit import Field, SettingsError, config_schema, load_section

__all__ = [
    "CLOUD_URL",
    "FIELDS",
    "LOCAL_URL",
    "HindsightConfigError",
    "HindsightSettings",
    "load_settings",
    "schema",
]

#: Hindsight cloud.
CLOUD_URL = "https://api.hindsight.vectorize.io"
#: Where a self-hosted server listens by default.
LOCAL_URL = "http://localhost:8888"

MODES = ("cloud", "local_external", "local_embedded")
BUDGETS = ("low", "mid", "high")

_BANK = re.compile(r"^[\w.:@-]{1,128}$")

FIELDS = (
    Field(
        "mode",
        str,
        "cloud",
        "cloud (Hindsight cloud, needs api_key) or local_external (a server you run at api_url).",
        env="HINDSIGHT_MODE",
        choices=MODES,
    ),
    Field(
        "api_key",
        str,
        "",
        "API key (sent as a Bearer token).",
        env="HINDSIGHT_API_KEY",
        secret=True,
    ),
    Field(
        "api_url",
        str,
        "",
        f"Server URL (default: {CLOUD_URL} in cloud mode, {LOCAL_URL} in local_external mode).",
        env="HINDSIGHT_API_URL",
    ),
    Field(
        "bank_id",
        str,
        "hermes",
        "The memory bank everything is retained into and recalled from.",
        env="HINDSIGHT_BANK_ID",
    ),
    Field(
        "budget",
        str,
        "mid",
        "Recall/reflect effort: low, mid or high.",
        env="HINDSIGHT_BUDGET",
        choices=BUDGETS,
    ),
    Field(
        "timeout",
        float,
        30.0,
        "Seconds one request may take before it is abandoned.",
        env="HINDSIGHT_TIMEOUT",
        minimum=0.1,
    ),
    Field(
        "retain_every",
        int,
        1,
        "Retain the conversation every N turns (the rest is sent at session end).",
        env="HINDSIGHT_RETAIN_EVERY",
        minimum=1,
    ),
    Field(
        "retain_async",
        bool,
        True,
        "Let the server process retained turns in the background (the request returns at once).",
        env="HINDSIGHT_RETAIN_ASYNC",
    ),
    Field(
        "prefetch_method",
        str,
        "recall",
        "What each turn is given: recall (matching "
        "memories), reflect (a synthesised answer) or off.",
        env="HINDSIGHT_PREFETCH_METHOD",
        choices=("recall", "reflect", "off"),
    ),
    Field(
        "prefetch_wait",
        float,
        3.0,
        "Seconds a turn waits for its recall; a late answer "
        "is used by the next turn that asks the same.",
        env="HINDSIGHT_PREFETCH_WAIT",
        minimum=0,
    ),
    Field(
        "recall_max_tokens",
        int,
        1024,
        "Token budget of one recall on the server.",
        env="HINDSIGHT_RECALL_MAX_TOKENS",
        minimum=64,
    ),
    Field(
        "recall_max_chars",
        int,
        2000,
        "Longest recall block injected into a turn.",
        env="HINDSIGHT_RECALL_MAX_CHARS",
        minimum=200,
    ),
    Field(
        "retries",
        int,
        1,
        "Extra attempts after a timeout, a refused connection, a 429 or a 5xx.",
        env="HINDSIGHT_RETRIES",
        minimum=0,
    ),
    Field(
        "breaker_threshold",
        int,
        3,
        "Consecutive failures that pause calls.",
        env="HINDSIGHT_BREAKER_THRESHOLD",
        minimum=1,
    ),
    Field(
        "breaker_cooldown",
        float,
        60.0,
        "Seconds calls stay paused.",
        env="HINDSIGHT_BREAKER_COOLDOWN",
        minimum=0,
    ),
    Field(
        "max_pending",
        int,
        256,
        "Retains kept while the server is unreachable.",
        env="HINDSIGHT_MAX_PENDING",
        minimum=1,
    ),
)


class HindsightConfigError(SettingsError):
    """A ``hindsight:`` setting cannot be used; the message names the key."""


@dataclass(frozen=True)
class HindsightSettings:
    """The resolved settings (see `FIELDS` for each one's meaning)."""

    mode: str
    api_key: str
    api_url: str
    bank_id: str
    budget: str
    timeout: float
    retain_every: int
    retain_async: bool
    prefetch_method: str
    prefetch_wait: float
    recall_max_tokens: int
    recall_max_chars: int
    retries: int
    breaker_threshold: int
    breaker_cooldown: float
    max_pending: int
    unknown: tuple[str, ...] = ()

    @property
    def base_url(self) -> str:
        """The server URL, with the mode's default filled in and no trailing slash."""
        default = CLOUD_URL if self.mode == "cloud" else LOCAL_URL
        return (self.api_url or default).rstrip("/")

    def missing(self) -> str:
        """What keeps the provider from running, in one sentence (``""``: nothing)."""
        if self.mode == "local_embedded":
            return (
                "hindsight.mode local_embedded (a daemon started by the agent) is not "
                "supported by hermes-memory: start the Hindsight server yourself and set "
                "HINDSIGHT_MODE=local_external (and HINDSIGHT_API_URL if it is not "
                f"{LOCAL_URL})"
            )
        if self.mode == "cloud" and not self.api_key:
            return (
                "set HINDSIGHT_API_KEY (or hindsight.api_key) for Hindsight cloud, or "
                "HINDSIGHT_MODE=local_external for a server you run"
            )
        return ""


def _section(config: Mapping[str, Any] | None, home: Path | None) -> Any:
    if config is None and home is not None:
        path = home / "config.yaml"
        if path.is_file():
            import yaml

            try:
                config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            except (OSError, yaml.YAMLError) as exc:
                raise HindsightConfigError(f"cannot read {path}: {exc}") from None
    section = (config or {}).get("hindsight") if isinstance(config, Mapping) else None
    if section is not None and not isinstance(section, Mapping):
        raise HindsightConfigError("the hindsight section of config.yaml must be a mapping")
    return section


def load_settings(
    config: Mapping[str, Any] | None,
    home: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> HindsightSettings:
    """Resolve the settings from ``config["hindsight"]`` (or ``<home>/config.yaml`` when
    ``config`` is None), then the environment, then the defaults.

    :raises HindsightConfigError: a value of the wrong type, out of range or unusable.
    """
    loaded = load_section(
        FIELDS,
        _section(config, home),
        where="hindsight",
        environ=environ,
        error=HindsightConfigError,
    )
    values = dict(loaded.values)
    url = str(values["api_url"])
    if url and not url.startswith(("http://", "https://")):
        raise HindsightConfigError(f"hindsight.api_url must be an http(s) URL, got {url!r}")
    bank = str(values["bank_id"])
    if not _BANK.match(bank):
        raise HindsightConfigError(
            "hindsight.bank_id must be 1-128 letters, digits or . _ : @ - "
            f"(no spaces or slashes), got {bank!r}"
        )
    return HindsightSettings(**values, unknown=loaded.unknown)


def schema() -> list[dict[str, Any]]:
    """Every setting in the ``get_config_schema`` vocabulary."""
    return config_schema(FIELDS)
