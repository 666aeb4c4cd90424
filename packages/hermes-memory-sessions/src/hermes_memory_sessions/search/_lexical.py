"""Read side of the archive: full-text search routing, snippets and anchored views.

Routing of `search_messages`:

* a query without CJK runs against the word index ``hm_fts_words`` (BM25 ``rank``); if that
  finds nothing, the same terms are tried on the CJK index, where Latin words glued to CJK
  text (``修改youer服务端``) are separate tokens;
* a query with CJK runs against ``hm_fts_cjk``: a run of 1 or 2 characters is a unigram or
  bigram token, a longer run the phrase of its consecutive bigrams (an exact substring
  match); Latin terms of a mixed query match the Latin words of CJK messages;
* ``any_terms=True`` ORs the content terms (function words dropped) instead of ANDing all
  terms, with neighbour smoothing: the natural-language fallback of `session_search`
  (see `natural_rows`).

Cost is bounded for common words: BM25 ranks at most the `RANK_WINDOW` newest matching
messages (all of them when fewer match), and only the top ``scan`` hits by rank are joined
to ``messages`` (both widened geometrically when filters remove too many). A query that
matches 50,000 messages therefore costs about as much as one that matches 1,000, and the
relevance order is "best among the most recent matches" — the natural reading for a
conversation archive. The any-term fallback drops terms matching `COMMON_TERM_CAP` messages
or more (when rarer ones are left) and ranks the newest `NATURAL_WINDOW` matches of the rest,
so a rare word reaches old sessions (when every term is common, the newest `RANK_WINDOW`).
``sort="newest"|"oldest"`` walks matches in id order.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from hermes_memory_sessions.search._cjk import cjk_match_expr, split_cjk
from hermes_memory_sessions.search._hit_filters import HIT_SELECT, hit_filters
from hermes_memory_sessions.search._query import ParsedQuery, Term, latin_only, parse_query
from hermes_memory_sessions.search._query import any_terms as content_terms
from hermes_memory_sessions.search._shaping import (
    anchored_result,
    context_rows,
    dedupe_hits,
    merge_found,
    neighbour_graph,
    or_items,
    smooth_ranked,
    smoothing_extra,
    terms_have_cjk,
)
from hermes_memory_sessions.search._shaping import decode_row as _decode
from hermes_memory_sessions.storage._schema import ArchiveBusy

__all__ = [
    "COMMON_TERM_CAP",
    "NATURAL_POOL",
    "NATURAL_WINDOW",
    "RANK_WINDOW",
    "SNIPPET_FTS_MAX_CHARS",
    "Hits",
    "adjacent_ids",
    "anchored_view",
    "build_expression",
    "find_hits",
    "messages_around",
    "natural_rows",
    "python_snippet",
    "search_items",
    "search_messages",
    "shape_message",
]

_WORDS = "hm_fts_words"
#: The word index stemmed (schema 6): the natural-language fallback of a folded query.
_STEMS = "hm_fts_stems"
_TOOLS = "hm_fts_tools"
_CJK = "hm_fts_cjk"
_FIRST_SCAN = 40
#: BM25 ranks at most this many of the newest matches (widened when filters leave too few);
#: a query matching fewer messages is ranked over all of them.
RANK_WINDOW = 200
_SNIPPET_BEFORE = 40
_SNIPPET_SPAN = 160


def _cjk_term(term: Term) -> str:
    """One term as an expression over the CJK index (parenthesised when it has parts)."""
    parts: list[str] = []
    segments = split_cjk(term.text)
    for idx, (is_cjk, seg) in enumerate(segments):
        if is_cjk:
            parts.append(cjk_match_expr(seg))
            continue
        words = re.findall(r"\w+", seg)
        for w_idx, word in enumerate(words):
            last = idx == len(segments) - 1 and w_idx == len(words) - 1
            parts.append(Term(word, prefix=term.prefix and last).fts())
    if not parts:
        return ""
    return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"


def _items(parsed: ParsedQuery, any_term: bool) -> list[Term | str]:
    if not any_term:
        return list(parsed.items)
    return or_items(content_terms(parsed))


def _render(items: list[Term | str], *, cjk: bool) -> str:
    out: list[str] = []
    for item in items:
        if isinstance(item, str):
            if out and out[-1] not in ("AND", "OR", "NOT"):
                out.append(item)
            continue
        expr = _cjk_term(item) if cjk else item.fts()
        if expr:
            if out and out[-1] not in ("AND", "OR", "NOT"):
                out.append("AND")  # explicit: FTS5 has no implicit AND after a group
            out.append(expr)
    while out and out[-1] in ("AND", "OR", "NOT"):
        out.pop()
    return " ".join(out)


def build_expression(parsed: ParsedQuery, *, cjk: bool, any_term: bool) -> str:
    """The FTS5 MATCH expression for ``parsed`` on the CJK or the word index."""
    return _render(_items(parsed, any_term), cjk=cjk)


#: Messages longer than this get `python_snippet` rather than FTS5's ``snippet()``.
SNIPPET_FTS_MAX_CHARS = 16_384


def _long_message(conn: sqlite3.Connection, message_id: int) -> bool:
    row = conn.execute(
        "SELECT length(content) > ? FROM messages WHERE id = ?", (SNIPPET_FTS_MAX_CHARS, message_id)
    ).fetchone()
    return bool(row and row[0])


def python_snippet(content: str | None, needles: Sequence[str]) -> str:
    """A ``>>>term<<<`` snippet around the first occurrence of any needle (CJK hits).

    Needles are folded query words: they are found in the folded text (so a Traditional or
    full-width spelling is marked as well as one typed like the query) when folding keeps
    the text's length, otherwise as typed (case-insensitive)."""
    if not content:
        return ""
    spans = _folded_spans(content, needles) if needles else []
    if not spans and needles:
        pattern = re.compile("|".join(re.escape(n) for n in needles if n), re.IGNORECASE)
        spans = [(m.start(), m.end()) for m in pattern.finditer(content) if m.end() > m.start()]
    pos = spans[0][0] if spans else 0
    start = max(0, pos - _SNIPPET_BEFORE)
    end = min(len(content), start + _SNIPPET_SPAN)
    out, last = [], start
    for a, b in spans:
        if a < last or b > end:
            continue
        out += [content[last:a], ">>>", content[a:b], "<<<"]
        last = b
    window = " ".join(("".join(out) + content[last:end]).split())
    return ("..." if start > 0 else "") + window + ("..." if end < len(content) else "")


