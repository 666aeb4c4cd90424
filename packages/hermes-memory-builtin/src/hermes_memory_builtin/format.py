"""The MEMORY.md / USER.md text format: reading, parsing, serialising, counting, rendering.

The format is Hermes Agent's, byte for byte: entries joined by ``"\\n§\\n"`` (LF, SECTION
SIGN, LF), no header and no trailing newline; an empty store is an empty file. This module is
pure (no locking, no writing) so that every other module can share one definition.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BLOCK_RULE",
    "ENTRY_DELIMITER",
    "MEMORY_BLOCK_HEADERS",
    "TARGET_FILES",
    "RawFile",
    "char_count",
    "dedupe",
    "format_count_usage",
    "format_usage",
    "normalise_newlines",
    "parse_entries",
    "preview",
    "read_raw",
    "render_block",
    "serialise",
    "split_pieces",
]

#: The separator between two entries in MEMORY.md / USER.md.
ENTRY_DELIMITER = "\n§\n"

#: File name of each target inside the memories directory.
TARGET_FILES: dict[str, str] = {"memory": "MEMORY.md", "user": "USER.md"}

#: Header of each rendered system-prompt block; the usage bracket follows after one space.
MEMORY_BLOCK_HEADERS: dict[str, str] = {
    "memory": "MEMORY (your personal notes)",
    "user": "USER PROFILE (who the user is)",
}

#: The rule above and below a block header: 46 BOX DRAWINGS DOUBLE HORIZONTAL characters.
BLOCK_RULE = "═" * 46

# A delimiter line: a line holding only "§", tolerating spaces/tabs around the sign. The
# clean Hermes delimiter "\n§\n" is the common case; the tolerance keeps hand-edited files
# (" § ", "§  ") from merging two entries into one.
_DELIMITER_RE = re.compile(r"\n[ \t]*§[ \t]*\n")


@dataclass(frozen=True)
class RawFile:
    """The result of reading one memory file without interpreting it.

    :param exists: whether a file (or something else) is present at the path.
    :param text: the decoded text with line endings normalised to LF; ``None`` when the file
        is missing or unreadable.
    :param error: why an existing file could not be read (``None`` if it was read).
    :param data: the raw bytes as read (``None`` when not read); used for drift backups.
    """

    exists: bool
    text: str | None
    error: str | None = None
    data: bytes | None = None

    @property
    def readable(self) -> bool:
        """True when the file is missing (an empty store) or was read and decoded."""
        return self.error is None


def normalise_newlines(text: str) -> str:
    """Turn CRLF and lone CR line endings into LF."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_raw(path: Path) -> RawFile:
    """Read ``path`` as UTF-8 (a leading BOM is dropped), strictly.

    A missing file is an empty store. A file that exists but cannot be read or decoded is
    reported with ``error`` set and is never treated as empty, so no caller can overwrite
    memory it failed to see.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return RawFile(exists=False, text=None)
    except OSError as exc:
        return RawFile(exists=True, text=None, error=f"{type(exc).__name__}: {exc}")
    try:
        text = data.decode("utf-8-sig", errors="strict")
    except UnicodeDecodeError as exc:
        return RawFile(exists=True, text=None, error=f"invalid UTF-8: {exc}", data=data)
    return RawFile(exists=True, text=normalise_newlines(text), data=data)


def split_pieces(raw: str) -> list[str]:
    """Split file text into stripped, non-empty pieces, keeping duplicates and order."""
    text = normalise_newlines(raw)
    if not text.strip():
        return []
    pieces = (piece.strip() for piece in _DELIMITER_RE.split(text))
    return [piece for piece in pieces if piece]


def dedupe(entries: list[str]) -> list[str]:
    """Drop exact repeats, keeping the first occurrence and the order."""
    seen: set[str] = set()
    unique: list[str] = []
    for entry in entries:
        if entry not in seen:
            seen.add(entry)
            unique.append(entry)
    return unique


def parse_entries(raw: str | None) -> list[str]:
    """Parse file text into the entry list: split on the delimiter, strip, drop empties, dedupe.

    A ``"§"`` inside a line is content; only a line holding nothing but ``"§"`` separates
    entries. CRLF files parse like LF files.
    """
    if raw is None:
        return []
    return dedupe(split_pieces(raw))


def serialise(entries: list[str]) -> str:
    """The file text for ``entries``: joined by the delimiter, no trailing newline."""
    return ENTRY_DELIMITER.join(entries)


def char_count(entries: list[str]) -> int:
    """Characters (code points) the entries use, delimiters included: ``len`` of the file text."""
    if not entries:
        return 0
    return sum(len(entry) for entry in entries) + len(ENTRY_DELIMITER) * (len(entries) - 1)


def format_usage(used: int, limit: int) -> str:
    """Usage as ``"P% — C/L chars"`` with P floored and capped at 100."""
    percent = min(100, int(used / limit * 100)) if limit > 0 else 0
    return f"{percent}% — {used:,}/{limit:,} chars"


def format_count_usage(used: int, limit: int) -> str:
    """Usage as ``"C/L"`` (the short form carried by error responses)."""
    return f"{used:,}/{limit:,}"


def preview(entry: str, width: int = 80) -> str:
    """The first ``width`` characters of an entry, with ``"..."`` when it was cut."""
    return entry[:width] + ("..." if len(entry) > width else "")


def render_block(target: str, entries: list[str], limit: int) -> str | None:
    """The system-prompt block for one target, or ``None`` when there are no entries."""
    if not entries:
        return None
    body = serialise(entries)
    header = f"{MEMORY_BLOCK_HEADERS[target]} [{format_usage(len(body), limit)}]"
    return f"{BLOCK_RULE}\n{header}\n{BLOCK_RULE}\n{body}"
