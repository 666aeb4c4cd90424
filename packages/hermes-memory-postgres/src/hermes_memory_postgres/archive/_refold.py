"""Keep the ``cjk`` column in step with the folding rules of the CJK index.

The column holds the CJK-index document of each message, made in Python
(`hermes_memory_postgres._text.cjk_tsvector`, folded: full-width forms to ASCII, Traditional
Chinese to Simplified). When the folding rules or the OpenCC data change, documents made
before would not match folded queries, so `refresh_cjk` recomputes the column of every
message that holds non-ASCII text and records the rules it used in ``hm_index_meta``. It
runs inside `hermes_memory_postgres._schema.migrate` (under its advisory lock, once per
database and rules); only the derived column is rewritten, never a message.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import tuple_row

from hermes_memory_sessions.search import fold_version  # shared with the SQLite index

__all__ = ["CJK_FOLD_KEY", "needs_refresh", "refresh_cjk"]

#: ``hm_index_meta`` key: the fold version the ``cjk`` column was computed with.
CJK_FOLD_KEY = "cjk_fold"
_BATCH = 2000


def refresh_cjk(conn: psycopg.Connection[Any]) -> int:
    """Recompute ``cjk`` where needed when the fold version changed; returns rows updated."""
    from hermes_memory_postgres._text import cjk_tsvector

    want = fold_version()
    cur = conn.cursor(row_factory=tuple_row)
    row = cur.execute("SELECT value FROM hm_index_meta WHERE key = %s", (CJK_FOLD_KEY,)).fetchone()
    if row is not None and str(row[0]) == want:
        return 0
    updated = 0
    last: tuple[str, int] = ("", -(2**62))
    while True:
        rows = cur.execute(
            "SELECT owner, id, role, content, tool_calls FROM hm_messages"
            " WHERE (owner, id) > (%s, %s)"
            " AND (content ~ '[^\\x01-\\x7f]' OR tool_calls ~ '[^\\x01-\\x7f]')"
            " ORDER BY owner, id LIMIT %s",
            (*last, _BATCH),
        ).fetchall()
        if not rows:
            break
        batch = [(cjk_tsvector(r[2], r[3], r[4]), r[0], r[1]) for r in rows]
        cur.executemany(
            "UPDATE hm_messages SET cjk = %s::tsvector WHERE owner = %s AND id = %s", batch
        )
        updated += len(batch)
        last = (str(rows[-1][0]), int(rows[-1][1]))
    cur.execute(
        "INSERT INTO hm_index_meta(key, value) VALUES (%s, %s)"
        " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (CJK_FOLD_KEY, want),
    )
    return updated


def needs_refresh(conn: psycopg.Connection[Any]) -> bool:
    """Whether `refresh_cjk` has work (cheap: one row read)."""
    row = (
        conn.cursor(row_factory=tuple_row)
        .execute("SELECT value FROM hm_index_meta WHERE key = %s", (CJK_FOLD_KEY,))
        .fetchone()
    )
    return row is None or str(row[0]) != fold_version()
