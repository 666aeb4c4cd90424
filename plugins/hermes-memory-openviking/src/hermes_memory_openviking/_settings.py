"""The ``openviking:`` settings, declared once as `OpenVikingSettings`.

Core validates the section of ``config.yaml`` with it and hands the result to the provider
as ``OpenVikingProvider.settings``; the file wins over the environment (``OPENVIKING_URL``,
``OPENVIKING_API_KEY``, ``OPENVIKING_ACCOUNT``, ``OPENVIKING_USER``), the environment over
the default.
"""

from __future__ import annotations

from dataclasses import dataclass

from hermes_memory_core.kit import RemoteWriteSettings, SettingsError, setting

__all__ = ["DEFAULT_URL", "OpenVikingSettings"]

DEFAULT_URL = "http://127.0.0.1:1933"


@dataclass(frozen=True)
class OpenVikingSettings(RemoteWriteSettings):
    """The ``openviking:`` section (plus the guard, queue and drain settings of
    `RemoteWriteSettings`)."""

    section = "openviking"

    url: str = setting("", f"OpenViking server (default {DEFAULT_URL}).", env="OPENVIKING_URL")
    api_key: str = setting(
        "", "API key, when the server asks for one.", env="OPENVIKING_API_KEY", secret=True
    )
    account: str = setting(
        "", "Account (tenant) sent as X-OpenViking-Account.", env="OPENVIKING_ACCOUNT"
    )
    user: str = setting("", "User sent as X-OpenViking-User.", env="OPENVIKING_USER")
    memory_root: str = setting(
        "viking://user/memories", "Where the profile is read and curated additions are written."
    )
    timeout: float = setting(30.0, "Seconds per request (tools and writes).", minimum=0.1)
    recall_timeout: float = setting(3.0, "Seconds per recall request in a turn.", minimum=0.1)
    recall_total: float = setting(4.0, "Seconds a turn's recall may take in all.", minimum=0.1)
    retries: int = setting(0, "Extra attempts after a timeout, refusal or 5xx.", minimum=0)
    breaker_cooldown: float = setting(30.0, "Seconds calls stay paused.", minimum=0)

    @property
    def base_url(self) -> str:
        """The server URL (the local default when unset), without a trailing slash."""
        return (self.url or DEFAULT_URL).rstrip("/")

    def check(self) -> None:
        """``memory_root`` must be a ``viking://`` URI below one of OpenViking's roots."""
        from hermes_memory_openviking._client import check_uri

        try:
            check_uri(self.memory_root, min_depth=1)
        except ValueError as exc:
            raise SettingsError(f"openviking.memory_root: {exc}") from None

    def missing(self) -> str:
        """A URL or an API key, and only http(s)."""
        if not self.url and not self.api_key:
            return "set OPENVIKING_URL (or openviking.url in config.yaml)"
        if not self.base_url.startswith(("http://", "https://")):
            return "OPENVIKING_URL (openviking.url) must be an http(s) URL"
        return ""
