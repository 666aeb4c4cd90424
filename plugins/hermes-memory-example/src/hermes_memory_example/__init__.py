"""Two reference memory providers, not meant for real use.

`NotesProvider` (``example``) is the smallest complete provider: keyword-matched notes in
one JSON file. `RemoteNotesProvider` (``example-remote``) is a complete remote provider built
from the adapter kit (`hermes_memory_core.kit`). ``docs/how-to/write-a-provider.md`` walks
through both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_memory_core.lazy import lazy_getattr

if TYPE_CHECKING:
    from hermes_memory_example._provider import NotesProvider
    from hermes_memory_example._remote import NotesSettings, RemoteNotesProvider

__all__ = ["NotesProvider", "NotesSettings", "RemoteNotesProvider"]

# Every public name loads on first access from its private module.
_EXPORTS = {
    "NotesProvider": "hermes_memory_example._provider",
    "RemoteNotesProvider": "hermes_memory_example._remote",
    "NotesSettings": "hermes_memory_example._remote",
}

__getattr__ = lazy_getattr(__name__, _EXPORTS)
