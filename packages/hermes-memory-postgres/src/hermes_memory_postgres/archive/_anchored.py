"""The messages around an anchor (scroll window and bookends) in one statement.

``session_search`` shows every result with the messages around its hit: the anchor, up to
``window`` messages each side, and the first and last ``bookend`` conversation messages
outside that window. Read one query at a time that was five round trips per result; here
the parts are the branches of one ``UNION ALL`` (each an index range scan of
``hm_messages_session``), tagged with their part and sorted back into place in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import psycopg

from hermes_memory_postgres.archive._rows import VIEW_COLS

__all__ = ["Around", "read_around"]

_ANCHOR, _BEFORE, _AFTER, _START, _END = range(5)

# Every branch is empty unless the anchor belongs to the session (``EXISTS (SELECT 1 FROM
# a)``): a foreign anchor reads nothing more. The bookends sit outside the window: before
# its first message (the anchor when nothing precedes it), after its last.
_WINDOW = f"""
WITH a AS (
  SELECT {VIEW_COLS} FROM hm_messages
  WHERE owner = %(owner)s AND id = %(anchor)s AND session_id = %(sid)s
), b AS (
  SELECT {VIEW_COLS} FROM hm_messages
  WHERE owner = %(owner)s AND session_id = %(sid)s AND id < %(anchor)s
    AND EXISTS (SELECT 1 FROM a)
  ORDER BY id DESC LIMIT %(window)s
), f AS (
  SELECT {VIEW_COLS} FROM hm_messages
  WHERE owner = %(owner)s AND session_id = %(sid)s AND id > %(anchor)s
    AND EXISTS (SELECT 1 FROM a)
  ORDER BY id LIMIT %(window)s
)
SELECT {_ANCHOR} AS part, a.* FROM a
UNION ALL SELECT {_BEFORE}, b.* FROM b
UNION ALL SELECT {_AFTER}, f.* FROM f"""  # noqa: S608 - constants; values are parameters

_BOOKENDS = f"""
UNION ALL (
  SELECT {_START}, {VIEW_COLS} FROM hm_messages
  WHERE owner = %(owner)s AND session_id = %(sid)s
    AND id < COALESCE((SELECT MIN(id) FROM b), %(anchor)s) AND EXISTS (SELECT 1 FROM a)
    AND role = ANY(%(roles)s) AND content IS NOT NULL AND content <> ''
  ORDER BY id LIMIT %(bookend)s
) UNION ALL (
  SELECT {_END}, {VIEW_COLS} FROM hm_messages
  WHERE owner = %(owner)s AND session_id = %(sid)s
    AND id > COALESCE((SELECT MAX(id) FROM f), %(anchor)s) AND EXISTS (SELECT 1 FROM a)
    AND role = ANY(%(roles)s) AND content IS NOT NULL AND content <> ''
  ORDER BY id DESC LIMIT %(bookend)s
)"""  # noqa: S608 - constants; values are parameters


class Around(NamedTuple):
    """The parts read, each ordered as the one-query-per-part reads returned them."""

    anchor: dict[str, Any] | None
    #: Nearest first (descending ids).
    before: list[dict[str, Any]]
    after: list[dict[str, Any]]
    #: The session's first conversation messages before the window, ascending.
    start: list[dict[str, Any]]
    #: Its last ones after the window, newest first.
    end_desc: list[dict[str, Any]]


def read_around(
    conn: psycopg.Connection[Any],
    owner: str,
    session_id: str,
    anchor_id: int,
    window: int,
    bookend: int = 0,
    roles: Sequence[str] = (),
) -> Around:
    """The anchor of ``session_id``, ``window`` messages each side, and (with ``roles``
    and ``bookend`` > 0) the bookends of non-empty messages of those roles."""
    sql = _WINDOW + (_BOOKENDS if roles and bookend > 0 else "")
    params = {
        "owner": owner,
        "sid": session_id,
        "anchor": int(anchor_id),
        "window": max(0, int(window)),
        "bookend": max(0, int(bookend)),
        "roles": list(roles),
    }
    parts: list[list[dict[str, Any]]] = [[] for _ in range(5)]
    for row in conn.execute(sql, params).fetchall():
        out = dict(row)
        parts[int(out.pop("part"))].append(out)
    for part, newest_first in ((_BEFORE, True), (_AFTER, False), (_START, False), (_END, True)):
        parts[part].sort(key=lambda r: int(r["id"]), reverse=newest_first)
    anchor = parts[_ANCHOR][0] if parts[_ANCHOR] else None
    if anchor is None:
        return Around(None, [], [], [], [])
    return Around(anchor, parts[_BEFORE], parts[_AFTER], parts[_START], parts[_END])
