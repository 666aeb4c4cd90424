"""hermes-memory-core: the contracts every hermes-memory package shares."""

from hermes_memory_core.config import ConfigError, HermesConfig, load_config, resolve_home
from hermes_memory_core.hookspecs import hookimpl, hookspec
from hermes_memory_core.plugins import PluginRegistry, ProviderInfo, get_registry, list_providers
from hermes_memory_core.provider import BUILTIN_TIER_NAMES, MemoryProvider, RecallStatus, ToolSchema
from hermes_memory_core.toolresult import tool_error, tool_result

__all__ = [
    "BUILTIN_TIER_NAMES",
    "ConfigError",
    "HermesConfig",
    "MemoryProvider",
    "PluginRegistry",
    "ProviderInfo",
    "RecallStatus",
    "ToolSchema",
    "get_registry",
    "hookimpl",
    "hookspec",
    "list_providers",
    "load_config",
    "resolve_home",
    "tool_error",
    "tool_result",
]
