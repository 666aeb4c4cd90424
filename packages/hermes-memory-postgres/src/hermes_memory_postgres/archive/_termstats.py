"""Per-owner document frequencies of the word index (table ``hm_term_df``).

Every insert of messages adds, and every delete subtracts, the number of messages holding
each lexeme (and, under the lexeme ``''``, the number of messages) in the same transaction,
so the statistics are exact and cost one statement per write. The natural-language
fallback reads them to drop over-common terms and to weight the rest (BM25's IDF) without
counting matches at query time.

Rows are upserted in lexeme order: concurrent writers of one owner lock them in the same
order and never deadlock.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import psycopg

__all__ = ["MESSAGES_KEY", "add_frequencies", "frequencies", "subtract_deleted"]

#: The lexeme under which the owner's message count is kept (no word is empty).
MESSAGES_KEY = ""


def add_frequencies(
    conn: psycopg.Connection[Any], owner: str, counts: Mapping[str, int], messages: int
) -> None:
    """Add ``counts`` (lexeme → messages holding it) and ``messages`` to the statistics."""
    merged = {k: v for k, v in counts.items() if v}
    merged[MESSAGES_KEY] = counts.get(MESSAGES_KEY, 0) + messages
    if not merged[MESSAGES_KEY]:
        del merged[MESSAGES_KEY]
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
    """Subtract messages about to be deleted (``rows`` carry their ``lexemes`` array)."""
    counts: dict[str, int] = {}
    n = 0
    for row in rows:
        n += 1
        for lex in row["lexemes"] or ():
            counts[lex] = counts.get(lex, 0) - 1
    add_frequencies(conn, owner, counts, -n)


def frequencies(
    conn: psycopg.Connection[Any], owner: str, lexemes: Sequence[str]
) -> tuple[dict[str, int], int]:
    """``({lexeme: messages holding it}, messages of the owner)`` (absent lexemes: 0)."""
    rows = conn.execute(
        "SELECT lexeme, df FROM hm_term_df WHERE owner = %s AND lexeme = ANY(%s)",
        (owner, [MESSAGES_KEY, *lexemes]),
    ).fetchall()
    got = {str(r["lexeme"]): int(r["df"]) for r in rows}
    total = got.pop(MESSAGES_KEY, 0)
    return {lex: max(0, got.get(lex, 0)) for lex in lexemes}, max(0, total)
