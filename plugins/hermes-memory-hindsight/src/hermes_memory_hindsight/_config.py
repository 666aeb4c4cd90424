"""The ``hindsight:`` settings, declared once as `HindsightSettings`.

Core validates the section of ``config.yaml`` with it and hands the result to the provider
as ``HindsightProvider.settings``. Every key has an environment variable
(``HINDSIGHT_<KEY>``); the file wins over the environment, the environment over the
default. A wrong value is refused with a message naming the key, and the provider stays
inactive instead of guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hermes_memory_core.kit import RemoteRecallSettings, SettingsError, setting

__all__ = ["BUDGETS", "CLOUD_URL", "LOCAL_URL", "HindsightSettings"]

#: Hindsight cloud.
CLOUD_URL = "https://api.hindsight.vectorize.io"
#: Where a self-hosted server listens by default.
LOCAL_URL = "http://localhost:8888"

MODES = ("cloud", "local_external", "local_embedded")
BUDGETS = ("low", "mid", "high")

_BANK = re.compile(r"^[\w.:@-]{1,128}$")


@dataclass(frozen=True)
class HindsightSettings(RemoteRecallSettings):
    """The ``hindsight:`` section (plus ``retries``, ``breaker_threshold``,
    ``breaker_cooldown``, ``max_pending``, ``prefetch_wait`` and ``recall_max_chars`` from
    `RemoteRecallSettings`)."""

    section = "hindsight"
    env_prefix = "HINDSIGHT_"

    mode: str = setting(
        "cloud",
        "cloud (Hindsight cloud, needs api_key) or local_external (a server you run at api_url).",
        choices=MODES,
    )
    api_key: str = setting("", "API key (sent as a Bearer token).", secret=True)
    api_url: str = setting(
        "",
        f"Server URL (default: {CLOUD_URL} in cloud mode, {LOCAL_URL} in local_external mode).",
    )
    bank_id: str = setting(
        "hermes", "The memory bank everything is retained into and recalled from."
    )
    budget: str = setting("mid", "Recall/reflect effort: low, mid or high.", choices=BUDGETS)
    timeout: float = setting(
        30.0, "Seconds one request may take before it is abandoned.", minimum=0.1
    )
    retain_every: int = setting(
        1, "Retain the conversation every N turns (the rest is sent at session end).", minimum=1
    )
    retain_async: bool = setting(
        True,
        "Let the server process retained turns in the background (the request returns at once).",
    )
    prefetch_method: str = setting(
        "recall",
        "What each turn is given: recall (matching memories), reflect (a synthesised answer)"
        " or off.",
        choices=("recall", "reflect", "off"),
    )
    recall_max_tokens: int = setting(1024, "Token budget of one recall on the server.", minimum=64)
    max_pending: int = setting(256, "Retains kept while the server is unreachable.", minimum=1)

    @property
    def base_url(self) -> str:
        """The server URL, with the mode's default filled in and no trailing slash."""
        default = CLOUD_URL if self.mode == "cloud" else LOCAL_URL
        return (self.api_url or default).rstrip("/")

    def check(self) -> None:
        """An http(s) ``api_url``; a ``bank_id`` that cannot change a URL path."""
        if self.api_url and not self.api_url.startswith(("http://", "https://")):
            raise SettingsError(f"hindsight.api_url must be an http(s) URL, got {self.api_url!r}")
        if not _BANK.match(self.bank_id):
            raise SettingsError(
                "hindsight.bank_id must be 1-128 letters, digits or . _ : @ - "
                f"(no spaces or slashes), got {self.bank_id!r}"
            )

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
