"""Hindsight adapter for hermes-memory: retain, recall and reflect over one memory bank.

Install ``hermes-memory-hindsight``, set ``memory.provider: hindsight`` and either
``HINDSIGHT_API_KEY`` (Hindsight cloud) or ``HINDSIGHT_MODE=local_external`` with
``HINDSIGHT_API_URL`` (a server you run). Importing this package is cheap:
`HindsightProvider` (and the client library) loads on first access.
"""

from __future__ import annotations

from importlib.metadata import version as _dist_version
from typing import TYPE_CHECKING

from hermes_memory_core.lazy import lazy_getattr

if TYPE_CHECKING:
    from hermes_memory_hindsight._config import HindsightSettings
    from hermes_memory_hindsight._provider import HindsightProvider

__all__ = ["HindsightProvider", "HindsightSettings", "__version__"]
# The version lives in pyproject.toml only; installed metadata is its one copy.
__version__ = _dist_version("hermes-memory-hindsight")

# Every public name loads on first access from its private module.
_EXPORTS = {
    "HindsightProvider": "hermes_memory_hindsight._provider",
    "HindsightSettings": "hermes_memory_hindsight._config",
}

__getattr__ = lazy_getattr(__name__, _EXPORTS)
