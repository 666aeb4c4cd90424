"""Messages and sessions as PostgreSQL stores them: normalising, ``COPY`` rows, NUL text.

PostgreSQL ``text`` cannot hold U+0000: such a field is stored with U+FFFD in its column
(searchable, visible) and its exact text in ``nul_fields`` (JSON), restored on read.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

import psycopg

from hermes_memory_postgres._text import cjk_tsvector, tsvector_literal, words_document
from hermes_memory_postgres.archive._termstats import count_message
from hermes_memory_sessions.storage import (
    MESSAGE_DATA_FIELDS,
    MESSAGE_FIELDS,
    encode_content,
    encode_json,
)

__all__ = [
    "COPY_COLUMNS",
    "SELECT_MSG",
    "VIEW_COLS",
    "copy_row",
    "normal_message",
    "restore_nul",
    "session_columns",
    "session_dict",
]

#: Every stored column of a message (``m`` alias) plus ``nul_fields``.
SELECT_MSG = ", ".join(f"m.{c}" for c in (*MESSAGE_FIELDS, "nul_fields"))
#: The columns of a message in views (scroll, anchored, live conversation).
VIEW_COLS = "id, session_id, role, content, timestamp, tool_name, tool_calls, tool_call_id"
#: The columns a ``COPY`` into ``hm_messages`` writes, in `copy_row`'s order.
COPY_COLUMNS = ("owner", "id", "session_id", *MESSAGE_DATA_FIELDS, "words", "cjk", "nul_fields")
_DEFAULTS = {"active": 1, "compacted": 0, "observed": 0}
_DEFAULT_AT = tuple((MESSAGE_DATA_FIELDS.index(f), v) for f, v in _DEFAULTS.items())
_SESSION_COLS_CACHE: list[str] = []
_DATA_FIELDS = frozenset(MESSAGE_DATA_FIELDS)
_FIELD_AT = {f: i for i, f in enumerate(MESSAGE_DATA_FIELDS)}


def normal_message(m: Mapping[str, Any], *, keep_id: bool = False) -> dict[str, Any]:
    """A message as stored: the data columns, role checked, content/tool calls as text,
    the timestamp fixed (now when missing)."""
    role = m.get("role")
    if not isinstance(role, str) or not role.strip():
        raise ValueError("message role must be a non-empty string")
    out: dict[str, Any] = {k: m[k] for k in m if k in _DATA_FIELDS}
    out["role"] = role
    content = m.get("content")
    out["content"] = (
        content if content is None or content.__class__ is str else encode_content(content)
    )
    calls = m.get("tool_calls")
    out["tool_calls"] = calls if calls is None or calls.__class__ is str else encode_json(calls)
    ts = m.get("timestamp")
    out["timestamp"] = float(ts) if ts is not None else time.time()
    if "active" in out and out["active"] is None:
        del out["active"]
    if "compacted" in out and out["compacted"] is None:
        del out["compacted"]
    if keep_id:
        out["id"] = m.get("id")
    return out


def copy_row(
    owner: str, mid: int, sid: str, m: Mapping[str, Any], df: Counter[str] | None = None
) -> tuple[Any, ...]:
    """One ``COPY`` row of `COPY_COLUMNS`: the data, both ``tsvector`` literals made in
    Python, and the exact text of fields holding NUL. The message is counted into ``df``
    (the owner's term statistics: `count_message`)."""
    values: list[Any] = list(map(m.get, MESSAGE_DATA_FIELDS))
    for i, default in _DEFAULT_AT:
        if values[i] is None:
            values[i] = default
    exact: dict[str, str] = {}
    for field, v in m.items():  # a stored message holds few keys: cheaper than every field
        cls = v.__class__
        if cls is str:
            if "\x00" in v and field in _FIELD_AT:
                # text cannot hold NUL: the column shows U+FFFD (searchable, visible) and
                # the exact text is kept in nul_fields (JSON escapes NUL), restored on read
                exact[field] = v
                values[_FIELD_AT[field]] = v.replace("\x00", "\ufffd")
        elif cls is bool and field in _FIELD_AT:
            values[_FIELD_AT[field]] = int(v)
    role, content, tool_calls = m.get("role"), m.get("content"), m.get("tool_calls")
    tokens = words_document(role, content, m.get("tool_name"), tool_calls)
    if df is not None:
        count_message(df, role, set(tokens))
    words = tsvector_literal(tokens)
    cjk = cjk_tsvector(role, content, tool_calls)
    if len(exact) > 1:  # the order of the columns, whatever the order of the keys
        exact = {f: exact[f] for f in MESSAGE_DATA_FIELDS if f in exact}
    nul = json.dumps(exact, ensure_ascii=True) if exact else None
    return (owner, mid, sid, *values, words, cjk, nul)


def restore_nul(row: Mapping[str, Any]) -> dict[str, Any]:
    """A stored message as given: fields that held NUL get their exact text back."""
    d = dict(row)
    exact = d.pop("nul_fields", None)
    if exact:
        d.update(json.loads(exact))
    return d


def session_columns(conn: psycopg.Connection[Any]) -> set[str]:
    """The columns of ``hm_sessions`` (read once per process)."""
    if not _SESSION_COLS_CACHE:
        rows = conn.execute(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_name = 'hm_sessions' AND table_schema = current_schema()"
        ).fetchall()
        _SESSION_COLS_CACHE.extend(str(r["column_name"]) for r in rows)
    return set(_SESSION_COLS_CACHE)


def session_dict(row: Mapping[str, Any]) -> dict[str, Any]:
    """A session row without its ``owner`` column."""
    d = dict(row)
    d.pop("owner", None)
    return d
