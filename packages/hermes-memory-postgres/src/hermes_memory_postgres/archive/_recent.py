"""The newest matches of a text query, looked for among the newest messages first.

Discovery ranks the newest `RANK_WINDOW` (`NATURAL_WINDOW` for the fallback) matches of a
``tsquery``. A GIN index gives the matches in no particular order, so PostgreSQL fetched
and sorted *every* matching row to find the newest: about 19,000 heap rows (9,400 pages)
for "docker deployment" in a million messages, 150-260 ms, and seconds for the fallback's
OR of common words. Bounding the ids first (``m.id > newest - RECENT_IDS``) lets the planner
intersect the GIN bitmap with a primary-key range (``BitmapAnd``) and fetch only the
matches among the newest messages. When that range holds at least the window's matches
they *are* the newest matches of the whole archive (every other match is older), so the
answer is the same; otherwise a wider range (first one sized from the matches found), and
finally the whole archive, is searched.
Used for the word index's AND queries. The natural-language fallback (an OR of rarer
words, a window of 2,000) searches the whole archive at once: a range sized from its term
statistics halved one question's time and doubled another's, because the GIN bitmap of
several common words OR-ed (150,000 entries: 36 ms at a million messages) costs more than
walking the newest ids. So does the CJK index (fewer matches, its own partial index).
All three rank in the server with `ranked_window`: only the best rows cross the wire.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import psycopg

from hermes_memory_postgres.archive._filters import with_sessions

__all__ = ["RECENT_IDS", "SPAN_MARGIN", "RangeQuery", "newest_matches", "ranked_window"]

#: Ranges of the newest message ids searched in turn, before the whole archive.
RECENT_IDS: tuple[int, ...] = (25_000, 200_000)
#: When the first range held some matches but fewer than the window, the next range is
#: sized from their density (the window's share of it, times this margin) when that is
#: narrower than the next of `RECENT_IDS`: building the primary-key bitmap of a range
#: costs about its size (200,000 ids: 15 ms of a 30 ms query at 1M messages), and "docker
#: deployment" (159 matches in the newest 25,000) needs about 31,000, not 200,000.
SPAN_MARGIN = 1.5

_Row = TypeVar("_Row")

#: A windowed query: ``(extra_condition, extra_params) -> (rows, matches in the window)``.
RangeQuery = Callable[[str, list[Any]], tuple[list[dict[str, Any]], int]]


def ranked_window(
    conn: psycopg.Connection[Any],
    owner: str,
    head: str,
    params: Sequence[Any],
    window: int,
    pool: int,
) -> RangeQuery:
    """The query ranking the newest ``window`` rows of ``head`` (``SELECT <message
    columns>, <score> AS rank FROM hm_messages m WHERE …``) and returning the best ``pool``
    of them with their sessions' columns, ordered by rank then id, with how many rows the
    window held (for `newest_matches`). Ranked in the server: only ``pool`` rows cross the
    wire, not the window, and only their sessions are looked up."""

    def run(extra: str, extra_params: list[Any]) -> tuple[list[dict[str, Any]], int]:
        best = (
            f"SELECT *, COUNT(*) OVER () AS _matched FROM ({head}{extra}"  # noqa: S608
            " ORDER BY m.id DESC LIMIT %s) ranked ORDER BY rank DESC, id LIMIT %s"
        )
        rows = conn.execute(
            with_sessions(best, "w.rank DESC, w.id"),
            [*params, *extra_params, window, pool, owner],
            prepare=False,  # a text search: never a generic plan (see archive/_search.py)
        ).fetchall()
        out = [dict(r) for r in rows]
        matched = int(out[0]["_matched"]) if out else 0
        for row in out:
            del row["_matched"]
        return out, matched

    return run


def newest_matches(
    conn: psycopg.Connection[Any],
    owner: str,
    query: Callable[[str, list[Any]], tuple[list[_Row], int]],
    window: int,
) -> list[_Row]:
    """``query(extra_condition, extra_params)``'s rows, first with the condition bounding
    ``m.id`` to the owner's newest ids (each range of `RECENT_IDS` in turn, with a range
    sized from the first one's matches between them: `SPAN_MARGIN`), and without it when
    none held ``window`` matches. ``query`` returns its rows and how many matches its
    windowed (``ORDER BY m.id DESC LIMIT window``) part held."""
    row = conn.execute(
        "SELECT MAX(id) AS top FROM hm_messages WHERE owner = %s", (owner,)
    ).fetchone()
    top = row["top"] if isinstance(row, dict) else (row[0] if row else None)
    spans = list(RECENT_IDS)
    tried = 0
    while tried < len(spans):
        span = spans[tried]
        if top is None or int(top) <= 2 * span:
            break  # the range would be most of the archive: search all of it
        rows, matched = query(" AND m.id > %s", [int(top) - span])
        if matched >= window:
            return rows
        tried += 1
        if tried == 1 and matched > 0:
            guess = math.ceil(span * window / matched * SPAN_MARGIN)
            if guess < (spans[1] if len(spans) > 1 else int(top)):
                spans.insert(1, guess)
    return query("", [])[0]