def _folded_spans(content: str, needles: Sequence[str]) -> list[tuple[int, int]]:
    """Where the (folded) needles occur in ``content`` written in another script or width
    (Traditional text, full-width letters), as ``(start, end)`` in ``content``, in order.

    Folding maps each character to one character for these texts; when it does not
    (a phrase of another length), nothing is found and the snippet is unmarked."""
    from hermes_memory_sessions.search._cjk_text import fold

    folded = fold(content).casefold()
    if len(folded) != len(content):
        return []
    spans = []
    for n in needles:
        key = n.casefold()
        start = folded.find(key)
        while key and start >= 0:
            spans.append((start, start + len(key)))
            start = folded.find(key, start + len(key))
    return sorted(spans, key=lambda span: (span[0], -span[1]))


@dataclass
class Hits:
    """Result of `find_hits`: the rows plus what is needed to make snippets later."""

    rows: list[dict[str, Any]]
    sources: dict[int, tuple[str, str]]  # message id -> (index table, MATCH expression)
    needles: list[str]

    def snippet(self, conn: sqlite3.Connection, message_id: int) -> str:
        """The ``>>>term<<<`` snippet of one of these hits."""
        table, expr = self.sources.get(message_id, (_CJK, ""))
        return snippet_for(conn, table, expr, message_id, self.needles)


