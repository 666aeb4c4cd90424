"""Message rows of the SQLite archive: the stored columns, how values are encoded, the
masking of credentials in appended messages, and the insert shared by appends and imports
(the session's counters follow Hermes' rules).

The column list, the encoders and `scrub_messages` are shared with the PostgreSQL backend.
"""

from __future__ import annotations

import json
import sqlite3
import time
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "MESSAGE_DATA_FIELDS",
    "MESSAGE_FIELDS",
    "MESSAGE_TEXT_FIELDS",
    "PREVIEW_ELIGIBLE",
    "SUMMARY_PREFIXES",
    "check_id",
    "count_tool_calls",
    "encode_content",
    "encode_json",
    "insert_messages",
    "schema_columns",
    "scrub_messages",
]

#: How compression summary messages start: ours (``hermes_memory_context.SUMMARY_PREFIX``)
#: and Hermes Agent's. A summary is not an exchange of the user's (undo skips it) and not
#: a session's preview.
SUMMARY_PREFIXES = ("[CONTEXT SUMMARY]", "[CONTEXT COMPACTION")
#: SQL condition (both backends; no ``%``, which psycopg reserves) on a ``messages`` row
#: that may be a session's preview: live or compacted (not undone), and not a summary.
PREVIEW_ELIGIBLE = "(active = 1 OR compacted = 1) AND " + " AND ".join(
    f"substr(content, 1, {len(p)}) <> '{p}'" for p in SUMMARY_PREFIXES
)
#: Every stored column of a message, in table order.
MESSAGE_FIELDS = (
    "id",
    "session_id",
    "role",
    "content",
    "tool_call_id",
    "tool_calls",
    "tool_name",
    "timestamp",
    "token_count",
    "finish_reason",
    "reasoning",
    "active",
    "compacted",
    "effect_disposition",
    "reasoning_content",
    "reasoning_details",
    "codex_reasoning_items",
    "codex_message_items",
    "platform_message_id",
    "observed",
    "api_content",
)
#: Message columns a caller (or an importer) supplies: every stored field but the two keys.
MESSAGE_DATA_FIELDS = tuple(f for f in MESSAGE_FIELDS if f not in ("id", "session_id"))
#: Message fields that hold free text: where `scrub_messages` masks credentials (the fields
#: the Hermes importer masks). Role, ids, timestamps, ``tool_name`` and the rest are kept.
MESSAGE_TEXT_FIELDS = ("content", "tool_calls", "reasoning", "reasoning_content", "api_content")
_CALLS_AT = MESSAGE_TEXT_FIELDS.index("tool_calls")


def encode_json(value: Any) -> str | None:
    """A JSON column value: ``None`` stays NULL, text is taken as already-encoded JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def encode_content(value: Any) -> str | None:
    """Message content: text as it is, anything else (a list of parts) as JSON."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def scrub_messages(messages: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``messages`` with credentials masked in their `MESSAGE_TEXT_FIELDS`
    (`hermes_memory_core.scrub_secrets`); what the archives' ``append_messages`` records.

    The whole batch is one value for the scrubber, so a key recognised in one message
    (``OPENAI_API_KEY=sk-…``) is masked where it appears bare in another. ``tool_calls``
    given as JSON text is decoded first, so arguments nested as JSON text are seen as plain
    text (``{"password": "…"}``), and encoded again only when something was masked. A message
    with nothing to mask is returned as given (the same object), a masked one as a copy;
    every other field is kept as it is.
    """
    from hermes_memory_core import scrub_secrets  # the rule set loads on first use

    rows = list(messages)
    texts: list[list[Any]] = []
    decoded: list[bool] = []  # tool_calls given as JSON text, decoded for the scrubber
    for m in rows:
        values = [m.get(name) for name in MESSAGE_TEXT_FIELDS]
        calls = values[_CALLS_AT]
        is_json = False
        if isinstance(calls, str) and calls:
            try:
                values[_CALLS_AT] = json.loads(calls)
                is_json = True
            except ValueError:
                pass
        texts.append(values)
        decoded.append(is_json)
    clean = scrub_secrets(texts)
    if clean is texts:
        return rows
    out: list[Mapping[str, Any]] = []
    for m, before, after, was_json in zip(rows, texts, clean, decoded, strict=True):
        changed = {
            name: value
            for name, old, value in zip(MESSAGE_TEXT_FIELDS, before, after, strict=True)
            if value != old
        }
        if was_json and "tool_calls" in changed:
            changed["tool_calls"] = json.dumps(changed["tool_calls"], ensure_ascii=False)
        out.append({**m, **changed} if changed else m)
    return out


def count_tool_calls(encoded: str | None) -> int:
    """How many tool calls an encoded ``tool_calls`` value holds (Hermes' counter)."""
    if not encoded:
        return 0
    try:
        value = json.loads(encoded)
    except ValueError:
        return 1
    return len(value) if isinstance(value, list) else 1


def check_id(session_id: Any) -> str:
    """``session_id`` when it is a non-empty string of printable text, else ValueError."""
    if not isinstance(session_id, str) or not session_id.strip():
        raise ValueError("session_id must be a non-empty string")
    bad = next((ch for ch in session_id if ch == "\x00" or unicodedata.category(ch) == "Cc"), None)
    if bad is not None:
        raise ValueError(
            f"session id {session_id!r} contains the control character U+{ord(bad):04X};"
            " session ids are printable text"
        )
    return session_id


def schema_columns(conn: sqlite3.Connection, table: str) -> set[str]:
    """Column names of ``table``."""
    return {str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")}


def insert_messages(
    conn: sqlite3.Connection,
    session_id: str,
    messages: Iterable[Mapping[str, Any]],
    *,
    keep_ids: bool = False,
) -> list[int]:
    """Insert ``messages`` of one session in order and update its counters; returns the ids
    (``keep_ids``: each message keeps its ``id``). Runs inside the caller's write."""
    ids: list[int] = []
    live = 0  # Hermes' counters describe the live (active) conversation only
    tool_calls_total = 0
    last_ts: float | None = None
    now = time.time()
    for m in messages:
        role = m.get("role")
        if not isinstance(role, str) or not role.strip():
            raise ValueError("message role must be a non-empty string")
        values: dict[str, Any] = {k: m.get(k) for k in MESSAGE_DATA_FIELDS if k in m}
        values["role"] = role
        values["content"] = encode_content(m.get("content"))
        values["tool_calls"] = encode_json(m.get("tool_calls"))
        ts = m.get("timestamp")
        values["timestamp"] = float(ts) if ts is not None else now
        if values.get("active") is None:
            values.pop("active", None)
        if values.get("compacted") is None:
            values.pop("compacted", None)
        if keep_ids:
            values["id"] = m["id"]
        cols = ["session_id", *values]
        cur = conn.execute(
            f"INSERT INTO messages({','.join(cols)}) VALUES ({','.join('?' * len(cols))})",  # noqa: S608
            [session_id, *values.values()],
        )
        ids.append(int(cur.lastrowid or 0))
        last_ts = values["timestamp"] if last_ts is None else max(last_ts, values["timestamp"])
        if values.get("active", 1) in (0, False):
            continue
        live += 1
        if role == "assistant":
            tool_calls_total += count_tool_calls(values["tool_calls"])
    if ids:
        conn.execute(
            "UPDATE sessions SET message_count = COALESCE(message_count, 0) + ?,"
            " tool_call_count = COALESCE(tool_call_count, 0) + ?,"
            " last_activity_at = MAX(COALESCE(last_activity_at, 0), ?) WHERE id = ?",
            (live, tool_calls_total, last_ts, session_id),
        )
    return ids
