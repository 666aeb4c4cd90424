"""The curated MEMORY.md / USER.md store and the ``memory`` tool for hermes-memory.

``MemoryStore`` reads and writes the two files (Hermes Agent's format, unchanged);
``memory_tool(args, store)`` answers the model's ``memory`` tool calls with JSON;
``BuiltinMemoryProvider`` plugs both into ``hermes_memory_core.MemoryManager`` as
``"builtin"``.

A memory file that cannot be used as it is (a symbolic link, not UTF-8, unreadable, a
directory) raises `MemoryFileError` (`UnsafeMemoryPath` for links) from
``MemoryStore.load_from_disk(strict=True)``; its message names the path, the cause and the
fix. Without ``strict`` the problem is recorded in ``MemoryStore.load_problems``.
"""

from hermes_memory_builtin._errors import MemoryFileError, UnsafeMemoryPath
from hermes_memory_builtin._format import ENTRY_DELIMITER, MEMORY_BLOCK_HEADERS
from hermes_memory_builtin._pending import PendingError, PendingStore
from hermes_memory_builtin._provider import BuiltinMemoryProvider
from hermes_memory_builtin._store import (
    DEFAULT_MEMORY_CHAR_LIMIT,
    DEFAULT_USER_CHAR_LIMIT,
    MAX_CONSOLIDATION_FAILURES_PER_TURN,
    MemoryStore,
)
from hermes_memory_builtin._tool import MEMORY_SCHEMA, list_pending, memory_schema, memory_tool

__all__ = [
    "DEFAULT_MEMORY_CHAR_LIMIT",
    "DEFAULT_USER_CHAR_LIMIT",
    "ENTRY_DELIMITER",
    "MAX_CONSOLIDATION_FAILURES_PER_TURN",
    "MEMORY_BLOCK_HEADERS",
    "MEMORY_SCHEMA",
    "BuiltinMemoryProvider",
    "MemoryFileError",
    "MemoryStore",
    "PendingError",
    "PendingStore",
    "UnsafeMemoryPath",
    "list_pending",
    "memory_schema",
    "memory_tool",
]
