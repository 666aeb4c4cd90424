"""Model Context Protocol server exposing hermes-memory to any MCP client.

``serve_stdio(home)`` is what MCP clients launch (console script ``hermes-memory-mcp`` or
``hermes-memory mcp serve``); ``serve_http(port, home)`` serves streamable HTTP on
127.0.0.1. Both publish the `MemoryManager`'s tools and MEMORY.md / USER.md as resources.
Importing this package is cheap: the SDK loads when a server is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_memory_mcp_server._auth import (
    LOOPBACK_HOSTS,
    LOOPBACK_ORIGINS,
    MIN_TOKEN_LENGTH,
    TOKEN_DIR,
    TOKEN_FILE,
    BearerAuthMiddleware,
    HttpToken,
    SameOriginMiddleware,
    TokenError,
    default_token_path,
    is_loopback,
    load_or_create_token,
    read_token_file,
)
from hermes_memory_mcp_server._ids import new_session_id

if TYPE_CHECKING:
    from hermes_memory_mcp_server._bridge import MemoryBridge, ToolOutcome
    from hermes_memory_mcp_server._resources import MEMORY_URI, SNAPSHOT_URI, USER_URI
    from hermes_memory_mcp_server._server import (
        build_server,
        resolve_http_token,
        serve_http,
        serve_http_async,
        serve_stdio,
        serve_stdio_async,
    )

__all__ = [
    "LOOPBACK_HOSTS",
    "LOOPBACK_ORIGINS",
    "MEMORY_URI",
    "MIN_TOKEN_LENGTH",
    "SNAPSHOT_URI",
    "TOKEN_DIR",
    "TOKEN_FILE",
    "USER_URI",
    "BearerAuthMiddleware",
    "HttpToken",
    "MemoryBridge",
    "SameOriginMiddleware",
    "TokenError",
    "ToolOutcome",
    "build_server",
    "default_token_path",
    "is_loopback",
    "load_or_create_token",
    "new_session_id",
    "read_token_file",
    "resolve_http_token",
    "serve_http",
    "serve_http_async",
    "serve_stdio",
    "serve_stdio_async",
]

_LAZY = {
    "MEMORY_URI": "hermes_memory_mcp_server._resources",
    "SNAPSHOT_URI": "hermes_memory_mcp_server._resources",
    "USER_URI": "hermes_memory_mcp_server._resources",
    "MemoryBridge": "hermes_memory_mcp_server._bridge",
    "ToolOutcome": "hermes_memory_mcp_server._bridge",
    "build_server": "hermes_memory_mcp_server._server",
    "resolve_http_token": "hermes_memory_mcp_server._server",
    "serve_http": "hermes_memory_mcp_server._server",
    "serve_http_async": "hermes_memory_mcp_server._server",
    "serve_stdio": "hermes_memory_mcp_server._server",
    "serve_stdio_async": "hermes_memory_mcp_server._server",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hermes_memory_mcp_server' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
