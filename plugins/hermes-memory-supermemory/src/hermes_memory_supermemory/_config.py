"""The ``supermemory:`` settings, declared once as `SupermemorySettings`.

Core validates the section of ``config.yaml`` with it and hands the result to the provider
as ``SupermemoryProvider.settings``. Every key has an environment variable
(``SUPERMEMORY_<KEY>``); the file wins over the environment, the environment over the
default. A wrong value is refused with a message naming the key, and the provider stays
inactive instead of guessing.

The container tag is the Supermemory *namespace* (the 5.x API scopes every document,
search, profile and forget by a namespace in the URL path: ``/ns/{namespace}/…``).
``{identity}`` in it is replaced by the ``user_id`` the agent passes at session start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from hermes_memory_core.kit import RemoteRecallSettings, SettingsError, setting

__all__ = [
    "DEFAULT_URL",
    "SupermemoryConfigError",
    "SupermemorySettings",
    "namespace_for",
]

#: Supermemory's hosted API.
DEFAULT_URL = "https://api.supermemory.ai"

SEARCH_MODES = ("memories", "hybrid", "chunks")

# The SDK puts the namespace into the URL path without percent-encoding it, so only
# characters that cannot change the path are accepted (letters of any script, digits, . _ : @ -).
_NAMESPACE = re.compile(r"^[\w.:@-]{1,100}$")


class SupermemoryConfigError(SettingsError):
    """A ``supermemory:`` setting cannot be used; the message names the key."""


@dataclass(frozen=True)
class SupermemorySettings(RemoteRecallSettings):
    """The ``supermemory:`` section (plus ``retries``, ``breaker_threshold``,
    ``breaker_cooldown``, ``max_pending``, ``prefetch_wait`` and ``recall_max_chars`` from
    `RemoteRecallSettings`)."""

    section = "supermemory"
    env_prefix = "SUPERMEMORY_"

    api_key: str = setting("", "API key (sent as a Bearer token).", secret=True)
    base_url: str = setting(DEFAULT_URL, "API URL (a proxy or a self-hosted deployment).")
    container_tag: str = setting(
        "hermes",
        "The Supermemory namespace everything is stored in and searched; "
        "{identity} is replaced by the agent's user id.",
    )
    timeout: float = setting(
        5.0, "Seconds one request may take (connect, send, each read).", minimum=0.1
    )
    auto_recall: bool = setting(True, "Search the container for each user message.")
    auto_capture: bool = setting(
        True,
        "Ingest the conversation (at session end, compression and reset) and mirror "
        "curated memory writes.",
    )
    profile_every: int = setting(
        5, "Refresh the container profile injected with recall every N turns (0: never).",
        minimum=0,
    )  # fmt: skip
    search_mode: str = setting(
        "memories",
        "What recall searches: memories (learned facts), hybrid (facts and source passages) "
        "or chunks.",
        choices=SEARCH_MODES,
    )
    search_limit: int = setting(5, "Memories recalled per turn.", minimum=1)
    max_session_chars: int = setting(
        100_000,
        "Longest conversation text sent in one ingest (older turns are sent first, in parts).",
        minimum=1000,
    )

    @classmethod
    def prepare(cls, values: dict[str, Any], explicit: frozenset[str]) -> dict[str, Any]:
        """The URL without a trailing slash."""
        return {**values, "base_url": str(values["base_url"]).rstrip("/")}

    def check(self) -> None:
        """An http(s) URL, and a container tag that cannot change the URL path."""
        if not self.base_url.startswith(("http://", "https://")):
            raise SupermemoryConfigError(
                f"supermemory.base_url must be an http(s) URL, got {self.base_url!r}"
            )
        namespace_for(self.container_tag, "x")

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