def search_items(
    conn: sqlite3.Connection,
    items: list[Term | str],
    has_cjk: bool,
    want: int,
    filters: dict[str, Any],
    natural: Sequence[Term] = (),
    words: str = _WORDS,
) -> list[dict[str, Any]]:
    """Rows (each with ``rank`` and ``_src``) matching one boolean item list, best first.

    ``natural`` (the content terms of an any-term fallback) switches `_run` to the
    natural-language ranking and lets the word indexes drop common terms (`natural_rows`);
    ``words`` is the word index searched (the stemmed one for a folded fallback).
    """
    role_filter = filters.get("role_filter")
    sort = filters.get("sort")
    word_tables = []
    if not role_filter or any(r != "tool" for r in role_filter):
        word_tables.append(words)
    if not role_filter or "tool" in role_filter:
        word_tables.append(_TOOLS)
    if has_cjk:
        # CJK messages answer from the CJK index (their Latin words are indexed there too);
        # messages without CJK can only match through the query's Latin terms.
        latin = _render(latin_only(items), cjk=False)
        plans = [(_CJK, _render(items, cjk=True))] + [(t, latin) for t in word_tables]
        fallback: list[tuple[str, str]] = []
    else:
        plans = [(t, _render(items, cjk=False)) for t in word_tables]
        # Latin words glued to CJK text only exist in the CJK index.
        fallback = [(_CJK, _render(items, cjk=True))]
    found: list[list[dict[str, Any]]] = []
    for group in (plans, fallback):
        for table, expr in group:
            if not expr:
                continue
            try:
                window = NATURAL_WINDOW
                if natural and table != _CJK and not has_cjk:
                    rare = _prune_common(conn, table, natural)
                    if rare:
                        expr = " OR ".join(t.fts() for t in rare)
                    else:
                        window = RANK_WINDOW  # every term common: nothing old to reach
                rows = _run(
                    conn,
                    table,
                    expr,
                    limit=want,
                    offset=0,
                    natural=bool(natural),
                    window=window,
                    **filters,
                )
            except ArchiveBusy:
                raise
            except sqlite3.OperationalError:
                rows = []
            for row in rows:
                row["_src"] = (table, expr)
            if rows:
                found.append(rows)
        if found:
            break
    return merge_found(found, sort, lower_is_better=True)


#: Any-term fallback: a content term matching at least this many messages is too common to
#: rank on (its BM25 IDF is close to 0); it is dropped while rarer terms are left.
COMMON_TERM_CAP = 5000
#: Any-term fallback: BM25 ranks at most this many of the newest matches of the remaining
#: terms (all of them when fewer match): rare terms reach old sessions, and the cost stays
#: bounded when several mid-frequency terms match many messages together. When every term
#: is common no rare one is left to reach old sessions, and the fallback ranks the newest
#: `RANK_WINDOW` matches, as any query does: the newest 2,000 matches of common words cost
#: a walk over tens of thousands of messages (on PostgreSQL, half of a question's time at
#: a million messages: docs/benchmarks.md).
NATURAL_WINDOW = 2000
#: Any-term fallback: how many BM25-ranked messages are re-scored by smoothing.
NATURAL_POOL = 50


def natural_rows(
    conn: sqlite3.Connection, parsed: ParsedQuery, want: int, filters: dict[str, Any]
) -> list[dict[str, Any]]:
    """Natural-language fallback: any-term BM25 with neighbour smoothing, best first.

    The content terms (stop words dropped) are OR-ed. On the word indexes a term matching
    `COMMON_TERM_CAP` messages or more is dropped when rarer terms are left, and the newest
    `NATURAL_WINDOW` matches of the rare ones are ranked; when every term is common, the
    newest `RANK_WINDOW` matches of all of them. A message then also scores `SMOOTHING`
    times the best BM25 of its adjacent messages in the same session, and the adjacent
    turns of the best hits become candidates: a chat answer often shares no word with the
    question while the turn before or after it does. A bounded number of SQL statements
    whatever the question's length.
    """
    terms = content_terms(parsed)
    if not terms:
        return []
    words = _WORDS
    if parsed.fold and not terms_have_cjk(terms) and _has_stems(conn):
        # Folded (hybrid discovery): the stemmed index, each word as written, instead of
        # the OR of its forms on the word index; an archive without it keeps the forms.
        terms = content_terms(replace(parsed, fold=False))
        words = _STEMS
    return search_items(
        conn, or_items(terms), terms_have_cjk(terms), want, filters, natural=terms, words=words
    )


def _has_stems(conn: sqlite3.Connection) -> bool:
    """Whether the archive has the stemmed word index (schema 6; a read-only open of an
    older file has not)."""
    return (
        conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (_STEMS,)
        ).fetchone()
        is not None
    )


