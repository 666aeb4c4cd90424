"""Export a session archive to JSON Lines and import it back, losslessly.

Format (``hermes-memory-sessions`` JSONL, version 1), UTF-8, one JSON object per line,
lines separated by ``\\n``:

1. A header line (optional on import; ``sessions`` is informative)::

       {"type": "hermes-memory-sessions", "version": 1, "sessions": 2}

2. For every session, a session line followed by exactly ``messages`` message lines::

       {"type": "session", "messages": 3, "session": {"id": "20250305_091523_a1b2c3", ...}}
       {"type": "message", "message": {"id": 41, "session_id": "20250305_091523_a1b2c3",
                                       "role": "user", "content": "...", "timestamp": 1741...}}

   ``session`` is the session row exactly as ``SessionStore.get_session`` returns it and
   ``message`` one row exactly as ``SessionStore.get_messages`` returns it (same keys, values
   unchanged: floats are written with Python's shortest round-trip repr, text is not escaped
   beyond JSON's rules, so CJK stays readable). Parents are written before their children.

Importing validates the whole file first (a bad file imports nothing; errors name the line),
then writes one session per transaction, keeping session ids, message ids (when none of a
session's ids is taken in the destination; otherwise new ids in the same order, with a
warning), timestamps, order, tool fields, titles and lineage. Sessions already present are
skipped and reported, as with :func:`hermes_memory_sessions.importers._hermes.import_hermes_db`.
"""

from __future__ import annotations

import io
import json
import math
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from hermes_memory_sessions.importers._hermes import (
    ImportReport,
    ProgressCallback,
    _free_title,
    _is_title_conflict,
)

if TYPE_CHECKING:
    from hermes_memory_sessions.protocol import SessionArchive

__all__ = ["FORMAT", "VERSION", "JsonlFormatError", "export_jsonl", "import_jsonl"]

#: Value of ``type`` in the header line.
FORMAT = "hermes-memory-sessions"
#: Format version written by :func:`export_jsonl` (and the highest one :func:`import_jsonl` reads).
VERSION = 1


class JsonlFormatError(ValueError):
    """A JSONL export is malformed. ``line`` is the 1-based line number (0 = whole file)."""

    def __init__(self, line: int, message: str, *, source: str = "") -> None:
        where = f"{source}: " if source else ""
        super().__init__(f"{where}line {line}: {message}" if line else f"{where}{message}")
        self.line = line


# --------------------------------------------------------------------------- export


def _dumps(obj: Mapping[str, Any], what: str) -> bytes:
    try:
        text = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cannot export {what}: {exc}") from exc
    return text.encode("utf-8", "surrogatepass") + b"\n"


