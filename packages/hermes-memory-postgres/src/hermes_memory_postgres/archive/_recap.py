"""Re-index the messages stored before the per-message index cap (issue 21).

The word and CJK documents of a message index only its first `MESSAGE_INDEX_PREFIX`
characters (`TOOL_INDEX_PREFIX` of tool output), so that one pasted log cannot make every
search over its words slow. Rows written by a release without the cap keep their whole
text in the index until they are recomputed. `recap_long_rows` does that once per database
and cap: it walks ``hm_messages`` in primary-key windows, recomputes ``words`` and ``cjk``
of the rows whose text is longer than the cap (the others were indexed whole, which the
cap leaves as they are), keeps ``hm_term_df`` exact, and records the cap in
``hm_index_meta``.

It runs after `hermes_memory_postgres._schema.migrate`'s transaction, never inside it:
every window is its own short transaction that locks only the long rows it rewrites
(``FOR UPDATE``, at most 100 of them), and saves where it stopped, so a run that is
interrupted (a killed process, a lost server) resumes from there at the next open. One
host does the work at a time (a session advisory lock; the others skip it and search the
old index meanwhile). The lock is the schema's: deployments in other schemas of the same
database re-index their own tables at the same time, instead of skipping the work as if
another host were doing it.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

import psycopg
from psycopg.rows import tuple_row

from hermes_memory_postgres.archive._termstats import add_frequencies, count_message
from hermes_memory_sessions.storage import MESSAGE_INDEX_PREFIX, TOOL_INDEX_PREFIX

__all__ = ["INDEX_CAP_KEY", "cap_marker", "needs_recap", "recap_long_rows"]

logger = logging.getLogger(__name__)

#: ``hm_index_meta`` key: the caps the ``words`` / ``cjk`` columns were computed with.
INDEX_CAP_KEY = "index_cap"
#: ``hm_index_meta`` key: ``owner`` and ``id`` of the last row an unfinished run passed.
_RESUME_KEY = "index_cap_resume"
#: Rows of the primary key looked at per window (each window is one transaction).
_WINDOW = 2000
#: Long rows rewritten per transaction at most (each holds tens of KB of index).
_MAX_LONG = 100
_LOCK_KEY = 0x686D6361  # "hmca": one host re-indexes a schema's tables at a time
#: The second key of that lock: the schema whose tables are re-indexed.
_LOCK_SCHEMA = "hashtext(current_schema())"


def cap_marker() -> str:
    """The caps this release indexes with, as recorded in ``hm_index_meta``."""
    return f"message:{MESSAGE_INDEX_PREFIX},tool:{TOOL_INDEX_PREFIX}"


def needs_recap(conn: psycopg.Connection[Any]) -> bool:
    """Whether `recap_long_rows` has work (cheap: one row read)."""
    return _meta(conn, INDEX_CAP_KEY) != cap_marker()


def recap_long_rows(
    conn: psycopg.Connection[Any], *, window: int = _WINDOW, max_long: int = _MAX_LONG
) -> int:
    """Recompute the index of every message longer than the cap; returns rows rewritten.

    ``conn`` must not be in a transaction. Returns 0 at once when another host holds the
    work's lock (it finishes the job) or when the cap is already recorded.
    """
    from hermes_memory_postgres._text import cjk_tsvector, words_document, words_tsvector

    cur = conn.cursor(row_factory=tuple_row)
    got = cur.execute(f"SELECT pg_try_advisory_lock(%s, {_LOCK_SCHEMA})", (_LOCK_KEY,)).fetchone()
    conn.commit()
    if not got or not got[0]:
        return 0
    rewritten = 0
    try:
        if not needs_recap(conn):
            conn.commit()
            return 0
        resume = _meta(conn, _RESUME_KEY)
        start: tuple[str, int] = ("", -(2**62))
        if resume is not None and "\t" in resume:
            owner, _, ident = resume.rpartition("\t")
            start = (owner, int(ident))
        conn.commit()
        while True:
            with conn.transaction():
                end = cur.execute(
                    "SELECT owner, id FROM hm_messages WHERE (owner, id) > (%s, %s)"
                    " ORDER BY owner, id OFFSET %s LIMIT 1",
                    (*start, window - 1),
                ).fetchone()
                upper = (end[0], end[0], end[1]) if end is not None else (None, None, None)
                rows = cur.execute(
                    "SELECT owner, id, role, content, tool_name, tool_calls,"
                    " tsvector_to_array(COALESCE(words, ''::tsvector))"
                    " FROM hm_messages WHERE (owner, id) > (%s, %s)"
                    " AND (%s::text IS NULL OR (owner, id) <= (%s::text, %s::bigint)) AND ("
                    "length(content) > CASE WHEN role = 'tool' THEN %s ELSE %s END"
                    " OR length(tool_calls) > %s) ORDER BY owner, id LIMIT %s FOR UPDATE",
                    (
                        *start,
                        *upper,
                        TOOL_INDEX_PREFIX,
                        MESSAGE_INDEX_PREFIX,
                        MESSAGE_INDEX_PREFIX,
                        max_long,
                    ),
                ).fetchall()
                deltas: dict[str, Counter[str]] = {}
                updates = []
                for owner, ident, role, content, tool_name, tool_calls, old in rows:
                    new = set(words_document(role, content, tool_name, tool_calls))
                    counts = deltas.setdefault(str(owner), Counter())
                    # the message stays: its words change, not its count
                    count_message(counts, role, new)
                    count_message(counts, role, old or (), -1)
                    updates.append(
                        (
                            words_tsvector(role, content, tool_name, tool_calls),
                            cjk_tsvector(role, content, tool_calls),
                            owner,
                            ident,
                        )
                    )
                if updates:
                    cur.executemany(
                        "UPDATE hm_messages SET words = %s::tsvector, cjk = %s::tsvector"
                        " WHERE owner = %s AND id = %s",
                        updates,
                    )
                for owner, counts in sorted(deltas.items()):
                    add_frequencies(conn, owner, counts)
                rewritten += len(updates)
                if len(rows) == max_long:  # a window full of long rows: go on after the last
                    end = (rows[-1][0], rows[-1][1])
                if end is None:
                    _set_meta(conn, INDEX_CAP_KEY, cap_marker())
                    conn.execute("DELETE FROM hm_index_meta WHERE key = %s", (_RESUME_KEY,))
                    break
                start = (str(end[0]), int(end[1]))
                _set_meta(conn, _RESUME_KEY, f"{start[0]}\t{start[1]}")
    finally:
        conn.execute(f"SELECT pg_advisory_unlock(%s, {_LOCK_SCHEMA})", (_LOCK_KEY,))
        conn.commit()
    return rewritten


def _meta(conn: psycopg.Connection[Any], key: str) -> str | None:
    row = (
        conn.cursor(row_factory=tuple_row)
        .execute("SELECT value FROM hm_index_meta WHERE key = %s", (key,))
        .fetchone()
    )
    return None if row is None else str(row[0])


def _set_meta(conn: psycopg.Connection[Any], key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO hm_index_meta(key, value) VALUES (%s, %s)"
        " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )
