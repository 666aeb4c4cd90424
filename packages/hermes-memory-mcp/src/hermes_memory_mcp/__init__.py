"""Model Context Protocol server exposing hermes-memory to any MCP client."""
