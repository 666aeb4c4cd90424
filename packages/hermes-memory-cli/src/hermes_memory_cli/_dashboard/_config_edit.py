"""Several ``section.key`` changes to ``config.yaml`` at once, for the settings page.

Each change is the CLI's minimal line edit (`hermes_memory_cli._yamledit`, the same code
`hermes-memory config set/unset` uses): only the key's own line changes, the result is
parsed again and checked, and anything it cannot do safely raises `ConfigEditError` with
nothing written.
"""

from __future__ import annotations

from typing import Any

from hermes_memory_cli._configedit import ConfigEditError
from hermes_memory_cli._yamledit import with_key, without_key

__all__ = ["ConfigEditError", "with_values"]


def with_values(text: str, changes: dict[tuple[str, str], Any | None]) -> str:
    """``text`` with each ``(section, key)`` set to its value (``None``: removed).

    :raises ConfigEditError: the file is not valid YAML, or an edit would change more.
    """
    for (section, key), value in changes.items():
        if value is None:
            edited = without_key(text, section, key)
            text = text if edited is None else edited
        else:
            text = with_key(text, section, key, value)
    return text
