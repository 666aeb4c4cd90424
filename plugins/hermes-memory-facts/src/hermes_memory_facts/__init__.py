"""A local fact store for hermes-memory: SQLite + FTS5 facts, entities, trust, contradictions
and optional holographic (HRR) compositional queries. No network.

Set ``memory.provider: facts`` in ``config.yaml``. Importing this package is cheap: the store
and the provider load on first access.
"""

from __future__ import annotations

from importlib.metadata import version as _dist_version
from typing import TYPE_CHECKING

from hermes_memory_core.lazy import lazy_getattr

if TYPE_CHECKING:
    from hermes_memory_facts._provider import FactsProvider
    from hermes_memory_facts._settings import FactsSettings
    from hermes_memory_facts._store import Fact, FactStore, FactStoreError

__all__ = ["Fact", "FactStore", "FactStoreError", "FactsProvider", "FactsSettings", "__version__"]
# The version lives in pyproject.toml only; installed metadata is its one copy.
__version__ = _dist_version("hermes-memory-facts")

# Every public name loads on first access from its private module.
_EXPORTS = {
    "FactsProvider": "hermes_memory_facts._provider",
    "Fact": "hermes_memory_facts._store",
    "FactStore": "hermes_memory_facts._store",
    "FactStoreError": "hermes_memory_facts._store",
    "FactsSettings": "hermes_memory_facts._settings",
}

__getattr__ = lazy_getattr(__name__, _EXPORTS)
