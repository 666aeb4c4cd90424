"""ByteRover adapter for hermes-memory: the ``brv`` CLI as a subprocess with deadlines.

Install the CLI (``npm install -g byterover-cli``) and set ``memory.provider: byterover``.
Importing this package is cheap: `ByteroverProvider` loads on first access.
"""

from __future__ import annotations

from importlib.metadata import version as _dist_version
from typing import TYPE_CHECKING

from hermes_memory_core.lazy import lazy_getattr

if TYPE_CHECKING:
    from hermes_memory_byterover._provider import ByteroverProvider
    from hermes_memory_byterover._settings import ByteroverSettings

__all__ = ["ByteroverProvider", "ByteroverSettings", "__version__"]
# The version lives in pyproject.toml only; installed metadata is its one copy.
__version__ = _dist_version("hermes-memory-byterover")

# Every public name loads on first access from its private module.
_EXPORTS = {
    "ByteroverProvider": "hermes_memory_byterover._provider",
    "ByteroverSettings": "hermes_memory_byterover._settings",
}

__getattr__ = lazy_getattr(__name__, _EXPORTS)
