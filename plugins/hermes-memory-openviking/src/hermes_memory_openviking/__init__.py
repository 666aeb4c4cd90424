"""OpenViking adapter for hermes-memory: session write-through, search, browse, six tools.

Install ``hermes-memory-openviking``, set ``memory.provider: openviking`` and
``OPENVIKING_URL`` (and ``OPENVIKING_API_KEY`` when the server asks for one).
Importing this package is cheap: `OpenVikingProvider` loads on first access.
"""

from __future__ import annotations

from importlib.metadata import version as _dist_version
from typing import TYPE_CHECKING

from hermes_memory_core.lazy import lazy_getattr

if TYPE_CHECKING:
    from hermes_memory_openviking._provider import OpenVikingProvider
    from hermes_memory_openviking._settings import OpenVikingSettings

__all__ = ["OpenVikingProvider", "OpenVikingSettings", "__version__"]
# The version lives in pyproject.toml only; installed metadata is its one copy.
__version__ = _dist_version("hermes-memory-openviking")

# Every public name loads on first access from its private module.
_EXPORTS = {
    "OpenVikingProvider": "hermes_memory_openviking._provider",
    "OpenVikingSettings": "hermes_memory_openviking._settings",
}

__getattr__ = lazy_getattr(__name__, _EXPORTS)
