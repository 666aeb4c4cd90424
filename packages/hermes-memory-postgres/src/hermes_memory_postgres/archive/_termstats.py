"""Per-owner document frequencies of the word index (table ``hm_term_df``).

Every insert of messages adds, and every delete subtracts, the number of messages holding
each lexeme (and, under the lexeme ``''``, the number of messages) in the same transaction,
so the statistics are exact and cost one statement per write. The natural-language
fallback reads them to drop over-common terms and to weight the rest (BM25's IDF) without
counting matches at query time.

Tool output is counted apart (schema 10), as it is indexed apart (`archive._filters`): the
SQLite archive counts the words of each of its two word tables on their own, and a word
that tool output repeats thousands of times is not common in the conversation. Its keys
carry `TOOL_PREFIX` (a lexeme holds no space).

Rows are upserted in lexeme order: concurrent writers of one owner lock them in the same
order and never deadlock.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import psycopg

from hermes_memory_postgres.archive._filters import NOT_TOOL, TOOL

__all__ = [
    "MESSAGES_KEY",
    "TOOL_PREFIX",
    "add_frequencies",
    "count_message",
    "frequencies",
    "subtract_deleted",
]

#: The lexeme under which the owner's message count is kept (no word is empty).
MESSAGES_KEY = ""
#: The prefix of tool output's keys (its words' and its message count's).
TOOL_PREFIX = "tool "


def count_message(
    counts: Counter[str], role: str | None, lexemes: Iterable[str], sign: int = 1
) -> None:
    """Count one message of ``role`` holding ``lexemes`` (distinct) into ``counts``, under
    its part's keys, its part's message count included; ``sign=-1`` uncounts it."""
    prefix = TOOL_PREFIX if role == "tool" else ""
    keys = [prefix + lex for lex in lexemes] if prefix else lexemes
    if sign > 0:
        counts.update(keys)  # counted in C: this runs for every message written
    else:
        counts.subtract(keys)
    counts[prefix + MESSAGES_KEY] += sign


def add_frequencies(conn: psycopg.Connection[Any], owner: str, counts: Mapping[str, int]) -> None:
    """Add ``counts`` (key → change in messages holding it: `count_message`)."""
    merged = {k: v for k, v in counts.items() if v}
    if not merged:
        return
    # One JSON object instead of two arrays: thousands of lexemes per bulk batch are
    # encoded in C (json.dumps) rather than element by element.
    conn.execute(
        "INSERT INTO hm_term_df (owner, lexeme, df)"
        " SELECT %s, key, value::bigint FROM json_each_text(%s::json) ORDER BY key"
        " ON CONFLICT (owner, lexeme) DO UPDATE SET df = hm_term_df.df + excluded.df",
        (owner, json.dumps(merged, ensure_ascii=False)),
    )


def subtract_deleted(
    conn: psycopg.Connection[Any], owner: str, rows: Iterable[Mapping[str, Any]]
) -> None:
    """Subtract messages about to be deleted (``rows`` carry their ``role`` and their
    ``lexemes`` array)."""
    counts: Counter[str] = Counter()
    for row in rows:
        count_message(counts, row["role"], row["lexemes"] or (), -1)
    add_frequencies(conn, owner, counts)


def frequencies(
    conn: psycopg.Connection[Any], owner: str, lexemes: Sequence[str], part: str
) -> tuple[dict[str, int], int]:
    """``({lexeme: messages holding it}, messages)`` in ``part`` of the word index (one of
    `archive._filters`' `NOT_TOOL`, `TOOL`, `BOTH`: both parts summed); absent: 0."""
    prefixes = {NOT_TOOL: ("",), TOOL: (TOOL_PREFIX,)}.get(part, ("", TOOL_PREFIX))
    keys = [p + lex for p in prefixes for lex in (MESSAGES_KEY, *lexemes)]
    rows = conn.execute(
        "SELECT lexeme, df FROM hm_term_df WHERE owner = %s AND lexeme = ANY(%s)",
        (owner, keys),
    ).fetchall()
    got = {str(r["lexeme"]): int(r["df"]) for r in rows}

    def total(lex: str) -> int:
        return max(0, sum(got.get(p + lex, 0) for p in prefixes))

    return {lex: total(lex) for lex in lexemes}, total(MESSAGES_KEY)
