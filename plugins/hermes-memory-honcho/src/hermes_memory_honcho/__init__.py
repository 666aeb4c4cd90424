"""Honcho adapter for hermes-memory: workspace, user and AI peers, one session per conversation.

Install ``hermes-memory-honcho``, set ``memory.provider: honcho`` and either
``HONCHO_API_KEY`` (Honcho cloud) or ``HONCHO_BASE_URL`` (a self-hosted server).
Importing this package is cheap: `HonchoProvider` (httpx, the SDK) loads on first access.
"""

from __future__ import annotations

from importlib.metadata import version as _dist_version
from typing import TYPE_CHECKING

from hermes_memory_core.lazy import lazy_getattr

if TYPE_CHECKING:
    from hermes_memory_honcho._config import HonchoConfig
    from hermes_memory_honcho._provider import HonchoProvider

__all__ = ["HonchoConfig", "HonchoProvider", "__version__"]
# The version lives in pyproject.toml only; installed metadata is its one copy.
__version__ = _dist_version("hermes-memory-honcho")

# Every public name loads on first access from its private module.
_EXPORTS = {
    "HonchoProvider": "hermes_memory_honcho._provider",
    "HonchoConfig": "hermes_memory_honcho._config",
}

__getattr__ = lazy_getattr(__name__, _EXPORTS)
