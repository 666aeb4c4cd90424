"""hermes-memory-core: the contracts every hermes-memory package shares.

Provider authors need `MemoryProvider` and `hookimpl`; agent builders need `MemoryManager`.
Everything here is typed (``py.typed``) and imports nothing heavy.
"""

from hermes_memory_core.config import (
    ConfigError,
    HermesConfig,
    MemoryConfig,
    SessionsConfig,
    load_config,
    resolve_home,
)
from hermes_memory_core.fencing import (
    MEMORY_CONTEXT_NOTE,
    StreamingContextScrubber,
    build_memory_context_block,
    cap_recall,
    sanitize_context,
)
from hermes_memory_core.hookspecs import hookimpl, hookspec
from hermes_memory_core.ids import new_session_id
from hermes_memory_core.manager import ManagerClosedError, MemoryManager
from hermes_memory_core.plugins import (
    PluginRegistry,
    ProviderInfo,
    get_registry,
    list_providers,
)
from hermes_memory_core.provider import BUILTIN_TIER_NAMES, MemoryProvider, RecallStatus, ToolSchema
from hermes_memory_core.redact import REDACTED, find_secrets, scrub_secrets
from hermes_memory_core.review import (
    REVIEW_PROMPT,
    ModelReply,
    ReviewHandle,
    ReviewModel,
    ReviewResult,
    ToolCall,
)
from hermes_memory_core.threats import (
    INVISIBLE_CHARS,
    MAX_SCAN_CHARS,
    first_threat_message,
    scan_for_threats,
)
from hermes_memory_core.toolformats import to_anthropic_tools, to_openai_tools
from hermes_memory_core.toolresult import tool_error, tool_result
from hermes_memory_core.trivial import is_trivial_prompt

__all__ = [
    "BUILTIN_TIER_NAMES",
    "INVISIBLE_CHARS",
    "MAX_SCAN_CHARS",
    "MEMORY_CONTEXT_NOTE",
    "REDACTED",
    "REVIEW_PROMPT",
    "ConfigError",
    "HermesConfig",
    "ManagerClosedError",
    "MemoryConfig",
    "MemoryManager",
    "MemoryProvider",
    "ModelReply",
    "PluginRegistry",
    "ProviderInfo",
    "RecallStatus",
    "ReviewHandle",
    "ReviewModel",
    "ReviewResult",
    "SessionsConfig",
    "StreamingContextScrubber",
    "ToolCall",
    "ToolSchema",
    "build_memory_context_block",
    "cap_recall",
    "find_secrets",
    "first_threat_message",
    "get_registry",
    "hookimpl",
    "hookspec",
    "is_trivial_prompt",
    "list_providers",
    "load_config",
    "new_session_id",
    "resolve_home",
    "sanitize_context",
    "scan_for_threats",
    "scrub_secrets",
    "to_anthropic_tools",
    "to_openai_tools",
    "tool_error",
    "tool_result",
]
