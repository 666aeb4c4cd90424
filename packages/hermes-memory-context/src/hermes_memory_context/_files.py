"""Reading one context file safely: containment, size, encoding, threat scan, truncation.

Every context file goes through `load_context_file`, whatever found it (the start-of-session
section, SOUL.md, progressive discovery). The function never raises for a bad file: the
problem becomes a one-line placeholder in the prompt, so the agent and the user can see that a
file was there and why it was left out.
"""

from __future__ import annotations

import codecs
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from hermes_memory_core import scan_for_threats
from hermes_memory_guard import scan_untrusted

__all__ = [
    "CONTEXT_FILE_MAX_CHARS",
    "HEAD_RATIO",
    "MAX_FILE_BYTES",
    "TAIL_RATIO",
    "TRUNCATION_MARKER",
    "LoadedFile",
    "blocked_placeholder",
    "load_context_file",
    "truncate_middle",
]

#: Longest text a context file may contribute, in characters (``len()`` of the decoded text).
CONTEXT_FILE_MAX_CHARS: Final[int] = 20_000
#: Share of the character limit kept from the start of an over-long file.
HEAD_RATIO: Final[float] = 0.7
#: Share of the character limit kept from the end of an over-long file.
TAIL_RATIO: Final[float] = 0.2
#: Files larger than this many bytes are not read at all (a placeholder says so). A context
#: file is read whole before it is scanned, so this bounds memory and scanning time.
MAX_FILE_BYTES: Final[int] = 1_048_576

#: Put between the kept head and tail of an over-long text. The reference documents no wording
#: for context files, so this one is ours: it says how much was left out, of what, and why.
TRUNCATION_MARKER: Final[str] = (
    "\n\n[... {omitted:,} characters of {name} left out here: it is longer than the "
    "{limit:,}-character limit for context files. Read the file itself for the full text. ...]"
    "\n\n"
)

Status = Literal["loaded", "blocked", "skipped", "empty"]

_OPEN_FLAGS: Final[int] = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO planted under a context-file name must not hang us
    | getattr(os, "O_NOFOLLOW", 0)  # the path is already resolved; a link swapped in is refused
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_READ_CHUNK: Final[int] = 65_536


@dataclass(frozen=True)
class LoadedFile:
    """One context file as it will appear in the prompt.

    :ivar path: the path it was found at (not resolved).
    :ivar label: the name shown to the model, e.g. ``"services/api/AGENTS.md"``.
    :ivar text: what the prompt gets: the (possibly truncated) content, or a placeholder.
    :ivar status: ``"loaded"`` (content, maybe truncated or with a decoding note),
        ``"blocked"`` (the threat scan found something), ``"skipped"`` (not read: outside the
        project, too large, not a regular file, unreadable) or ``"empty"`` (only whitespace).
    :ivar real_path: where the content really lives (symbolic links resolved), or ``None`` when
        the path could not be resolved.
    """

    path: Path
    label: str
    text: str
    status: Status
    real_path: Path | None


def blocked_placeholder(label: str, threat_ids: list[str]) -> str:
    """The text that replaces a context file in which the threat scan found something."""
    return (
        f"[BLOCKED: {label} contained potential prompt injection "
        f"({', '.join(threat_ids)}). Content not loaded.]"
    )


def _skipped(label: str, reason: str) -> str:
    return f"[SKIPPED: {label} {reason}. Content not loaded.]"


def truncate_middle(
    text: str,
    *,
    name: str,
    limit: int = CONTEXT_FILE_MAX_CHARS,
    marker: str = TRUNCATION_MARKER,
) -> str:
    """``text`` unchanged when it has at most ``limit`` characters; otherwise its first
    ``int(limit * 0.7)`` characters, the marker, and its last ``int(limit * 0.2)`` characters.

    The marker is formatted with ``omitted`` (characters left out), ``name`` and ``limit``.
    The 10 % of the limit not spent on content leaves room for the marker and the headings
    around the text.

    :raises ValueError: ``limit`` is not a positive integer.
    """
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"limit must be a positive integer, got {limit!r}")
    if len(text) <= limit:
        return text
    head = int(limit * HEAD_RATIO)
    tail = int(limit * TAIL_RATIO)
    omitted = len(text) - head - tail
    kept_tail = text[len(text) - tail :] if tail else ""
    return text[:head] + marker.format(omitted=omitted, name=name, limit=limit) + kept_tail


