"""The ``retaindb:`` settings, declared once as `RetainDBSettings`.

Core validates the section of ``config.yaml`` with it and hands the result to the provider
as ``RetainDBProvider.settings``; the file wins over the environment (``RETAINDB_API_KEY``,
``RETAINDB_BASE_URL``, ``RETAINDB_PROJECT``), the environment over the default.
"""

from __future__ import annotations

from dataclasses import dataclass

from hermes_memory_core.kit import RemoteWriteSettings, setting

__all__ = ["DEFAULT_BASE_URL", "RetainDBSettings"]

DEFAULT_BASE_URL = "https://api.retaindb.com"


@dataclass(frozen=True)
class RetainDBSettings(RemoteWriteSettings):
    """The ``retaindb:`` section (plus the guard, queue and drain settings of
    `RemoteWriteSettings`)."""

    section = "retaindb"

    api_key: str = setting("", "RetainDB API key (required).", env="RETAINDB_API_KEY", secret=True)
    base_url: str = setting(DEFAULT_BASE_URL, "API endpoint.", env="RETAINDB_BASE_URL")
    project: str = setting(
        "default", "Project (data partition) to read and write.", env="RETAINDB_PROJECT"
    )
    user_id: str = setting("", "User id (default: the agent's user id, else 'default').")
    timeout: float = setting(8.0, "Seconds per request (tools and writes).", minimum=0.1)
    file_timeout: float = setting(60.0, "Seconds per file upload, download or ingest.", minimum=0.1)
    recall_timeout: float = setting(3.0, "Seconds per recall request in a turn.", minimum=0.1)
    retries: int = setting(0, "Extra attempts after a timeout, refusal or 5xx.", minimum=0)
    profile_refresh: float = setting(300.0, "Seconds a fetched profile is reused.", minimum=0)

    def missing(self) -> str:
        """An API key, and an http(s) endpoint."""
        if not self.api_key:
            return "set RETAINDB_API_KEY (or retaindb.api_key in config.yaml)"
        if not self.base_url.startswith(("http://", "https://")):
            return "RETAINDB_BASE_URL (retaindb.base_url) must be an http(s) URL"
        return ""
