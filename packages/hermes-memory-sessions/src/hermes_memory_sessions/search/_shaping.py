"""Pure result shaping shared by every archive backend (SQLite and PostgreSQL).

Backends differ in how they find rows; what they do with the rows afterwards is one policy,
kept here so both call the same function: decoding stored tool calls, merging the answers of
several indexes, de-duplicating hits, neighbour smoothing of the natural-language fallback,
the context of a hit, the anchored (scroll) view and ``LIKE`` escaping. Nothing here touches
a database.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hermes_memory_sessions.search._cjk import split_cjk
from hermes_memory_sessions.search._query import Term

__all__ = [
    "CONTEXT_CHARS",
    "SMOOTHING",
    "SMOOTH_SEEDS",
    "anchored_result",
    "context_rows",
    "decode_row",
    "dedupe_hits",
    "escape_like",
    "merge_found",
    "neighbour_graph",
    "next_numbered_title",
    "or_items",
    "single_message",
    "smooth_ranked",
    "smoothing_extra",
    "terms_have_cjk",
    "title_base",
]

#: Weight of the best adjacent message's score in a natural-language hit's score.
SMOOTHING = 0.5
#: Natural-language fallback: the adjacent turns of this many best hits become candidates.
SMOOTH_SEEDS = 25
#: Characters of a neighbouring message shown as a hit's ``context``.
CONTEXT_CHARS = 200
#: A numbered continuation title: ``"<base> #<n>"``.
NUMBERED_TITLE = re.compile(r"^(.*?) #(\d+)$")


def decode_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A stored message row as a dict, its ``tool_calls`` JSON text decoded (kept as text
    when it is not valid JSON)."""
    d = dict(row)
    tc = d.get("tool_calls")
    if isinstance(tc, str) and tc:
        try:
            d["tool_calls"] = json.loads(tc)
        except ValueError:
            d["tool_calls"] = tc
    return d


