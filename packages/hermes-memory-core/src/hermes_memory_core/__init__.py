"""hermes-memory-core: the contracts every hermes-memory package shares.

Provider authors need `MemoryProvider` and `hookimpl` (and, for a remote service, the adapter
kit in `hermes_memory_core.kit`); agent builders need `MemoryManager`. Everything listed in
``__all__`` is public and documented in ``docs/reference/api.md``; modules whose name starts
with an underscore are internal.

Importing this package is cheap: each name is imported from its module on first use, so a
command that only needs the configuration never loads the threat scanner or pluggy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_memory_core.lazy import lazy_getattr

if TYPE_CHECKING:
    from hermes_memory_core._backends import BACKEND_GROUPS, BackendNotInstalled, load_backend
    from hermes_memory_core._events import MemoryWrite
    from hermes_memory_core._hookspecs import hookimpl, hookspec
    from hermes_memory_core._ids import new_session_id
    from hermes_memory_core._manager import ManagerClosedError, MemoryManager
    from hermes_memory_core._provider import (
        BUILTIN_TIER_NAMES,
        MemoryProvider,
        RecallStatus,
        ToolSchema,
    )
    from hermes_memory_core._toolformats import to_anthropic_tools, to_openai_tools
    from hermes_memory_core._toolresult import tool_error, tool_result
    from hermes_memory_core._trivial import is_trivial_prompt
    from hermes_memory_core.config import (
        ConfigError,
        HermesConfig,
        MemoryConfig,
        SessionsConfig,
        load_config,
        resolve_home,
    )
    from hermes_memory_core.plugins import (
        PluginRegistry,
        ProviderInfo,
        get_registry,
        list_providers,
    )
    from hermes_memory_guard import (
        INVISIBLE_CHARS,
        MAX_SCAN_CHARS,
        MEMORY_CONTEXT_NOTE,
        REDACTED,
        StreamingContextScrubber,
        build_memory_context_block,
        cap_recall,
        find_secrets,
        first_threat_message,
        sanitize_context,
        scan_for_threats,
        scrub_secrets,
    )
    from hermes_memory_review import (
        REVIEW_PROMPT,
        ModelReply,
        ReviewHandle,
        ReviewModel,
        ReviewResult,
        ToolCall,
    )

#: Public name -> the module that defines it (imported on first attribute access). Text
#: safety lives in hermes-memory-guard and is re-exported from its public API.
_EXPORTS: dict[str, str] = {
    "BACKEND_GROUPS": "_backends",
    "BackendNotInstalled": "_backends",
    "BUILTIN_TIER_NAMES": "_provider",
    "INVISIBLE_CHARS": "hermes_memory_guard",
    "MAX_SCAN_CHARS": "hermes_memory_guard",
    "MEMORY_CONTEXT_NOTE": "hermes_memory_guard",
    "REDACTED": "hermes_memory_guard",
    "REVIEW_PROMPT": "hermes_memory_review",
    "ConfigError": "config",
    "HermesConfig": "config",
    "ManagerClosedError": "_manager",
    "MemoryConfig": "config",
    "MemoryManager": "_manager",
    "MemoryProvider": "_provider",
    "MemoryWrite": "_events",
    "ModelReply": "hermes_memory_review",
    "PluginRegistry": "plugins",
    "ProviderInfo": "plugins",
    "RecallStatus": "_provider",
    "ReviewHandle": "hermes_memory_review",
    "ReviewModel": "hermes_memory_review",
    "ReviewResult": "hermes_memory_review",
    "SessionsConfig": "config",
    "StreamingContextScrubber": "hermes_memory_guard",
    "ToolCall": "hermes_memory_review",
    "ToolSchema": "_provider",
    "build_memory_context_block": "hermes_memory_guard",
    "cap_recall": "hermes_memory_guard",
    "find_secrets": "hermes_memory_guard",
    "first_threat_message": "hermes_memory_guard",
    "get_registry": "plugins",
    "hookimpl": "_hookspecs",
    "hookspec": "_hookspecs",
    "is_trivial_prompt": "_trivial",
    "list_providers": "plugins",
    "load_backend": "_backends",
    "load_config": "config",
    "new_session_id": "_ids",
    "resolve_home": "config",
    "sanitize_context": "hermes_memory_guard",
    "scan_for_threats": "hermes_memory_guard",
    "scrub_secrets": "hermes_memory_guard",
    "to_anthropic_tools": "_toolformats",
    "to_openai_tools": "_toolformats",
    "tool_error": "_toolresult",
    "tool_result": "_toolresult",
}

__all__ = [
    "BACKEND_GROUPS",
    "BUILTIN_TIER_NAMES",
    "INVISIBLE_CHARS",
    "MAX_SCAN_CHARS",
    "MEMORY_CONTEXT_NOTE",
    "REDACTED",
    "REVIEW_PROMPT",
    "BackendNotInstalled",
    "ConfigError",
    "HermesConfig",
    "ManagerClosedError",
    "MemoryConfig",
    "MemoryManager",
    "MemoryProvider",
    "MemoryWrite",
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
    "load_backend",
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


__getattr__ = lazy_getattr(
    __name__,
    {n: m if m.startswith("hermes_") else f"hermes_memory_core.{m}" for n, m in _EXPORTS.items()},
)


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
