"""mem0 adapter for hermes-memory (platform, self-hosted and OSS modes).

Install ``hermes-memory-mem0``, set ``memory.provider: mem0`` in ``config.yaml`` and either
``MEM0_API_KEY`` (mem0 Platform), ``MEM0_HOST`` (a self-hosted mem0 server) or a
``mem0: {mode: oss, oss: {...}}`` section (local ``mem0.Memory``). See `Mem0Provider`.
Importing this package does not import mem0.
"""

from importlib.metadata import version as _dist_version

from hermes_memory_mem0.provider import Mem0Provider
from hermes_memory_mem0.settings import ConfigError, Mem0Settings, load_settings

__all__ = ["ConfigError", "Mem0Provider", "Mem0Settings", "load_settings"]
# The version lives in pyproject.toml only; installed metadata is its one copy.
__version__ = _dist_version("hermes-memory-mem0")