def escape_like(text: str) -> str:
    """``text`` as a literal ``LIKE`` prefix (backslash is the escape character)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


#: A ``LIKE`` prefix longer than this matches no id or title (SQLite refuses patterns over
#: 50,000 bytes with "LIKE or GLOB pattern too complex"; no id or title is this long).
MAX_LIKE_PREFIX_CHARS = 4096


def like_prefix(text: str) -> str | None:
    """The ``LIKE`` pattern of the literal prefix ``text`` (``escape_like(text) + "%"``), or
    ``None`` when ``text`` is too long to name anything (the caller then finds nothing)."""
    if len(text) > MAX_LIKE_PREFIX_CHARS:
        return None
    return escape_like(text) + "%"


def or_items(terms: Sequence[Term]) -> list[Term | str]:
    """The item list ``t1 OR t2 OR ...`` of the natural-language fallback."""
    items: list[Term | str] = []
    for t in terms:
        if items:
            items.append("OR")
        items.append(t)
    return items


def terms_have_cjk(terms: Iterable[Term]) -> bool:
    """Whether any of ``terms`` holds Chinese, Japanese or Korean text."""
    return any(is_cjk for t in terms for is_cjk, _ in split_cjk(t.text))


def merge_found(
    found: list[list[dict[str, Any]]], sort: str | None, *, lower_is_better: bool
) -> list[dict[str, Any]]:
    """The rows of several indexes in one order: by time for ``sort="newest"|"oldest"``,
    else by ``rank`` (FTS5's BM25 is lower-is-better, ``ts_rank`` higher-is-better)."""
    merged = [row for rows in found for row in rows]
    if len(found) > 1:
        if sort in ("newest", "oldest"):
            merged.sort(key=lambda r: (r["timestamp"], r["id"]), reverse=sort == "newest")
        elif lower_is_better:
            merged.sort(key=lambda r: (r.get("rank") or 0.0, r["id"]))
        else:
            merged.sort(key=lambda r: (-(r.get("rank") or 0.0), r["id"]))
    return merged


def dedupe_hits(
    rows: Iterable[dict[str, Any]], offset: int, limit: int
) -> tuple[list[dict[str, Any]], dict[int, tuple[str, str]]]:
    """The page ``[offset, offset + limit)`` of ``rows`` with each message once (its first,
    best-ranked occurrence), and ``{id: _src}`` (index, expression) for snippets.

    The private ``rank`` and ``_src`` keys are removed from the returned rows.
    """
    sources: dict[int, tuple[str, str]] = {}
    merged: list[dict[str, Any]] = []
    for row in rows:
        if row["id"] not in sources:
            sources[row["id"]] = row.pop("_src")
            merged.append(row)
    page = merged[offset : offset + limit]
    for row in page:
        row.pop("rank", None)
        row.pop("_src", None)
    return page, sources


def neighbour_graph(adjacent: Mapping[int, Iterable[int]]) -> dict[int, set[int]]:
    """Symmetric adjacency from ``{id: (previous id, next id)}`` (m is the next message of
    its previous one, so added turns need no lookup of their own)."""
    near: dict[int, set[int]] = {}
    for mid, around in adjacent.items():
        for n in around:
            near.setdefault(mid, set()).add(n)
            near.setdefault(n, set()).add(mid)
    return near


def smoothing_extra(
    ranked_ids: Sequence[int], near: Mapping[int, set[int]], present: Iterable[int]
) -> list[int]:
    """Adjacent turns of the `SMOOTH_SEEDS` best ids that are not candidates yet."""
    have = set(present)
    seeds = ranked_ids[:SMOOTH_SEEDS]
    return sorted({n for mid in seeds for n in near.get(mid, ()) if n not in have})


def smooth_ranked(
    score: Mapping[int, float], near: Mapping[int, set[int]], ids: Iterable[int]
) -> list[tuple[int, float]]:
    """``(id, smoothed)`` best first: score(m) + `SMOOTHING` × max score(adjacent of m).

    ``score`` is higher-is-better; ids without a score count 0.
    """
    smoothed = {
        mid: score.get(mid, 0.0)
        + SMOOTHING * max((score.get(n, 0.0) for n in near.get(mid, ())), default=0.0)
        for mid in ids
    }
    return sorted(smoothed.items(), key=lambda kv: (-kv[1], kv[0]))


def context_rows(*rows: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """A hit's ``context``: the given neighbouring rows as ``{role, content≤200}``."""
    return [{"role": r["role"], "content": (r["content"] or "")[:CONTEXT_CHARS]} for r in rows if r]


def anchored_result(
    base: Mapping[str, Any],
    anchor_id: int,
    keep_roles: Sequence[str],
    start: Iterable[Mapping[str, Any]],
    end_desc: Iterable[Mapping[str, Any]],
) -> dict[str, Any]:
    """The anchored view from a scroll window: the window filtered to ``keep_roles`` (the
    anchor always kept), its unfiltered counts, and the bookends (``end_desc`` newest
    first, as queried)."""
    kept = [m for m in base["window"] if m["id"] == anchor_id or m["role"] in keep_roles]
    return {
        "window": kept,
        "messages_before": base["messages_before"],
        "messages_after": base["messages_after"],
        "bookend_start": [decode_row(r) for r in start],
        "bookend_end": [decode_row(r) for r in reversed(list(end_desc))],
    }


def single_message(
    role: str,
    content: Any,
    *,
    tool_name: str | None = None,
    tool_calls: Any = None,
    tool_call_id: str | None = None,
    timestamp: float | None = None,
) -> dict[str, Any]:
    """The message mapping ``append_messages`` takes, from ``append_message``'s arguments."""
    return {
        "role": role,
        "content": content,
        "tool_name": tool_name,
        "tool_calls": tool_calls,
        "tool_call_id": tool_call_id,
        "timestamp": timestamp,
    }


def title_base(title: str) -> str:
    """The lineage base of a title: ``"x #3"`` → ``"x"``, ``"x"`` → ``"x"``."""
    match = NUMBERED_TITLE.match(title)
    return match.group(1) if match else title


def next_numbered_title(base: str, taken: Iterable[str]) -> str:
    """The next title of a lineage given the titles in use that equal ``base`` or start
    with ``"<base> #"``: ``base`` when none is, else ``"<base> #<highest + 1>"`` (the
    unnumbered title counts as #1)."""
    numbers = [1]
    any_taken = False
    for existing in taken:
        any_taken = True
        numbered = NUMBERED_TITLE.match(existing)
        if numbered and numbered.group(1) == base:
            numbers.append(int(numbered.group(2)))
    return f"{base} #{max(numbers) + 1}" if any_taken else base
