"""Helpers the context tests import by name (a conftest module cannot be imported safely:
every test folder has one and they share the module name)."""

from __future__ import annotations

from pathlib import Path


def write(path: Path, text: str | bytes) -> Path:
    """Write ``text`` (UTF-8) or raw bytes at ``path``, creating parent folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path
