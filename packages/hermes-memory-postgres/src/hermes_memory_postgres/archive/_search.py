"""`ArchiveSearch`: discovery on the word and CJK ``tsvector`` indexes.

The SQLite archive's policy, on PostgreSQL: the same sanitiser (`parse_query`), implicit
AND over the word index, then the CJK index (Latin words glued to CJK text); a CJK query on
the CJK index plus its Latin terms on the word index; ``any_terms=True`` is the
natural-language fallback (`NaturalRanking`). Results are shaped by the functions both
backends share (`hermes_memory_sessions.search`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from hermes_memory_postgres._text import render_tsquery, word_tokens
from hermes_memory_postgres.archive._filters import MESSAGE_SELECT, Filters, with_sessions
from hermes_memory_postgres.archive._natural import NaturalRanking
from hermes_memory_postgres.archive._recent import newest_matches, ranked_window
from hermes_memory_postgres.archive._termstats import frequencies
from hermes_memory_sessions.search import (
    NATURAL_POOL,
    NATURAL_WINDOW,
    RANK_WINDOW,
    Hits,
    ParsedQuery,
    Term,
    context_rows,
    dedupe_hits,
    latin_only,
    merge_found,
    or_items,
    parse_query,
    python_snippet,
    terms_have_cjk,
)
from hermes_memory_sessions.search import any_terms as content_terms

__all__ = ["ArchiveSearch"]

# Why text searches are never prepared (``prepare=False``): psycopg prepares a statement
# from its fifth run, and PostgreSQL may then switch it to a generic plan, blind to the
# parameters. For a text search that plan can be catastrophic: at 1M messages the CJK
# discovery's generic plan ran the GIN scan once per session (9,115 times, 30 s) instead of
# once (tens of ms). Planning a search costs about a millisecond; the id lookups
# (``= ANY(array)``) stay prepared, where a generic plan is right and planning a
# thousand-element array each time is not free.


class ArchiveSearch(NaturalRanking):
    """``find_hits``, ``hit_snippet`` and ``search_messages`` of one owner."""

    def find_hits(
        self,
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
        """Matching rows without snippets (None when nothing matches or no terms).

        The SQLite archive's policy: implicit AND over the word index, then the CJK index
        (Latin words glued to CJK text); a CJK query on the CJK index plus its Latin terms
        on the word index; ``any_terms=True`` is the natural-language fallback (content
        terms OR-ed, very common terms dropped, neighbour smoothing). Ranking is
        ``ts_rank`` among the newest `RANK_WINDOW` matches (IDF-weighted per term in the
        fallback); ``sort="newest"|"oldest"`` orders by time.
        """
        parsed = parse_query(query)
        if not parsed.terms:
            return None
        limit = max(1, int(limit))
        offset = max(0, int(offset))
        filt = Filters(
            role_filter, source_filter, exclude_sources, sort, include_inactive, since, until
        )
        want = limit + offset

        def run(conn: psycopg.Connection[Any]) -> list[dict[str, Any]]:
            if any_terms:
                return self._natural(conn, parsed, want, filt)
            return self._search_items(conn, list(parsed.items), parsed.has_cjk, want, filt)

        rows = self._read(run)
        if not rows:
            return None
        merged, sources = dedupe_hits(rows, offset, limit)
        return Hits(merged, sources, list(parsed.needles))

    def _search_items(
        self,
        conn: psycopg.Connection[Any],
        items: list[Term | str],
        has_cjk: bool,
        want: int,
        filt: Filters,
        natural: Sequence[Term] = (),
    ) -> list[dict[str, Any]]:
        if has_cjk:
            plans = [
                ("cjk", render_tsquery(items, cjk=True)),
                ("words", render_tsquery(latin_only(items), cjk=False)),
            ]
            fallback: list[tuple[str, str]] = []
        else:
            plans = [("words", render_tsquery(items, cjk=False))]
            fallback = [("cjk", render_tsquery(items, cjk=True))]
        found: list[list[dict[str, Any]]] = []
        for group in (plans, fallback):
            for column, expr in group:
                if not expr:
                    continue
                if natural and column == "words" and not has_cjk:
                    rows = self._ranked_natural(conn, natural, want, filt)
                else:
                    rows = self._run(conn, column, expr, want, filt, bool(natural), items)
                for row in rows:
                    row["_src"] = (column, expr)
                if rows:
                    found.append(rows)
            if found:
                break
        return merge_found(found, filt.sort, lower_is_better=False)

    def _natural(
        self, conn: psycopg.Connection[Any], parsed: ParsedQuery, want: int, filt: Filters
    ) -> list[dict[str, Any]]:
        terms = content_terms(parsed)
        if not terms:
            return []
        has_cjk = terms_have_cjk(terms)
        return self._search_items(conn, or_items(terms), has_cjk, want, filt, natural=terms)

    def _run(
        self,
        conn: psycopg.Connection[Any],
        column: str,
        expr: str,
        want: int,
        filt: Filters,
        natural: bool,
        items: Sequence[Term | str] = (),
    ) -> list[dict[str, Any]]:
        cond, params = filt.where(self.owner)
        if column == "words":
            cond += f" AND {filt.word_part()}"
        where = f" WHERE {cond} AND m.{column} @@ %s::tsquery"
        if filt.by_time:
            direction = "DESC" if filt.sort == "newest" else "ASC"
            newest = (
                f"SELECT {MESSAGE_SELECT}, 0.0 AS rank FROM hm_messages m{where}"  # noqa: S608
                f" ORDER BY m.timestamp {direction}, m.id {direction} LIMIT %s"
            )
            rows = conn.execute(
                with_sessions(newest, f"w.timestamp {direction}, w.id {direction}"),
                [*params, expr, want, self.owner],
                prepare=False,  # never a generic plan (top of module)
            ).fetchall()
            return [dict(r) for r in rows]
        window = max(NATURAL_WINDOW if natural else RANK_WINDOW, want)
        pool = max(NATURAL_POOL, want) if natural else want

        ranked = ranked_window(
            conn,
            self.owner,
            f"SELECT {MESSAGE_SELECT}, ts_rank(m.{column}, %s::tsquery, 1) AS rank"  # noqa: S608
            f" FROM hm_messages m{where}",
            [expr, *params, expr],
            window,
            pool,
        )

        # The CJK index matches far fewer messages (and has its own partial index of
        # them): bounding its ids first cost more than it saved (docs/benchmarks.md).
        if column == "words" and not self._rarer_than(conn, items, window, filt):
            out = newest_matches(conn, self.owner, ranked, window)
        else:
            out = ranked("", [])[0]
        if natural:
            out = self._smooth(conn, out, filt)[:want]
        return out

    def _rarer_than(
        self,
        conn: psycopg.Connection[Any],
        items: Sequence[Term | str],
        window: int,
        filt: Filters,
    ) -> bool:
        """Whether an implicit AND of ``items`` surely matches fewer than ``window``
        messages of the part of the word index ``filt`` searches: one of its plain words is
        that rare there (the owner's term statistics). Then
        no range of the newest ids can hold the window: the whole archive is searched at
        once (a word no message holds costs one query, not three)."""
        if not items or any(isinstance(i, str) for i in items):
            return False  # OR / NOT / no terms: no bound from one word
        words = []
        for item in items:
            assert isinstance(item, Term)
            tokens = word_tokens(item.text)
            if not item.prefix and len(tokens) == 1:
                words.append(tokens[0])
        if not words:
            return False
        df, _ = frequencies(conn, self.owner, words, filt.word_part())
        return min(df.values()) < window

    def hit_snippet(self, hits: Hits, message_id: int) -> str:
        """The ``>>>term<<<`` snippet of one row of ``hits`` (around the first match; a
        row of a fused ranking that only the dense side found: its start, with only the
        query's content words marked, as on SQLite)."""
        memo = self._memo()
        key = (self.owner, "content", int(message_id))
        if memo is not None and key in memo:  # read with its anchored view
            row: Any = {"content": memo[key]}
        else:
            row = self._read(
                lambda conn: conn.execute(
                    "SELECT content FROM hm_messages WHERE owner = %s AND id = %s",
                    (self.owner, int(message_id)),
                ).fetchone()
            )
        needles = hits.needles
        if int(message_id) in getattr(hits, "semantic", ()):
            needles = list(getattr(hits, "content_needles", needles))
        return python_snippet(row["content"] if row else None, needles)

    def search_messages(
        self, query: str, *, with_context: bool = True, with_snippet: bool = True, **kwargs: Any
    ) -> list[dict[str, Any]]:
        """Search message text; never raises for a malformed query (returns ``[]``).

        Rows as `SessionStore.search_messages`: ``id, session_id, role, snippet, timestamp,
        tool_name, source, model, session_started`` (+ ``context``). Snippets and contexts
        of all hits are read in one round trip.
        """
        hits = self.find_hits(query, **kwargs)
        if hits is None:
            return []
        ids = [int(row["id"]) for row in hits.rows]
        extra = self._read(lambda conn: self._hit_texts(conn, ids, with_context))
        for row in hits.rows:
            found = extra.get(int(row["id"]), {})
            if with_snippet:
                row["snippet"] = python_snippet(found.get("content"), hits.needles)
            else:
                row["snippet"] = ""
            if with_context:
                prev = {"role": found.get("p_role"), "content": found.get("p_content")}
                nxt = {"role": found.get("n_role"), "content": found.get("n_content")}
                row["context"] = context_rows(
                    prev if prev["role"] is not None else None,
                    nxt if nxt["role"] is not None else None,
                )
        return hits.rows

    def _hit_texts(
        self, conn: psycopg.Connection[Any], ids: list[int], with_context: bool
    ) -> dict[int, dict[str, Any]]:
        """``{id: {content, p_role, p_content, n_role, n_content}}`` of hits: the text and
        the messages before and after each (same session, by time, then id)."""
        if not with_context:
            rows = conn.execute(
                "SELECT id, content FROM hm_messages WHERE owner = %s AND id = ANY(%s)",
                (self.owner, ids),
            ).fetchall()
            return {int(r["id"]): r for r in rows}
        rows = conn.execute(
            "SELECT m.id, m.content, p.role AS p_role, p.content AS p_content,"
            " n.role AS n_role, n.content AS n_content FROM hm_messages m"
            " LEFT JOIN LATERAL (SELECT role, content FROM hm_messages x WHERE x.owner = m.owner"
            "  AND x.session_id = m.session_id AND (x.timestamp < m.timestamp OR"
            "  (x.timestamp = m.timestamp AND x.id < m.id))"
            "  ORDER BY x.timestamp DESC, x.id DESC LIMIT 1) p ON true"
            " LEFT JOIN LATERAL (SELECT role, content FROM hm_messages x WHERE x.owner = m.owner"
            "  AND x.session_id = m.session_id AND (x.timestamp > m.timestamp OR"
            "  (x.timestamp = m.timestamp AND x.id > m.id))"
            "  ORDER BY x.timestamp, x.id LIMIT 1) n ON true"
            " WHERE m.owner = %s AND m.id = ANY(%s)",
            (self.owner, ids),
        ).fetchall()
        return {int(r["id"]): r for r in rows}
