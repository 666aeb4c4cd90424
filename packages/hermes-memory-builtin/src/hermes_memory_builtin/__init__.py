"""The curated MEMORY.md / USER.md store and the ``memory`` tool for hermes-memory.

``MemoryStore`` reads and writes the two files (Hermes Agent's format, unchanged);
``memory_tool(args, store)`` answers the model's ``memory`` tool calls with JSON;
``BuiltinMemoryProvider`` plugs both into ``hermes_memory_core.MemoryManager`` as
``"builtin"``.

A memory file that cannot be used as it is (a symbolic link, not UTF-8, unreadable, a
directory) raises `MemoryFileError` (`UnsafeMemoryPath` for links) from
``MemoryStore.load_from_disk(strict=True)``; its message names the path, the cause and the
fix. Without ``strict`` the problem is recorded in ``MemoryStore.load_problems``.

This module's ``__all__`` is the package's whole public surface; the ``_``-prefixed modules
are its implementation. The file-format, sidecar, drift and whole-file-edit names are public
because the CLI, the MCP server and the PostgreSQL backend keep the same files by the same
rules.
"""

from hermes_memory_builtin._drift import check_drift, save_backup
from hermes_memory_builtin._errors import MemoryFileError, UnsafeMemoryPath
from hermes_memory_builtin._events import tool_writes
from hermes_memory_builtin._files import ensure_memory_dir
from hermes_memory_builtin._format import (
    ENTRY_DELIMITER,
    MEMORY_BLOCK_HEADERS,
    TARGET_FILES,
    char_count,
    parse_entries,
    preview,
    render_block,
    serialise,
    split_pieces,
)
from hermes_memory_builtin._guidance import MEMORY_GUIDANCE
from hermes_memory_builtin._pending import THREAT_REVIEW, PendingError, PendingStore
from hermes_memory_builtin._provider import BuiltinMemoryProvider
from hermes_memory_builtin._reading import read_raw
from hermes_memory_builtin._replace_file import ConcurrentChange, replace_entries
from hermes_memory_builtin._scan import (
    MAX_FLAGGED,
    BlockedEntries,
    ScanReport,
    WriteVerdict,
    scan_entries,
    write_threat,
    write_verdict,
)
from hermes_memory_builtin._settings import BuiltinSettings
from hermes_memory_builtin._sidecar import (
    EntryMeta,
    approved_entries,
    entry_key,
    load_sidecar,
    parse_entry_meta,
    reconcile,
    save_sidecar,
)
from hermes_memory_builtin._store import (
    DEFAULT_MEMORY_CHAR_LIMIT,
    DEFAULT_USER_CHAR_LIMIT,
    FILE_MODE,
    MAX_CONSOLIDATION_FAILURES_PER_TURN,
    TARGETS,
    MemoryStore,
    Result,
)
from hermes_memory_builtin._tool import MEMORY_SCHEMA, list_pending, memory_schema, memory_tool

__all__ = [
    "DEFAULT_MEMORY_CHAR_LIMIT",
    "DEFAULT_USER_CHAR_LIMIT",
    "ENTRY_DELIMITER",
    "FILE_MODE",
    "MAX_CONSOLIDATION_FAILURES_PER_TURN",
    "MAX_FLAGGED",
    "MEMORY_BLOCK_HEADERS",
    "MEMORY_GUIDANCE",
    "MEMORY_SCHEMA",
    "TARGETS",
    "TARGET_FILES",
    "THREAT_REVIEW",
    "BlockedEntries",
    "BuiltinMemoryProvider",
    "BuiltinSettings",
    "ConcurrentChange",
    "EntryMeta",
    "MemoryFileError",
    "MemoryStore",
    "PendingError",
    "PendingStore",
    "Result",
    "ScanReport",
    "UnsafeMemoryPath",
    "WriteVerdict",
    "approved_entries",
    "char_count",
    "check_drift",
    "ensure_memory_dir",
    "entry_key",
    "list_pending",
    "load_sidecar",
    "memory_schema",
    "memory_tool",
    "parse_entries",
    "parse_entry_meta",
    "preview",
    "read_raw",
    "reconcile",
    "render_block",
    "replace_entries",
    "save_backup",
    "save_sidecar",
    "scan_entries",
    "serialise",
    "split_pieces",
    "tool_writes",
    "write_threat",
    "write_verdict",
]
