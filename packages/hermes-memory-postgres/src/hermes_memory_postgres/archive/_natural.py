"""`NaturalRanking`: the natural-language fallback's ranking on the word index.

The content terms are OR-ed; a term matching `COMMON_TERM_CAP` messages or more is dropped
while rarer ones are left (how many messages a word matches is read from the owner's term
statistics, `_termstats`, not counted); matches are scored by BM25-IDF-weighted ``ts_rank``
per term over the newest `NATURAL_WINDOW` matches (`RANK_WINDOW` when every term is common,
as on SQLite: `hermes_memory_sessions.search`), and a hit also scores `SMOOTHING` times
the best score of its adjacent messages (whose turns become candidates), as in the SQLite
archive.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import psycopg

from hermes_memory_postgres._text import render_tsquery, word_tokens
from hermes_memory_postgres.archive._core import ArchiveCore
from hermes_memory_postgres.archive._filters import BY_ID_FROM, HIT_SELECT, MESSAGE_SELECT, Filters
from hermes_memory_postgres.archive._recent import ranked_window
from hermes_memory_postgres.archive._termstats import frequencies
from hermes_memory_sessions.search import (
    COMMON_TERM_CAP,
    NATURAL_POOL,
    NATURAL_WINDOW,
    RANK_WINDOW,
    Term,
    neighbour_graph,
    smooth_ranked,
    smoothing_extra,
)

__all__ = ["NaturalRanking", "held_forms", "statistics_lexemes"]


class NaturalRanking(ArchiveCore):
    """Ranking of the any-term fallback, and the smoothing shared with the CJK index."""

    def _ranked_natural(
        self, conn: psycopg.Connection[Any], terms: Sequence[Term], want: int, filt: Filters
    ) -> list[dict[str, Any]]:
        """The any-term fallback on the word index: common terms dropped, IDF-weighted
        ``ts_rank`` per term over the newest `NATURAL_WINDOW` matches (`RANK_WINDOW` when
        every term is common), then smoothing."""
        part = filt.word_part()
        df, total = frequencies(conn, self.owner, statistics_lexemes(terms), part)
        exprs = [(t, render_tsquery([t], cjk=False)) for t in held_forms(terms, df)]
        exprs = [(t, e) for t, e in exprs if e]
        if not exprs:
            return []
        counts = self._term_counts(conn, exprs, df, part)
        # A term no message holds is left out: kept as a rare term it would stand in for
        # the common ones and find nothing (as on SQLite), and each one makes the planner
        # expect more matches.
        exprs = [(t, e) for t, e in exprs if counts[e] > 0]
        if not exprs:
            return []
        rare = [(t, e) for t, e in exprs if counts[e] < COMMON_TERM_CAP]
        # Every term common: no rare one to reach old sessions with (as on SQLite).
        kept, window = (rare, NATURAL_WINDOW) if rare else (exprs, RANK_WINDOW)
        total = max(total, 1, *counts.values())
        weights = [_idf(total, counts[e]) for _, e in kept]
        any_expr = " | ".join(e for _, e in kept)
        score = " + ".join(f"{w:.6f} * ts_rank(m.words, %s::tsquery, 1)" for w in weights)
        cond, params = filt.where(self.owner)
        pool = max(NATURAL_POOL, want)
        ranked = ranked_window(
            conn,
            self.owner,
            f"SELECT {MESSAGE_SELECT}, ({score}) AS rank FROM hm_messages m"  # noqa: S608
            f" WHERE {cond} AND {part} AND m.words @@ %s::tsquery",
            [*(e for _, e in kept), *params, any_expr],
            max(window, pool),
            pool,
        )
        # Not bounded by id ranges (_recent): the OR of several common words is a large
        # bitmap, slower to build than walking the newest ids (docs/benchmarks.md).
        top = ranked("", [])[0]
        return self._smooth(conn, top, filt)[:want]

    def _term_counts(
        self,
        conn: psycopg.Connection[Any],
        exprs: Sequence[tuple[Term, str]],
        df: dict[str, int],
        part: str,
    ) -> dict[str, int]:
        """Messages matching each term (``{tsquery: n}``).

        A plain one-word term is read from the term statistics ``df`` (`_termstats`), and so
        is a folded term: the sum over its forms, so that a rare word whose other form is
        common ("book": "booking") counts as common, as SQLite's count of the forms OR-ed
        does; a phrase or prefix term is counted in ``part`` of the word index, at most
        `COMMON_TERM_CAP`.
        """
        counts: dict[str, int] = {}
        for term, expr in exprs:
            looked_up = _term_lexemes(term)
            if looked_up is not None:
                counts[expr] = sum(df.get(lex, 0) for lex in looked_up)
                continue
            row: Any = conn.execute(
                "SELECT COUNT(*) AS n FROM (SELECT 1 FROM hm_messages m"  # noqa: S608
                f" WHERE m.owner = %s AND {part} AND m.words @@ %s::tsquery LIMIT %s) x",
                (self.owner, expr, COMMON_TERM_CAP),
                prepare=False,
            ).fetchone()
            counts[expr] = int(row["n"])
        return counts

    def _smooth(
        self, conn: psycopg.Connection[Any], rows: list[dict[str, Any]], filt: Filters
    ) -> list[dict[str, Any]]:
        """score(m) = rank(m) + `SMOOTHING` × max rank(adjacent message), as in SQLite."""
        if not rows:
            return rows
        score = {int(r["id"]): float(r["rank"] or 0.0) for r in rows}
        by_id = {int(r["id"]): r for r in rows}
        adjacent = conn.execute(
            "SELECT m.id,"
            " (SELECT p.id FROM hm_messages p WHERE p.owner = m.owner AND"
            "  p.session_id = m.session_id AND p.id < m.id ORDER BY p.id DESC LIMIT 1) AS prev,"
            " (SELECT n.id FROM hm_messages n WHERE n.owner = m.owner AND"
            "  n.session_id = m.session_id AND n.id > m.id ORDER BY n.id LIMIT 1) AS next"
            " FROM hm_messages m WHERE m.owner = %s AND m.id = ANY(%s)",
            (self.owner, list(score)),
        ).fetchall()
        near = neighbour_graph(
            {
                int(r["id"]): [int(n) for n in (r["prev"], r["next"]) if n is not None]
                for r in adjacent
            }
        )
        extra = smoothing_extra(list(score), near, by_id)
        if extra:
            cond, params = filt.where(self.owner)
            added = conn.execute(
                f"SELECT {HIT_SELECT}, 0.0 AS rank {BY_ID_FROM} WHERE {cond} AND m.id = ANY(%s)",
                [*params, extra],
            ).fetchall()
            by_id.update((int(r["id"]), dict(r)) for r in added)
        return [{**by_id[mid], "rank": value} for mid, value in smooth_ranked(score, near, by_id)]


def _idf(total: int, matching: int) -> float:
    """BM25's inverse document frequency of a term matching ``matching`` of ``total``."""
    return math.log((total - matching + 0.5) / (matching + 0.5) + 1.0)


