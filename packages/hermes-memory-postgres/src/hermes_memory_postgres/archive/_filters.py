"""The filters of a discovery query and the ``WHERE`` clause they make."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BOTH",
    "BY_ID_FROM",
    "HIT_SELECT",
    "MESSAGE_SELECT",
    "NOT_TOOL",
    "TOOL",
    "Filters",
    "with_sessions",
]

#: The columns of a hit from its message ``m``.
MESSAGE_SELECT = (
    "m.id AS id, m.session_id AS session_id, m.role AS role, m.timestamp AS timestamp,"
    " m.tool_name AS tool_name"
)
#: The columns of a hit from its session ``s``.
SESSION_SELECT = "s.source AS source, s.model AS model, s.started_at AS session_started"
#: The columns of a hit (messages ``m`` with their sessions ``s``).
HIT_SELECT = f"{MESSAGE_SELECT}, {SESSION_SELECT}"

#: Messages ``m`` with their session ``s``, for a short list of message ids: each row's
#: session looked up by primary key. With a join the planner may hash every session of
#: the owner instead (9,115 at 1M messages: 4-9 ms to join the 100 rows that about 300
#: buffer reads answer); ``OFFSET 0`` keeps the subquery from being flattened into one.
BY_ID_FROM = (
    "FROM hm_messages m CROSS JOIN LATERAL (SELECT source, model, started_at"
    " FROM hm_sessions WHERE owner = m.owner AND id = m.session_id OFFSET 0) s"
)


def with_sessions(rows: str, order: str) -> str:
    """``rows`` (a query over messages selecting `MESSAGE_SELECT`, bounded by a ``LIMIT``)
    with their sessions' columns, ordered by ``order`` (over ``w``): one primary-key lookup
    for each row returned. Its last parameter is the owner."""
    return (
        f"SELECT w.*, {SESSION_SELECT} FROM ({rows}) w CROSS JOIN LATERAL"  # noqa: S608
        " (SELECT source, model, started_at FROM hm_sessions WHERE owner = %s"
        f" AND id = w.session_id OFFSET 0) s ORDER BY {order}"
    )


#: The session of message ``m`` if its source is one of a list (the parameter).
_SESSION_OF_SOURCE = (
    "SELECT 1 FROM hm_sessions x WHERE x.owner = m.owner AND x.id = m.session_id"
    " AND x.source = ANY(%s)"
)

#: The two parts of the word index (schema 8: one partial GIN index each), as the SQLite
#: archive's two word tables: tool output is kept apart, so that a search of the
#: conversation does not fetch the tool rows its words match (the long ones, often most of
#: the matches) only to filter them out. A search of the word index names its part as one
#: of these literal conditions (`Filters.word_part`): a role filter passed as a parameter
#: would not let a generic plan prove the index's predicate.
NOT_TOOL = "m.role <> 'tool'"
TOOL = "m.role = 'tool'"
#: Both parts, one search: the planner ORs the two indexes' bitmaps.
BOTH = f"({NOT_TOOL} OR {TOOL})"


@dataclass(frozen=True)
class Filters:
    """What a search keeps: roles, sources, order, and whether archived rows count."""

    role_filter: Sequence[str] | None = None
    source_filter: Sequence[str] | None = None
    exclude_sources: Sequence[str] | None = None
    sort: str | None = None
    include_inactive: bool = False
    since: float | None = None
    until: float | None = None

    @property
    def by_time(self) -> bool:
        """Whether hits are ordered by time (``sort="newest"|"oldest"``) instead of rank."""
        return self.sort in ("newest", "oldest")

    def word_part(self) -> str:
        """The part of the word index this search covers: `NOT_TOOL`, `TOOL` or `BOTH`.

        Both parts are searched together, one window of the newest matches over both
        (SQLite ranks a window of each of its two tables): searched apart, each part is
        sparser among the newest ids, its id ranges widen, and each range computes its
        part's bitmap again (a two-word query at a million messages: 11 -> 43 ms).
        """
        roles = self.role_filter
        talk = not roles or any(r != "tool" for r in roles)
        tool = not roles or "tool" in roles
        return BOTH if talk and tool else TOOL if tool else NOT_TOOL

    def where(self, owner: str) -> tuple[str, list[Any]]:
        """The ``WHERE`` condition over messages ``m`` and its parameters.

        A session's source is tested in a subquery, not through a join: a search then
        looks its sessions up only for the rows it returns, and the sessions a filter
        names are found by their index (``hm_sessions_source``). Joined, the planner
        hashed every session of the owner for each windowed search (9,115 at a million
        messages: 4-5 ms of a mid-frequency question's 10-16).
        """
        where = ["m.owner = %s"]
        params: list[Any] = [owner]
        if self.role_filter:
            where.append("m.role = ANY(%s)")
            params.append(list(self.role_filter))
        if self.source_filter:
            where.append(f"EXISTS ({_SESSION_OF_SOURCE})")
            params.append(list(self.source_filter))
        if self.exclude_sources:
            where.append(f"NOT EXISTS ({_SESSION_OF_SOURCE})")
            params.append(list(self.exclude_sources))
        if self.since is not None:
            where.append("m.timestamp >= %s")
            params.append(float(self.since))
        if self.until is not None:
            where.append("m.timestamp <= %s")
            params.append(float(self.until))
        if not self.include_inactive:
            where.append("(m.active = 1 OR m.compacted = 1)")
        return " AND ".join(where), params
