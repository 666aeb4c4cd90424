"""Reading a local file for ``retaindb_upload_file`` safely, and shaping stored files for
the model.

The model names the file, so the read is confined: the path (relative paths are taken from
the working directory) must resolve inside the working directory, its last component must
not be a symbolic link, it must be a regular file (never a FIFO, socket or device, never
anything under ``/dev``, ``/proc`` or ``/sys``) and at most `MAX_UPLOAD_BYTES` long. Symbolic
links in the directories above are followed, but only when the file they lead to is still
inside the working directory. Credential files (``.env``, private keys, anything under
``.ssh``, ``.aws``, ``.git`` …) are refused by name: a prompt-injected model must not be able
to send them away.
"""

from __future__ import annotations

import codecs
import mimetypes
import os
import re
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_READ_CHARS",
    "MAX_UPLOAD_BYTES",
    "LocalFile",
    "decode_text",
    "public_file",
    "read_local_file",
    "remote_path",
]

MAX_UPLOAD_BYTES = 10 * 1024 * 1024
"""The largest file ``retaindb_upload_file`` sends (10 MiB)."""
MAX_READ_CHARS = 32_000
"""The most characters of a stored file ``retaindb_read_file`` returns."""
MAX_READ_BYTES = 4 * MAX_READ_CHARS + 4
"""The most bytes of a stored file downloaded for ``retaindb_read_file``."""

_SYSTEM_TREES = (Path("/dev"), Path("/proc"), Path("/sys"))
# Credential files a prompt-injected model could be told to upload: refused by name.
_SECRET_NAMES = re.compile(
    r"^(\.env(\..*)?|\.netrc|\.pgpass|\.npmrc|\.pypirc|\.git-credentials|credentials"
    r"(\.json)?|id_(rsa|dsa|ecdsa|ed25519)(\.pub)?|.*\.(pem|key|p12|pfx|keystore|jks))$",
    re.IGNORECASE,
)
_SECRET_DIRS = frozenset({".ssh", ".gnupg", ".aws", ".kube", ".docker", ".git"})


def _is_credential_file(path: Path) -> bool:
    """A file whose name or folder says it holds credentials (``.env``, keys, ``.ssh/``)."""
    return bool(_SECRET_NAMES.match(path.name)) or any(
        part.lower() in _SECRET_DIRS for part in path.parts[:-1]
    )


_TEXT_SUFFIXES = (
    ".txt",
    ".md",
    ".json",
    ".csv",
    ".tsv",
    ".yaml",
    ".yml",
    ".xml",
    ".html",
    ".htm",
    ".rst",
    ".toml",
    ".ini",
    ".log",
    ".py",
)


@dataclass(frozen=True)
class LocalFile:
    """A local file read for upload: its name, MIME type and bytes."""

    name: str
    mime_type: str
    data: bytes


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def read_local_file(local_path: str, cwd: Path) -> LocalFile:
    """Read ``local_path`` (relative to ``cwd``) under the rules of this module.

    :raises ValueError: with a sentence saying why the file is refused.
    """
    if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in local_path):
        raise ValueError("'local_path' holds control or invisible characters")
    root = cwd.resolve()
    given = Path(local_path).expanduser()
    path = given if given.is_absolute() else root / given
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise ValueError(f"no such file: {local_path}") from None
    if any(_inside(resolved, tree) for tree in _SYSTEM_TREES):
        raise ValueError(f"{local_path} is a system file; only regular files can be uploaded")
    if not _inside(resolved, root):
        raise ValueError(f"{local_path} is outside the working directory {root}")
    if _is_credential_file(resolved.relative_to(root)):
        raise ValueError(f"{local_path} looks like a credential file; it is never uploaded")
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(resolved, flags)  # O_NONBLOCK: a FIFO never blocks the open
    except OSError as exc:
        raise ValueError(f"cannot open {local_path}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{local_path} is not a regular file")
        if info.st_size > MAX_UPLOAD_BYTES:
            raise ValueError(
                f"{local_path} is {info.st_size} bytes; the limit is "
                f"{MAX_UPLOAD_BYTES} bytes (10 MiB)"
            )
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_UPLOAD_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot read {local_path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_UPLOAD_BYTES:  # grew while being read
        raise ValueError(f"{local_path} is larger than {MAX_UPLOAD_BYTES} bytes (10 MiB)")
    mime = mimetypes.guess_type(resolved.name)[0] or "application/octet-stream"
    return LocalFile(resolved.name, mime, data)


def remote_path(value: str | None, name: str) -> str:
    """The destination path in the file store (``/<name>`` by default).

    :raises ValueError: control or invisible characters, or longer than 1024 characters.
    """
    text = (value or f"/{name}").strip()
    if len(text) > 1024:
        raise ValueError("'remote_path' is longer than 1024 characters")
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in text):
        raise ValueError("'remote_path' holds control or invisible characters")
    return text if text.startswith("/") else f"/{text}"


def public_file(file: Any) -> dict[str, Any]:
    """The fields of a stored file shown to the model."""
    if not isinstance(file, dict):
        return {}
    keys = (
        "id",
        "name",
        "path",
        "rdb_uri",
        "scope",
        "mime_type",
        "size",
        "size_bytes",
        "status",
        "created_at",
    )
    return {k: file[k] for k in keys if file.get(k) is not None}


def is_text(file: dict[str, Any], data: bytes) -> bool:
    """Whether a stored file is text worth returning to the model."""
    mime = str(file.get("mime_type") or "").lower()
    if mime.startswith("text/") or mime in ("application/json", "application/xml"):
        return True
    if str(file.get("name") or "").lower().endswith(_TEXT_SUFFIXES):
        return True
    return b"\x00" not in data[:4096] and _utf8(data)


def _utf8(data: bytes) -> bool:
    try:
        codecs.getincrementaldecoder("utf-8")("strict").decode(data, final=False)
    except UnicodeDecodeError:
        return False
    return True


def decode_text(data: bytes, complete: bool) -> tuple[str, bool]:
    """``data`` as text of at most `MAX_READ_CHARS` characters, and whether it was cut.

    ``complete`` is False when ``data`` is only the head of the file: a character split at
    the end is then dropped rather than shown as a replacement mark.
    """
    text = codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=complete)
    cut = not complete or len(text) > MAX_READ_CHARS
    return text[:MAX_READ_CHARS], cut
