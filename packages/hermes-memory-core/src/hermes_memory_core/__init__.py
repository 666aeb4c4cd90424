"""hermes-memory-core: the contracts every hermes-memory package shares."""

from hermes_memory_core.provider import BUILTIN_TIER_NAMES, MemoryProvider, RecallStatus, ToolSchema
from hermes_memory_core.toolresult import tool_error, tool_result

__all__ = [
    "BUILTIN_TIER_NAMES",
    "MemoryProvider",
    "RecallStatus",
    "ToolSchema",
    "tool_error",
    "tool_result",
]