def _prune_common(conn: sqlite3.Connection, table: str, terms: Sequence[Term]) -> list[Term]:
    """The terms of ``terms`` matching at least one and fewer than `COMMON_TERM_CAP`
    messages of ``table``.

    One query when the terms together match fewer (the usual case in a small archive). A
    term no message holds is not a rare term: kept, it would stand in for the common ones
    and the fallback would find nothing ("docker deployment last week" in an archive that
    never says "week").
    """
    expr = " OR ".join(t.fts() for t in terms)
    if _count(conn, table, expr, COMMON_TERM_CAP) < COMMON_TERM_CAP:
        return list(terms)
    return [t for t in terms if 0 < _count(conn, table, t.fts(), COMMON_TERM_CAP) < COMMON_TERM_CAP]


def find_hits(
    conn: sqlite3.Connection,
    query: str | ParsedQuery,
    *,
    role_filter: Sequence[str] | None = None,
    source_filter: Sequence[str] | None = None,
    exclude_sources: Sequence[str] | None = None,
    limit: int = 20,
    offset: int = 0,
    sort: str | None = None,
    include_inactive: bool = False,
    any_terms: bool = False,
    since: float | None = None,
    until: float | None = None,
) -> Hits | None:
    """Matching rows without snippets/context (None when nothing matches or no terms).

    ``query`` is a string or a `ParsedQuery` parsed once by the caller; ``any_terms=True``
    is the natural-language fallback (see `natural_rows`); ``since`` / ``until`` (epoch
    seconds, inclusive) bound the message timestamps.
    """
    parsed = parse_query(query)
    if not parsed.terms:
        return None
    limit = max(1, int(limit))
    offset = max(0, int(offset))
    filters: dict[str, Any] = {
        "role_filter": role_filter,
        "source_filter": source_filter,
        "exclude_sources": exclude_sources,
        "sort": sort,
        "include_inactive": include_inactive,
        "since": since,
        "until": until,
    }
    if any_terms:
        rows = natural_rows(conn, parsed, limit + offset, filters)
    else:
        rows = search_items(conn, list(parsed.items), parsed.has_cjk, limit + offset, filters)
    if not rows:
        return None
    merged, sources = dedupe_hits(rows, offset, limit)
    return Hits(merged, sources, list(parsed.needles))