def _term_lexemes(term: Term) -> list[str] | None:
    """The lexemes whose statistics count ``term``'s messages: a folded term's forms, a
    plain one-word term's word; None for a phrase or prefix term (counted instead)."""
    if term.forms:
        return [f for f in term.forms if word_tokens(f) == [f]]
    tokens = word_tokens(term.text)
    return tokens if not term.prefix and len(tokens) == 1 else None


def statistics_lexemes(terms: Sequence[Term]) -> list[str]:
    """Every lexeme the fallback reads from the term statistics for ``terms`` (one read)."""
    return sorted({lex for t in terms for lex in _term_lexemes(t) or ()})


def held_forms(terms: Sequence[Term], df: dict[str, int]) -> list[Term]:
    """``terms`` with each folded term's forms cut to those some message holds (``df``:
    the term statistics, which are exact); a folded term none of whose forms occurs is
    left out.

    Absent forms match nothing, but each one raises the planner's estimate of the
    matches: with sixteen forms of two absent words it walked every id of a million
    messages newest first (800 ms) instead of asking the word index (1 ms)."""
    out: list[Term] = []
    for term in terms:
        if not term.forms:
            out.append(term)
        elif held := tuple(f for f in term.forms if df.get(f, 0) > 0):
            out.append(replace(term, forms=held))
    return out