def _parents_first(sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_id = {s["id"]: s for s in sessions}
    out: list[dict[str, Any]] = []
    state: dict[str, int] = {}  # 1 = visiting, 2 = done
    for s in sessions:
        chain = []
        cur: dict[str, Any] | None = s
        while cur is not None and state.get(cur["id"]) is None:
            state[cur["id"]] = 1
            chain.append(cur)
            parent = cur.get("parent_session_id")
            cur = by_id.get(parent) if isinstance(parent, str) else None
        for item in reversed(chain):
            state[item["id"]] = 2
            out.append(item)
    return out


def export_jsonl(
    store: SessionArchive,
    out: str | os.PathLike[str] | IO[bytes] | IO[str],
    *,
    session_ids: Iterable[str] | None = None,
    progress: ProgressCallback | None = None,
) -> int:
    """Write sessions and their messages to ``out`` as JSONL; return the number of sessions.

    :param store: the archive to read.
    :param out: a path (written atomically, file mode 0600 — it holds private conversations) or an
        open binary/text file object (written to, not closed).
    :param session_ids: export only these sessions (unknown ids raise ``KeyError`` before anything
        is written); default all sessions.
    :param progress: optional ``progress(done, total)`` callback counted in sessions.

    :raises KeyError: an id in ``session_ids`` does not exist.
    :raises ValueError: a value cannot be represented in JSON (NaN/infinite timestamps).
    """
    sessions: list[dict[str, Any]] = []
    if session_ids is None:
        sessions = [dict(row) for row in store.iter_sessions()]
    else:
        for sid in dict.fromkeys(session_ids):
            row = store.get_session(sid)
            if row is None:
                raise KeyError(f"session not found: {sid}")
            sessions.append(dict(row))
    sessions = _parents_first(sessions)

    def lines() -> Iterator[bytes]:
        yield _dumps({"type": FORMAT, "version": VERSION, "sessions": len(sessions)}, "header")
        for done, s in enumerate(sessions, 1):
            messages = store.get_messages(s["id"])
            yield _dumps(
                {"type": "session", "messages": len(messages), "session": s},
                f"session {s['id']}",
            )
            for m in messages:
                yield _dumps({"type": "message", "message": dict(m)}, f"message {m.get('id')}")
            if progress is not None:
                progress(done, len(sessions))

    if progress is not None:
        progress(0, len(sessions))
    if isinstance(out, (str, os.PathLike)):
        _write_atomic(Path(out), lines())
    else:
        if isinstance(out, io.TextIOBase):
            for chunk in lines():
                out.write(chunk.decode("utf-8"))
        else:
            binary = cast("IO[bytes]", out)
            for chunk in lines():
                binary.write(chunk)
        out.flush()
    return len(sessions)


def _write_atomic(path: Path, chunks: Iterable[bytes]) -> None:
    path = path.expanduser()
    fd, tmp = tempfile.mkstemp(prefix=".tmp_", suffix=".jsonl", dir=path.parent or ".")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --------------------------------------------------------------------------- import


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _check_session(obj: Any, n: int, src: str) -> tuple[dict[str, Any], int]:
    session = obj.get("session")
    count = obj.get("messages")
    if not isinstance(session, dict):
        raise JsonlFormatError(n, "'session' must be an object", source=src)
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise JsonlFormatError(n, "'messages' must be a non-negative integer", source=src)
    sid = session.get("id")
    if not isinstance(sid, str) or not sid:
        raise JsonlFormatError(n, "session 'id' must be a non-empty string", source=src)
    bad = next((c for c in sid if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        raise JsonlFormatError(
            n, f"session 'id' contains the control character U+{ord(bad):04X}", source=src
        )
    if "started_at" in session and not _is_number(session["started_at"]):
        raise JsonlFormatError(n, "session 'started_at' must be a number", source=src)
    for key in ("title", "parent_session_id", "source"):
        if session.get(key) is not None and not isinstance(session[key], str):
            raise JsonlFormatError(n, f"session {key!r} must be a string or null", source=src)
    return session, count


def _check_message(obj: Any, n: int, session_id: str, src: str) -> dict[str, Any]:
    message = obj.get("message")
    if not isinstance(message, dict):
        raise JsonlFormatError(n, "'message' must be an object", source=src)
    owner = message.get("session_id", session_id)
    if owner != session_id:
        raise JsonlFormatError(
            n,
            f"message belongs to session {owner!r} but follows session {session_id!r}",
            source=src,
        )
    if not isinstance(message.get("role"), str) or not message["role"]:
        raise JsonlFormatError(n, "message 'role' must be a non-empty string", source=src)
    if message.get("content") is not None and not isinstance(message["content"], str):
        raise JsonlFormatError(n, "message 'content' must be a string or null", source=src)
    if "timestamp" in message and not _is_number(message["timestamp"]):
        raise JsonlFormatError(n, "message 'timestamp' must be a number", source=src)
    if (
        "id" in message
        and message["id"] is not None
        and (not isinstance(message["id"], int) or isinstance(message["id"], bool))
    ):
        raise JsonlFormatError(n, "message 'id' must be an integer", source=src)
    for key in ("tool_calls", "tool_call_id", "tool_name"):
        if message.get(key) is not None and not isinstance(message[key], str):
            raise JsonlFormatError(n, f"message {key!r} must be a string or null", source=src)
    return message


def _records(fh: IO[bytes], src: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for every non-blank line."""
    n = 0
    while True:
        raw = fh.readline()
        if not raw:
            return
        n += 1
        line = raw.rstrip(b"\r\n")
        if n == 1 and line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonlFormatError(n, f"not valid UTF-8 ({exc.reason})", source=src) from exc
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise JsonlFormatError(n, f"not valid JSON ({exc.msg})", source=src) from exc
        except RecursionError:
            raise JsonlFormatError(
                n, "JSON nested too deeply to be a session export", source=src
            ) from None
        if not isinstance(obj, dict):
            raise JsonlFormatError(n, "expected a JSON object", source=src)
        yield n, obj


@dataclass
class _Scan:
    sessions: int = 0
    messages: int = 0
    without_ids: set[str] = field(default_factory=set)  # sessions with a message lacking an id


def _scan(fh: IO[bytes], src: str) -> _Scan:
    """Validate the whole file; count sessions and messages."""
    result = _Scan()
    sessions = messages = 0
    expected = 0  # message lines still owed to the current session
    current = ""
    current_line = 0
    seen: set[str] = set()
    header_done = False
    for n, obj in _records(fh, src):
        kind = obj.get("type")
        if kind == FORMAT:
            if header_done or sessions:
                raise JsonlFormatError(n, "header must be the first line", source=src)
            version = obj.get("version")
            if not isinstance(version, int) or version > VERSION or version < 1:
                raise JsonlFormatError(
                    n,
                    f"unsupported format version {version!r} (this reader: {VERSION})",
                    source=src,
                )
            header_done = True
            continue
        header_done = True
        if kind == "session":
            if expected:
                raise JsonlFormatError(
                    n,
                    f"session {current!r} (line {current_line}) announced {expected} more"
                    " message line(s) before the next session",
                    source=src,
                )
            session, expected = _check_session(obj, n, src)
            current, current_line = session["id"], n
            if current in seen:
                raise JsonlFormatError(n, f"session {current!r} appears twice", source=src)
            seen.add(current)
            sessions += 1
        elif kind == "message":
            if not current:
                raise JsonlFormatError(n, "message line before any session line", source=src)
            if not expected:
                raise JsonlFormatError(
                    n,
                    f"more message lines than session {current!r} (line {current_line}) announced",
                    source=src,
                )
            message = _check_message(obj, n, current, src)
            if not isinstance(message.get("id"), int):
                result.without_ids.add(current)
            expected -= 1
            messages += 1
        else:
            raise JsonlFormatError(
                n, f"unknown line type {kind!r} (expected 'session' or 'message')", source=src
            )
    if expected:
        raise JsonlFormatError(
            0,
            f"file ends {expected} message line(s) short of session {current!r}"
            f" (line {current_line}): truncated export?",
            source=src,
        )
    result.sessions, result.messages = sessions, messages
    return result


def _spool(source: IO[bytes] | IO[str]) -> IO[bytes]:
    """Copy a non-seekable stream to an anonymous temp file (so it can be read twice)."""
    tmp = tempfile.TemporaryFile()  # noqa: SIM115 (returned to the caller, closed there)
    if isinstance(source, io.TextIOBase):
        for chunk in iter(lambda: source.read(1 << 16), ""):
            tmp.write(chunk.encode("utf-8"))
    else:
        shutil.copyfileobj(source, tmp)  # type: ignore[misc]
    tmp.seek(0)
    return tmp


def import_jsonl(
    source: str | os.PathLike[str] | IO[bytes] | IO[str],
    store: SessionArchive,
    *,
    progress: ProgressCallback | None = None,
) -> ImportReport:
    """Import a JSONL export made by :func:`export_jsonl` into ``store``.

    The whole input is validated before anything is written, so a malformed file imports
    nothing and raises :class:`JsonlFormatError` naming the first bad line. Sessions whose id
    already exists in ``store`` are skipped (listed in ``sessions_skipped``). Each session is
    written in one transaction; message ids are kept when they are free in the destination.

    :param source: a path or an open file object (binary or text; streams are spooled to a
        private temp file first).
    :param store: the destination archive.
    :param progress: optional ``progress(done, total)`` callback, counted in messages.
    """
    name = str(source) if isinstance(source, (str, os.PathLike)) else getattr(source, "name", "")
    name = name if isinstance(name, str) else ""
    owned: IO[bytes] | None = None
    if isinstance(source, (str, os.PathLike)):
        path = Path(source).expanduser()
        try:
            owned = path.open("rb")
        except OSError as exc:
            raise JsonlFormatError(0, f"cannot open ({exc.strerror or exc})", source=name) from exc
        fh: IO[bytes] = owned
    elif isinstance(source, io.TextIOBase) or not _seekable(source):
        owned = _spool(source)
        fh = owned
    else:
        fh = source  # type: ignore[assignment]
    try:
        start = fh.tell()
        scan = _scan(fh, name)
        fh.seek(start)
        return _write(fh, store, name, scan, progress)
    finally:
        if owned is not None:
            owned.close()


def _seekable(fh: Any) -> bool:
    try:
        return bool(fh.seekable())
    except (AttributeError, ValueError, OSError):
        return False


def _is_id_conflict(exc: ValueError) -> bool:
    text = str(exc)
    return "message id" in text and "already exists" in text


def _write(
    fh: IO[bytes],
    store: SessionArchive,
    name: str,
    scan: _Scan,
    progress: ProgressCallback | None,
) -> ImportReport:
    """Second pass over an already validated file: write the sessions."""
    n_messages = scan.messages
    without_ids = scan.without_ids
    report = ImportReport(source=name, layout="jsonl", sessions_total=scan.sessions)
    report.read_mode = "jsonl"
    done = 0
    if progress is not None:
        progress(0, n_messages)
    while True:
        obj = _next_object(fh)
        if obj is None:
            break
        if obj.get("type") != "session":
            continue  # the header
        session = dict(obj["session"])
        count = int(obj["messages"])
        first = fh.tell()
        sid = session["id"]
        if store.get_session(sid) is not None:
            report.sessions_skipped.append(sid)
            report.messages_skipped += count
        else:
            original_title = session.get("title")
            attempt = 0
            keep = sid not in without_ids
            while True:
                try:
                    store.import_session(session, _messages_at(fh, first, count), keep_ids=keep)
                    break
                except ValueError as exc:
                    if keep and _is_id_conflict(exc):
                        keep = False
                        report.warnings.append(
                            f"session {sid}: message ids already used in the archive;"
                            " new ids assigned (order kept)"
                        )
                        continue
                    if not (original_title and _is_title_conflict(exc)) or attempt >= 20:
                        raise
                    attempt += 1
                    session["title"] = _free_title(str(original_title), attempt)
            if attempt:
                report.warnings.append(
                    f"session {sid}: title {original_title!r} is already used in the archive;"
                    f" imported as {session['title']!r}"
                )
            report.sessions_imported += 1
            report.messages_imported += count
        _skip(fh, first, count)
        done += count
        if progress is not None:
            progress(done, n_messages)
    return report


def _next_object(fh: IO[bytes]) -> dict[str, Any] | None:
    """Next non-blank line of a validated file, parsed; None at the end."""
    while True:
        raw = fh.readline()
        if not raw:
            return None
        line = raw.strip()
        if line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]
        if line:
            obj: dict[str, Any] = json.loads(line.decode("utf-8"))
            return obj


def _skip(fh: IO[bytes], offset: int, count: int) -> None:
    """Position ``fh`` after the ``count`` non-blank lines that start at ``offset``."""
    fh.seek(offset)
    while count:
        raw = fh.readline()
        if not raw:
            return
        if raw.strip():
            count -= 1


def _messages_at(fh: IO[bytes], offset: int, count: int) -> Iterator[dict[str, Any]]:
    fh.seek(offset)
    for _ in range(count):
        obj = _next_object(fh)
        if obj is None:  # validated beforehand; the file changed underneath us
            raise JsonlFormatError(0, "file changed during import")
        message: dict[str, Any] = obj["message"]
        yield message
