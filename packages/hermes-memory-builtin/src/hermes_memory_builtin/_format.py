"""The MEMORY.md / USER.md text format: reading, parsing, serialising, counting, rendering.

The format is Hermes Agent's, byte for byte: entries joined by ``"\\n§\\n"`` (LF, SECTION
SIGN, LF), no header and no trailing newline; an empty store is an empty file. This module is
pure (no locking, no writing) so that every other module can share one definition.
"""

from __future__ import annotations

import errno
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from hermes_memory_builtin._errors import MemoryFileError, UnsafeMemoryPath

__all__ = [
    "BLOCK_RULE",
    "ENTRY_DELIMITER",
    "MAX_FILE_BYTES",
    "MEMORY_BLOCK_HEADERS",
    "TARGET_FILES",
    "RawFile",
    "char_count",
    "dedupe",
    "delimiter_problem",
    "directory_symlink_problem",
    "format_count_usage",
    "format_usage",
    "hermes_entries",
    "normalize_newlines",
    "not_a_directory_problem",
    "parse_entries",
    "preview",
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
# A line of content that either reader would take for a delimiter.
_DELIMITER_LINE_RE = re.compile(r"(?:^|\n)[ \t]*§[ \t]*(?:\n|$)")

#: Memory files larger than this are refused as unreadable (a memory file is a few KB).
MAX_FILE_BYTES = 4 * 1024 * 1024

_BOM = b"\xef\xbb\xbf"
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


@dataclass(frozen=True)
class RawFile:
    """The result of reading one memory file without interpreting it.

    :param exists: whether a file (or something else) is present at the path.
    :param text: the decoded text with line endings normalised to LF; ``None`` when the file
        is missing or unreadable.
    :param error: why an existing file could not be read (``None`` if it was read).
    :param data: the raw bytes as read (``None`` when not read); used for drift backups.
    :param problem: for an unusable file, the `MemoryFileError` (or `UnsafeMemoryPath`)
        whose message names the path, the cause and the fix.
    """

    exists: bool
    text: str | None
    error: str | None = None
    data: bytes | None = None
    problem: MemoryFileError | None = None

    @property
    def readable(self) -> bool:
        """True when the file is missing (an empty store) or was read and decoded."""
        return self.error is None


def normalize_newlines(text: str) -> str:
    """Turn CRLF and lone CR line endings into LF."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _q(path: str | os.PathLike[str]) -> str:
    return shlex.quote(str(path))


def _link_target(path: Path) -> str:
    """`` (to <target>)`` for a symbolic link, "" when it cannot be read."""
    try:
        return f" (to {os.readlink(path)})"
    except OSError:
        return ""


def not_a_directory_problem(directory: Path) -> MemoryFileError:
    """The refusal for a memories directory path that holds something else (a file)."""
    return MemoryFileError(
        directory,
        "is not a directory",
        f"move it out of the way (mv {_q(directory)} {_q(str(directory) + '.old')}); the "
        "memories directory is created on the next write",
        code=errno.ENOTDIR,
    )


def directory_symlink_problem(directory: Path) -> UnsafeMemoryPath:
    """The refusal for a memories directory that is a symbolic link."""
    target = _link_target(directory)
    return UnsafeMemoryPath(
        directory,
        f"is a symbolic link{target}; the memories directory is never used through a link, "
        "because a link lets its target's files be read into the system prompt and replaced",
        f"replace the link with a real directory (mv {_q(directory)} "
        f"{_q(str(directory) + '.link')} && mkdir -m 700 {_q(directory)}, then copy MEMORY.md "
        "and USER.md into it), or point HERMES_HOME at the real location",
        code=errno.ELOOP,
    )


def split_pieces(raw: str) -> list[str]:
    """Split file text into stripped, non-empty pieces, keeping duplicates and order."""
    text = normalize_newlines(raw)
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


def delimiter_problem(content: str) -> str | None:
    """Why ``content`` cannot be one entry because it holds the entry delimiter, or ``None``.

    Refused: the exact delimiter ``"\\n§\\n"`` and any line holding only ``"§"`` (spaces or
    tabs around it allowed), which this package's reader treats as a delimiter. Such content
    would be saved as one entry and read back as several. ``content`` should already have
    LF line endings (`normalize_newlines`).
    """
    if "§" not in content or _DELIMITER_LINE_RE.search(normalize_newlines(content)) is None:
        return None
    return (
        "Content contains a line holding only '§', which is the separator between memory "
        "entries: it would be saved as one entry and read back as several. Remove that line "
        "(or put the § inside a sentence), or save the parts as separate entries."
    )


def hermes_entries(data: bytes) -> list[str] | None:
    """The entries Hermes Agent would read from file bytes ``data`` (its exact rules: drop a
    BOM, split on ``"\\n§\\n"`` only — no CRLF or space tolerance —, strip, drop empties,
    dedupe); ``None`` when the bytes are not UTF-8."""
    body = data[len(_BOM) :] if data.startswith(_BOM) else data
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text.strip():
        return []
    return dedupe([piece.strip() for piece in text.split(ENTRY_DELIMITER) if piece.strip()])


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
