"""Threat scanning of memory content, at write time and for the system-prompt snapshot.

Both use the ``strict`` scope of `hermes_memory_core.threats`. Every entry is scanned, also
one that already starts with ``[BLOCKED:`` (the reference let such entries through
unscanned, which was an injection bypass). Entries longer than the scanner's window are
blocked whole rather than scanned in part, so a payload cannot hide beyond the window.
"""

from __future__ import annotations

from hermes_memory_builtin.format import TARGET_FILES
from hermes_memory_core.threats import first_threat_message, scan_for_threats

__all__ = ["MAX_SCAN_CHARS", "sanitise_for_prompt", "write_threat"]

#: The scanner reads at most this many characters of a text.
MAX_SCAN_CHARS = 65_536


def write_threat(content: str) -> str | None:
    """The refusal message for content that must not be written, or ``None`` when clean."""
    if len(content) > MAX_SCAN_CHARS:
        return (
            f"Blocked: content is too large to scan ({len(content):,} chars, the scanner reads "
            f"{MAX_SCAN_CHARS:,}). Memory entries must be short."
        )
    return first_threat_message(content, scope="strict")


def sanitise_for_prompt(target: str, entries: list[str]) -> list[str]:
    """``entries`` with every flagged entry replaced by a ``[BLOCKED: …]`` placeholder."""
    filename = TARGET_FILES[target]
    clean: list[str] = []
    for entry in entries:
        if len(entry) > MAX_SCAN_CHARS:
            clean.append(
                f"[BLOCKED: {filename} entry too large to scan ({len(entry):,} chars). "
                "Removed from system prompt; use memory(action=remove) to delete the original.]"
            )
            continue
        ids = scan_for_threats(entry, scope="strict")
        if ids:
            found = ", ".join(dict.fromkeys(ids))
            clean.append(
                f"[BLOCKED: {filename} entry contained threat pattern(s): {found}. "
                "Removed from system prompt; use memory(action=remove) to delete the original.]"
            )
        else:
            clean.append(entry)
    return clean
