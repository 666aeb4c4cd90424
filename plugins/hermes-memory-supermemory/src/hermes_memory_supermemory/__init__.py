"""Supermemory adapter for hermes-memory: recall, profile, session ingest and tools.

Install ``hermes-memory-supermemory``, set ``memory.provider: supermemory`` and
``SUPERMEMORY_API_KEY``. Importing this package is cheap: `SupermemoryProvider` (and the
``supermemory`` SDK with httpx) loads on first access.
"""

from __future__ import annotations

from importlib.metadata import version as _dist_version
from typing import TYPE_CHECKING

from hermes_memory_core.lazy import lazy_getattr

if TYPE_CHECKING:
    from hermes_memory_supermemory._config import SupermemorySettings
    from hermes_memory_supermemory._provider import SupermemoryProvider

__all__ = ["SupermemoryProvider", "SupermemorySettings", "__version__"]
# The version lives in pyproject.toml only; installed metadata is its one copy.
__version__ = _dist_version("hermes-memory-supermemory")

# Every public name loads on first access from its private module.
_EXPORTS = {
    "SupermemoryProvider": "hermes_memory_supermemory._provider",
    "SupermemorySettings": "hermes_memory_supermemory._config",
}

__getattr__ = lazy_getattr(__name__, _EXPORTS)
