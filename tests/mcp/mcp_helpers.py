"""Helpers shared by the MCP tests (a uniquely named module: several test folders have a conftest)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

SCRIPT = Path(sys.executable).with_name("hermes-memory-mcp")


def server_params(home: Path, *extra: str) -> StdioServerParameters:
    """Parameters launching the console script on ``home`` (a clean, minimal environment)."""
    assert SCRIPT.exists(), f"console script missing: {SCRIPT} (install hermes-memory-mcp-server)"
    return StdioServerParameters(command=str(SCRIPT), args=["--home", str(home), *extra])


def payload(result: Any) -> dict[str, Any]:
    """The JSON object a tool returned as its single text content."""
    assert len(result.content) == 1, result.content
    assert result.content[0].type == "text"
    data = json.loads(result.content[0].text)
    assert isinstance(data, dict)
    return data
