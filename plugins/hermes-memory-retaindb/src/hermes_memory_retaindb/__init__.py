"""RetainDB adapter for hermes-memory: profile and context recall, a crash-safe write queue.

Install ``hermes-memory-retaindb``, set ``memory.provider: retaindb`` and ``RETAINDB_API_KEY``.
Importing this package is cheap: `RetainDBProvider` loads on first access.
"""

from __future__ import annotations

from importlib.metadata import version as _dist_version
from typing import TYPE_CHECKING

from hermes_memory_core.lazy import lazy_getattr

if TYPE_CHECKING:
    from hermes_memory_retaindb._journal import JournaledWrites
    from hermes_memory_retaindb._provider import RetainDBProvider
    from hermes_memory_retaindb._settings import RetainDBSettings

__all__ = ["JournaledWrites", "RetainDBProvider", "RetainDBSettings", "__version__"]
# The version lives in pyproject.toml only; installed metadata is its one copy.
__version__ = _dist_version("hermes-memory-retaindb")

# Every public name loads on first access from its private module.
_EXPORTS = {
    "JournaledWrites": "hermes_memory_retaindb._journal",
    "RetainDBProvider": "hermes_memory_retaindb._provider",
    "RetainDBSettings": "hermes_memory_retaindb._settings",
}

__getattr__ = lazy_getattr(__name__, _EXPORTS)
