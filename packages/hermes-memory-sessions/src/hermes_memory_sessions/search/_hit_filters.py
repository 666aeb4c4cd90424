"""The filters and columns of a search hit, shared by the lexical and the dense search.

Both sides answer with the same row shape and honour the same filters, so that hybrid
recall can fuse their rankings row by row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["HIT_SELECT", "hit_filters"]

#: The columns of a hit row, over ``messages m`` joined with ``sessions s``.
HIT_SELECT = (
    "SELECT m.id AS id, m.session_id AS session_id, m.role AS role, m.timestamp AS timestamp,"
    " m.tool_name AS tool_name, s.source AS source, s.model AS model,"
    " s.started_at AS session_started"
)


def hit_filters(
    *,
    role_filter: Sequence[str] | None,
    source_filter: Sequence[str] | None,
    exclude_sources: Sequence[str] | None,
    include_inactive: bool,
    since: float | None = None,
    until: float | None = None,
) -> tuple[list[str], list[Any]]:
    """SQL conditions (to be joined with ``AND``) and their parameters for the filters.

    Inactive messages are left out unless ``include_inactive``; compacted ones are kept
    (they are what compression summarised away, still part of the history).
    ``since``/``until`` (epoch seconds, inclusive) bound the message's ``timestamp``.
    """
    where: list[str] = []
    params: list[Any] = []
    if role_filter:
        where.append(f"m.role IN ({','.join('?' * len(role_filter))})")
        params.extend(role_filter)
    if source_filter:
        where.append(f"s.source IN ({','.join('?' * len(source_filter))})")
        params.extend(source_filter)
    if exclude_sources:
        where.append(f"s.source NOT IN ({','.join('?' * len(exclude_sources))})")
        params.extend(exclude_sources)
    if since is not None:
        where.append("m.timestamp >= ?")
        params.append(float(since))
    if until is not None:
        where.append("m.timestamp <= ?")
        params.append(float(until))
    if not include_inactive:
        where.append("(m.active = 1 OR m.compacted = 1)")
    return where, params
