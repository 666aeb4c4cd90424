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
Used for the word index's AND queries; the natural-language fallback (an OR of rarer
words, a window of 2,000) rarely fills a range and ran slower with it, as did the CJK
index (fewer matches, its own partial index): both search the whole archive at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg

__all__ = ["RECENT_IDS", "SPAN_MARGIN", "newest_matches"]

#: Ranges of the newest message ids searched in turn, before the whole archive.
RECENT_IDS: tuple[int, ...] = (25_000, 200_000)
#: When the first range held some matches but fewer than the window, the next range is
#: sized from their density (the window's share of it, times this margin) when that is
#: narrower than the next of `RECENT_IDS`: building the primary-key bitmap of a range
#: costs about its size (200,000 ids: 15 ms of a 30 ms query at 1M messages), and "docker
#: deployment" (159 matches in the newest 25,000) needs about 31,000, not 200,000.
SPAN_MARGIN = 1.5

_Row = TypeVar("_Row")


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
