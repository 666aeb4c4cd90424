"""Which Honcho conclusion holds which mirrored curated entry, so a ``remove`` can delete it.

A curated ``user`` entry the builtin store saves is mirrored as a Honcho conclusion (the AI
peer's conclusion about the user). When the entry is removed (or replaced) later, possibly
after a restart, the conclusion has to be found again: `ConclusionIndex` remembers the ids
Honcho gave each mirrored entry in ``<home>/honcho/conclusions.json`` (mode 0600, replaced
atomically, at most `MAX_ROWS` rows, oldest dropped first). It keeps a digest of the entry,
never its text. When the index has no id for an entry (an older version mirrored it, another
process did, or the file was lost), `delete_entry` lists the peer's conclusions and deletes
those whose content is the entry, exactly (after Unicode NFC and trimming: look-alike
letters, case or punctuation differences never match).

Every network call goes through the client's guard; a conclusion already gone (404) counts
as deleted, so a replayed remove is harmless.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import stat
import threading
import unicodedata
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory_core.kit import CallFailed, FailureKind, atomic_write_text, make_private_dirs

if TYPE_CHECKING:
    from hermes_memory_honcho._client import HonchoClient

__all__ = [
    "INDEX_DIR",
    "INDEX_FILE",
    "LIST_PAGE_SIZE",
    "MAX_LIST_PAGES",
    "MAX_ROWS",
    "ConclusionIndex",
    "delete_entry",
    "entry_text",
]

logger = logging.getLogger("hermes_memory_honcho")

#: Directory under the hermes home holding the adapter's own state.
INDEX_DIR = "honcho"
#: The index file inside `INDEX_DIR`.
INDEX_FILE = "conclusions.json"
#: Rows kept (one per mirrored entry); the oldest go first.
MAX_ROWS = 2000
#: Conclusions per ``conclusions/list`` page when the index has no id.
LIST_PAGE_SIZE = 100
#: Pages listed at most when searching for an entry without an id (bounds a remove).
MAX_LIST_PAGES = 20
_MAX_FILE_BYTES = 4 * 1024 * 1024
_VERSION = 1


def entry_text(text: str) -> str:
    """The form an entry is compared in: NFC, surrounding whitespace removed."""
    return unicodedata.normalize("NFC", text).strip()


def _digest(workspace: str, observer: str, observed: str, text: str) -> str:
    raw = "\x1f".join((workspace, observer, observed, entry_text(text)))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


class ConclusionIndex:
    """Mirrored entry → Honcho conclusion ids, persisted under ``home`` (None: memory only).

    Safe to share between threads. The file is the truth: each lookup re-reads it and each
    change rewrites it whole, so two processes sharing a home lose at most an id to a race,
    and `delete_entry` then finds the conclusion by listing. A file that is unreadable,
    malformed, a symbolic link or not a regular file is ignored with one warning (the index
    then lives in memory for this process).
    """

    def __init__(self, home: Path | None) -> None:
        self.path = home / INDEX_DIR / INDEX_FILE if home is not None else None
        self._lock = threading.Lock()
        self._rows: dict[str, list[str]] = {}
        self._usable = self.path is not None
        self._warned = False

    # ----------------------------------------------------------------- public
    def ids(self, workspace: str, observer: str, observed: str, text: str) -> list[str]:
        """The conclusion ids recorded for this entry (oldest first; ``[]`` if none)."""
        key = _digest(workspace, observer, observed, text)
        with self._lock:
            self._load()
            return list(self._rows.get(key, []))

    def add(self, workspace: str, observer: str, observed: str, text: str, cid: str) -> None:
        """Record that conclusion ``cid`` holds this entry."""
        key = _digest(workspace, observer, observed, text)
        with self._lock:
            self._load()
            ids = self._rows.pop(key, [])  # re-inserted: most recently used last
            if cid not in ids:
                ids.append(cid)
            self._rows[key] = ids[-16:]
            while len(self._rows) > MAX_ROWS:
                self._rows.pop(next(iter(self._rows)))
            self._save()

    def discard(self, workspace: str, observer: str, observed: str, text: str, cid: str) -> None:
        """Forget ``cid`` for this entry (it was deleted)."""
        key = _digest(workspace, observer, observed, text)
        with self._lock:
            self._load()
            ids = [i for i in self._rows.get(key, []) if i != cid]
            if ids:
                self._rows[key] = ids
            else:
                self._rows.pop(key, None)
            self._save()

    # ----------------------------------------------------------------- file
    def _problem(self, why: str) -> None:
        self._usable = False
        if not self._warned:
            self._warned = True
            logger.warning(
                "Honcho conclusion index %s not used (%s); removes find conclusions by "
                "listing them instead",
                self.path,
                why,
            )

    def _load(self) -> None:
        if not self._usable or self.path is None:
            return
        try:
            data = _read_regular(self.path)
        except FileNotFoundError:
            self._rows = {}
            return
        except OSError as exc:
            self._problem(exc.strerror or str(exc))
            return
        try:
            parsed = json.loads(data)
        except ValueError:
            self._problem("not valid JSON")
            return
        rows = parsed.get("rows") if isinstance(parsed, dict) else None
        if not isinstance(rows, dict):
            self._problem("unexpected content")
            return
        self._rows = {
            str(k): [str(i) for i in v if isinstance(i, str)]
            for k, v in rows.items()
            if isinstance(v, list)
        }

    def _save(self) -> None:
        if not self._usable or self.path is None:
            return
        directory = self.path.parent
        try:
            if directory.is_symlink():
                self._problem(f"{directory} is a symbolic link")
                return
            make_private_dirs(directory)  # parents too, not only the leaf
            payload = {"version": _VERSION, "rows": self._rows}
            atomic_write_text(self.path, json.dumps(payload, separators=(",", ":")), mode=0o600)
        except OSError as exc:
            self._problem(exc.strerror or str(exc))


def _read_regular(path: Path) -> str:
    """Read ``path`` if it is a regular file that is not a symbolic link."""
    if path.parent.is_symlink():
        raise OSError(errno.ELOOP, f"{path.parent} is a symbolic link")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "it is a symbolic link") from None
        raise
    with contextlib.closing(os.fdopen(fd, "rb")) as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(errno.EINVAL, "it is not a regular file")
        data = handle.read(_MAX_FILE_BYTES + 1)
    if len(data) > _MAX_FILE_BYTES:
        raise OSError(errno.EFBIG, "it is too large")
    return data.decode("utf-8", errors="replace")


def record_created(
    index: ConclusionIndex, client: HonchoClient, created: Any, texts: list[str]
) -> None:
    """Remember the ids of conclusions just created for ``texts`` (the SDK's answer)."""
    ws, ai, user = client.cfg.workspace, client.ai_id, client.user_id
    wanted = {entry_text(t) for t in texts}
    for item in created if isinstance(created, list) else []:
        cid, content = getattr(item, "id", None), getattr(item, "content", None)
        if isinstance(cid, str) and isinstance(content, str) and entry_text(content) in wanted:
            index.add(ws, ai, user, content, cid)


def delete_entry(client: HonchoClient, index: ConclusionIndex, text: str) -> int:
    """Delete the conclusions about the user that hold entry ``text``; returns how many.

    Ids from the index first; without any, the user's conclusions are listed (at most
    `MAX_LIST_PAGES` pages) and exact matches deleted. Raises the kit's failures for a
    transient problem (the caller keeps the write and retries).
    """
    ws, ai_id, user_id = client.cfg.workspace, client.ai_id, client.user_id
    _, _, ai = client.ensure_peers()
    view = ai.conclusions_of(user_id)
    known = index.ids(ws, ai_id, user_id, text)
    deleted = _delete(client, index, view, text, known)
    if not deleted:  # no id recorded, or every recorded one was already gone
        deleted = _delete(client, index, view, text, _find(client, view, entry_text(text)))
    return deleted


def _delete(
    client: HonchoClient, index: ConclusionIndex, view: Any, text: str, ids: list[str]
) -> int:
    ws, ai_id, user_id = client.cfg.workspace, client.ai_id, client.user_id
    deleted = 0
    for cid in ids:
        try:
            client.call("conclusions.delete", partial(view.delete, cid))
            deleted += 1
        except CallFailed as exc:
            if exc.failure.kind is not FailureKind.NOT_FOUND:
                raise
        index.discard(ws, ai_id, user_id, text, cid)
    return deleted


def _find(client: HonchoClient, view: Any, wanted: str) -> list[str]:
    found: list[str] = []
    page = 1
    while page <= MAX_LIST_PAGES:
        result = client.call("conclusions.list", partial(view.list, page=page, size=LIST_PAGE_SIZE))
        for item in getattr(result, "items", None) or []:
            content, cid = getattr(item, "content", None), getattr(item, "id", None)
            if isinstance(content, str) and isinstance(cid, str) and entry_text(content) == wanted:
                found.append(cid)
        pages = getattr(result, "pages", None)
        if not isinstance(pages, int) or page >= pages:
            break
        page += 1
    return found