def search_messages(
    conn: sqlite3.Connection,
    query: str | ParsedQuery,
    *,
    with_context: bool = True,
    with_snippet: bool = True,
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """Search message text; never raises for a malformed query (returns ``[]``).

    Keyword arguments: ``role_filter, source_filter, exclude_sources, limit=20, offset=0,
    sort=None ("newest"/"oldest" order by timestamp instead of BM25 rank),
    include_inactive=False, any_terms=False`` (OR of content terms: the natural-language
    fallback), ``with_context``, ``with_snippet``.

    Rows: ``id, session_id, role, snippet, timestamp, tool_name, source, model,
    session_started`` and, with ``with_context``, ``context`` (the neighbouring messages of
    the same session as ``{role, content≤200}``).
    """
    hits = find_hits(conn, query, **kwargs)
    if hits is None:
        return []
    for row in hits.rows:
        row["snippet"] = hits.snippet(conn, row["id"]) if with_snippet else ""
        if with_context:
            row["context"] = _context(conn, row["session_id"], row["id"], row["timestamp"])
    return hits.rows


def snippet_for(
    conn: sqlite3.Connection, table: str, expr: str, message_id: int, needles: Sequence[str]
) -> str:
    """The ``>>>term<<<`` snippet of one hit (FTS5 ``snippet()`` on the word index).

    FTS5's ``snippet()`` re-reads and scores the whole message, superlinearly (a 120 KB
    pasted log took seconds per search): a message longer than `SNIPPET_FTS_MAX_CHARS` gets
    the linear snippet around the first needle instead.
    """
    if table in (_WORDS, _STEMS, _TOOLS) and not _long_message(conn, message_id):
        try:
            row = conn.execute(
                f"SELECT snippet({table}, -1, '>>>', '<<<', '...', 40) FROM {table} "  # noqa: S608
                f"WHERE {table} MATCH ? AND rowid = ?",
                (expr, message_id),
            ).fetchone()
        except ArchiveBusy:
            raise
        except sqlite3.OperationalError:
            row = None
        if row and row[0]:
            return str(row[0])
        # Not a match itself (a neighbour the fallback's smoothing ranked): the start of
        # its text, as PostgreSQL shows it, never an empty snippet.
    content = conn.execute("SELECT content FROM messages WHERE id = ?", (message_id,)).fetchone()
    return python_snippet(content[0] if content else None, needles)


def _run(
    conn: sqlite3.Connection,
    table: str,
    expr: str,
    *,
    role_filter: Sequence[str] | None,
    source_filter: Sequence[str] | None,
    exclude_sources: Sequence[str] | None,
    limit: int,
    offset: int,
    sort: str | None,
    include_inactive: bool,
    natural: bool = False,
    window: int = NATURAL_WINDOW,
    since: float | None = None,
    until: float | None = None,
) -> list[dict[str, Any]]:
    """Rows matching ``expr`` on ``table`` that pass the filters, in the requested order.

    ``natural`` ranks a larger pool among the newest ``window`` matches and smooths it
    (`_smooth`).
    """
    where, params = hit_filters(
        role_filter=role_filter,
        source_filter=source_filter,
        exclude_sources=exclude_sources,
        include_inactive=include_inactive,
        since=since,
        until=until,
    )
    cond = (" WHERE " + " AND ".join(where)) if where else ""
    select = HIT_SELECT
    if sort in ("newest", "oldest"):
        # Candidates in id order (ids grow with insertion time), newest/oldest first; the
        # candidate set widens until enough rows pass the filters.
        direction = "DESC" if sort == "newest" else "ASC"
        scan = max(_FIRST_SCAN, (limit + offset) * 2)
        while True:
            sql = (
                f"WITH hits AS MATERIALIZED (SELECT rowid AS hid FROM {table}"  # noqa: S608
                f" WHERE {table} MATCH ? ORDER BY rowid {direction} LIMIT ?)"
                f" {select} FROM hits JOIN messages m ON m.id = hits.hid"
                f" JOIN sessions s ON s.id = m.session_id{cond}"
                f" ORDER BY m.timestamp {direction}, m.id {direction} LIMIT ? OFFSET ?"
            )
            rows = conn.execute(sql, [expr, scan, *params, limit, offset]).fetchall()
            if len(rows) >= limit or scan < 0 or _count(conn, table, expr, scan) < scan:
                return [dict(r) for r in rows]
            scan = scan * 8 if scan < 100_000 else -1
    if natural:
        pool = max(NATURAL_POOL, limit + offset)
        found = _ranked(conn, table, expr, select, cond, params, pool, 0, window)
        return _smooth(conn, found, select, cond, params)[offset : offset + limit]
    return _ranked(conn, table, expr, select, cond, params, limit, offset, RANK_WINDOW)


def _ranked(
    conn: sqlite3.Connection,
    table: str,
    expr: str,
    select: str,
    cond: str,
    params: Sequence[Any],
    limit: int,
    offset: int,
    window: int,
) -> list[dict[str, Any]]:
    """Rows by BM25 rank among the newest ``window`` matches (widened when filters leave
    too few; all matches when fewer match)."""
    need = limit + offset
    scan = max(_FIRST_SCAN, need * 2)
    while True:
        floor = _window_floor(conn, table, expr, window) if window > 0 else None
        bounded = " AND rowid >= ?" if floor is not None else ""
        # bm25() sorted by an outer query returns the same order as FTS5's own
        # "ORDER BY rank", about a third faster (FTS5's rank sorter scores rows twice).
        sql = (
            f"WITH hits AS MATERIALIZED (SELECT hid, hrank FROM (SELECT rowid AS hid,"  # noqa: S608
            f" bm25({table}) AS hrank FROM {table} WHERE {table} MATCH ?{bounded})"
            " ORDER BY hrank LIMIT ?)"
            f" {select}, hits.hrank AS rank FROM hits JOIN messages m ON m.id = hits.hid"
            f" JOIN sessions s ON s.id = m.session_id{cond}"
            " ORDER BY hits.hrank, m.id LIMIT ? OFFSET ?"
        )
        args = [expr, *([floor] if floor is not None else []), scan, *params, limit, offset]
        rows = conn.execute(sql, args).fetchall()
        if len(rows) >= limit:
            break
        if floor is not None:
            # Filters removed too many of the recent matches: widen the ranked window.
            window = window * 8 if window < 100_000 else 0
            continue
        if scan < 0 or _count(conn, table, expr, scan) < scan:
            break
        scan = scan * 8 if scan < 100_000 else -1
    return [dict(r) for r in rows]


def adjacent_ids(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, tuple[int, ...]]:
    """The previous and next message id (same session) of each of ``ids``."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        "SELECT m.id,"  # noqa: S608
        " (SELECT p.id FROM messages p WHERE p.session_id = m.session_id AND p.id < m.id"
        "  ORDER BY p.id DESC LIMIT 1),"
        " (SELECT n.id FROM messages n WHERE n.session_id = m.session_id AND n.id > m.id"
        "  ORDER BY n.id LIMIT 1)"
        f" FROM messages m WHERE m.id IN ({marks})",
        list(ids),
    ).fetchall()
    return {int(r[0]): tuple(int(x) for x in r[1:] if x is not None) for r in rows}


def _smooth(
    conn: sqlite3.Connection,
    rows: list[dict[str, Any]],
    select: str,
    cond: str,
    params: Sequence[Any],
) -> list[dict[str, Any]]:
    """Re-rank: score(m) = bm25(m) + `SMOOTHING` × max bm25(adjacent message of m).

    The adjacent turns of the `SMOOTH_SEEDS` best rows become candidates too (they pass
    the same filters). ``rank`` of the returned rows is the negated smoothed score.
    """
    if not rows:
        return rows
    score = {int(r["id"]): -float(r["rank"] or 0.0) for r in rows}
    by_id = {int(r["id"]): r for r in rows}
    # Adjacency is symmetric (m is the next message of its previous one), so the
    # neighbours of every candidate that carry a score follow from the pool's own
    # neighbours: no lookup is needed for the added turns.
    near = neighbour_graph(adjacent_ids(conn, list(score)))
    extra = smoothing_extra(list(score), near, by_id)
    if extra:
        marks = ",".join("?" * len(extra))
        where = (cond + " AND" if cond else " WHERE") + f" m.id IN ({marks})"
        added = conn.execute(
            f"{select}, 0.0 AS rank FROM messages m JOIN sessions s ON s.id = m.session_id{where}",
            [*params, *extra],
        ).fetchall()
        by_id.update((int(r["id"]), dict(r)) for r in added)
    return [{**by_id[mid], "rank": -value} for mid, value in smooth_ranked(score, near, by_id)]


def _count(conn: sqlite3.Connection, table: str, expr: str, cap: int) -> int:
    """Number of matches, counting at most ``cap``."""
    row = conn.execute(
        f"SELECT COUNT(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)",  # noqa: S608
        (expr, cap),
    ).fetchone()
    return int(row[0])


def _window_floor(conn: sqlite3.Connection, table: str, expr: str, window: int) -> int | None:
    """Smallest id among the ``window`` newest matches, or None when there are fewer."""
    row = conn.execute(
        f"SELECT rowid FROM {table} WHERE {table} MATCH ?"  # noqa: S608
        " ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (expr, window - 1),
    ).fetchone()
    return int(row[0]) if row else None


def _context(
    conn: sqlite3.Connection, session_id: str, message_id: int, timestamp: float
) -> list[dict[str, Any]]:
    prev = conn.execute(
        "SELECT role, content FROM messages WHERE session_id = ? AND (timestamp < ? OR"
        " (timestamp = ? AND id < ?)) ORDER BY timestamp DESC, id DESC LIMIT 1",
        (session_id, timestamp, timestamp, message_id),
    ).fetchone()
    nxt = conn.execute(
        "SELECT role, content FROM messages WHERE session_id = ? AND (timestamp > ? OR"
        " (timestamp = ? AND id > ?)) ORDER BY timestamp ASC, id ASC LIMIT 1",
        (session_id, timestamp, timestamp, message_id),
    ).fetchone()
    return context_rows(prev, nxt)


# ---------------------------------------------------------------- anchored views

_MSG_COLS = "id, session_id, role, content, timestamp, tool_name, tool_calls, tool_call_id"


def messages_around(
    conn: sqlite3.Connection, session_id: str, anchor_id: int, window: int
) -> dict[str, Any]:
    """Primitive of the scroll view; see `SessionStore.get_messages_around`."""
    window = max(0, window)
    anchor = conn.execute(
        f"SELECT {_MSG_COLS} FROM messages WHERE id = ? AND session_id = ?",  # noqa: S608
        (anchor_id, session_id),
    ).fetchone()
    if anchor is None:
        return {"window": [], "messages_before": 0, "messages_after": 0}
    before = conn.execute(
        f"SELECT {_MSG_COLS} FROM messages WHERE session_id = ? AND id < ?"  # noqa: S608
        " ORDER BY id DESC LIMIT ?",
        (session_id, anchor_id, window),
    ).fetchall()
    after = conn.execute(
        f"SELECT {_MSG_COLS} FROM messages WHERE session_id = ? AND id > ?"  # noqa: S608
        " ORDER BY id ASC LIMIT ?",
        (session_id, anchor_id, window),
    ).fetchall()
    rows = [*reversed(before), anchor, *after]
    return {
        "window": [_decode(r) for r in rows],
        "messages_before": len(before),
        "messages_after": len(after),
    }


def live_messages(conn: sqlite3.Connection, session_id: str) -> list[dict[str, Any]]:
    """The live conversation of a session (``active = 1`` rows), ascending, decoded.

    Rows archived by an in-place compaction or undone by a rewind are left out, as Hermes
    leaves them out when it resumes or reads a session.
    """
    rows = conn.execute(
        f"SELECT {_MSG_COLS} FROM messages WHERE session_id = ? AND active = 1"  # noqa: S608
        " ORDER BY id",
        (session_id,),
    ).fetchall()
    return [_decode(r) for r in rows]


def anchored_view(
    conn: sqlite3.Connection,
    session_id: str,
    anchor_id: int,
    window: int = 5,
    bookend: int = 3,
    keep_roles: Sequence[str] = ("user", "assistant"),
) -> dict[str, Any]:
    """Window filtered to ``keep_roles`` (anchor always kept) plus non-overlapping bookends.

    Returns ``{"window", "messages_before", "messages_after", "bookend_start",
    "bookend_end"}``; the counts are those of the unfiltered window.
    """
    base = messages_around(conn, session_id, anchor_id, window)
    full = base["window"]
    if not full:
        return {**base, "bookend_start": [], "bookend_end": []}
    roles = list(keep_roles)
    marks = ",".join("?" * len(roles)) or "NULL"
    start = conn.execute(
        f"SELECT {_MSG_COLS} FROM messages WHERE session_id = ? AND id < ?"  # noqa: S608
        f" AND role IN ({marks}) AND content IS NOT NULL AND content != ''"
        " ORDER BY id ASC LIMIT ?",
        (session_id, full[0]["id"], *roles, max(0, bookend)),
    ).fetchall()
    end = conn.execute(
        f"SELECT {_MSG_COLS} FROM messages WHERE session_id = ? AND id > ?"  # noqa: S608
        f" AND role IN ({marks}) AND content IS NOT NULL AND content != ''"
        " ORDER BY id DESC LIMIT ?",
        (session_id, full[-1]["id"], *roles, max(0, bookend)),
    ).fetchall()
    return anchored_result(base, anchor_id, roles, start, end)


def shape_message(
    msg: dict[str, Any], *, anchor: bool = False, max_chars: int | None = None
) -> dict[str, Any]:
    """Tool-output shape: ``{id, role, content, timestamp}`` + truthy tool fields (+anchor).

    With ``max_chars``, longer content is cut and marked ``content_truncated: true`` with
    ``original_content_chars``.
    """
    out: dict[str, Any] = {"id": msg["id"], "role": msg["role"], "content": msg.get("content")}
    if msg.get("timestamp") is not None:
        out["timestamp"] = msg["timestamp"]
    for key in ("tool_name", "tool_calls", "tool_call_id"):
        if msg.get(key):
            out[key] = msg[key]
    content = out["content"]
    if max_chars is not None and isinstance(content, str) and len(content) > max_chars:
        out["content"] = content[:max_chars] + "…"
        out["content_truncated"] = True
        out["original_content_chars"] = len(content)
    if anchor:
        out["anchor"] = True
    return out