def _decode(data: bytes) -> tuple[str, bool]:
    """Decoded text and whether bytes had to be replaced. Byte-order marks are honoured and
    dropped (a UTF-8 BOM is an invisible character the threat scan would otherwise block)."""
    if data.startswith(codecs.BOM_UTF8):
        data, encoding = data[len(codecs.BOM_UTF8) :], "utf-8"
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"  # the codec reads and removes the BOM itself
    else:
        encoding = "utf-8"
    try:
        return data.decode(encoding), False
    except UnicodeDecodeError:
        return data.decode(encoding, errors="replace"), True


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def _read_bounded(real: Path, max_bytes: int) -> bytes | str:
    """The file's bytes, or the reason it was not read (a phrase for the placeholder)."""
    try:
        fd = os.open(real, _OPEN_FLAGS)
    except OSError as exc:
        return f"could not be opened ({exc.strerror or exc})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "is not a regular file"
        if info.st_size > max_bytes:
            return f"is too large to load ({info.st_size:,} bytes; the limit is {max_bytes:,})"
        chunks: list[bytes] = []
        total = 0
        while total <= max_bytes:  # never more than max_bytes + 1, even if the file grows
            chunk = os.read(fd, min(_READ_CHUNK, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            return f"is too large to load (it grew past the limit of {max_bytes:,} bytes)"
        return b"".join(chunks)
    except OSError as exc:
        return f"could not be read ({exc.strerror or exc})"
    finally:
        os.close(fd)


def load_context_file(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str],
    label: str,
    where: str = "the project",
    max_chars: int = CONTEXT_FILE_MAX_CHARS,
    max_bytes: int = MAX_FILE_BYTES,
    scope: str = "untrusted",
) -> LoadedFile:
    """Read one context file for the prompt, never raising for a bad file.

    In order: the path is resolved and must stay inside ``root`` (a symbolic link, or a linked
    parent directory, that leads elsewhere is refused); it must be a regular file of at most
    ``max_bytes`` bytes (checked on the open descriptor, and at most ``max_bytes + 1`` bytes
    are ever read); the bytes are decoded as UTF-8 (UTF-8 and UTF-16 byte-order marks
    honoured), undecodable bytes become U+FFFD and a note says so; the text is cut to
    ``max_chars`` with `truncate_middle`; what remains (exactly what the model would see) is
    scanned (``scope="untrusted"``, the default: `scan_untrusted`, i.e. the ``context`` scope
    plus exfiltration and tool-execution patterns, since a file found on disk is the least
    trusted text the agent reads; another scope: ``scan_for_threats(text, scope=scope)``)
    and a hit replaces the whole file
    with ``[BLOCKED: <label> contained potential prompt injection (<ids>). Content not
    loaded.]``. The kept head and tail are scanned joined together, so a payload split across
    the cut is caught; a payload only in the middle part that truncation leaves out is never
    shown and does not block the file. The scan cost is bounded by ``max_chars``, however
    large the file.

    :param path: the file.
    :param root: the directory the file must really live in (the git root, or the home for
        SOUL.md).
    :param label: the name shown to the model.
    :param where: how ``root`` is called in a refusal ("the project", "the Hermes home").
    """
    path = Path(path)
    try:
        real = Path(os.path.realpath(path))
        root_real = Path(os.path.realpath(root))
    except (OSError, ValueError) as exc:
        text = _skipped(label, f"could not be resolved ({exc})")
        return LoadedFile(path, label, text, "skipped", None)
    if not _inside(real, root_real):
        reason = f"leads through a symbolic link to a location outside {where}"
        return LoadedFile(path, label, _skipped(label, reason), "skipped", real)
    data = _read_bounded(real, max_bytes)
    if isinstance(data, str):
        return LoadedFile(path, label, _skipped(label, data), "skipped", real)
    text, replaced = _decode(data)
    if not text.strip():
        return LoadedFile(path, label, "", "empty", real)
    # Scan exactly what the model would see: the kept head and tail of a long file, however
    # far into the file the tail lies. The cost is bounded by ``max_chars``, not by the file.
    scanned = text
    if len(text) > max_chars:
        # the kept head and tail joined directly, so a payload split across the cut is seen
        head, tail = int(max_chars * HEAD_RATIO), int(max_chars * TAIL_RATIO)
        scanned = text[:head] + "\n" + (text[len(text) - tail :] if tail else "")
        text = truncate_middle(text, name=label, limit=max_chars)
    threats = (
        scan_untrusted(scanned) if scope == "untrusted" else scan_for_threats(scanned, scope=scope)
    )
    if threats:
        return LoadedFile(path, label, blocked_placeholder(label, threats), "blocked", real)
    if replaced:
        text = (
            f"[NOTE: {label} is not valid UTF-8; bytes that could not be decoded are shown "
            f"as U+FFFD.]\n\n{text}"
        )
    return LoadedFile(path, label, text, "loaded", real)
