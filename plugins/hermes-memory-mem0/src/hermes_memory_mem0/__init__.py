"""mem0 adapter for hermes-memory (platform, self-hosted and OSS modes).

Install ``hermes-memory-mem0``, set ``memory.provider: mem0`` in ``config.yaml`` and either
``MEM0_API_KEY`` (mem0 Platform), ``MEM0_HOST`` (a self-hosted mem0 server) or a
``mem0: {mode: oss, oss: {...}}`` section (local ``mem0.Memory``). See `Mem0Provider`.
Importing this package imports neither mem0 nor httpx: each name loads on first access.
"""

from __future__ import annotations

from importlib.metadata import version as _dist_version
from typing import TYPE_CHECKING

from hermes_memory_core.lazy import lazy_getattr

if TYPE_CHECKING:
    from hermes_memory_mem0._provider import Mem0Provider
    from hermes_memory_mem0._settings import ConfigError, Mem0Settings, load_settings

__all__ = ["ConfigError", "Mem0Provider", "Mem0Settings", "__version__", "load_settings"]
# The version lives in pyproject.toml only; installed metadata is its one copy.
__version__ = _dist_version("hermes-memory-mem0")

# Every public name loads on first access from its private module.
_EXPORTS = {
    "Mem0Provider": "hermes_memory_mem0._provider",
    "ConfigError": "hermes_memory_mem0._settings",
    "Mem0Settings": "hermes_memory_mem0._settings",
    "load_settings": "hermes_memory_mem0._settings",
}

__getattr__ = lazy_getattr(__name__, _EXPORTS)
