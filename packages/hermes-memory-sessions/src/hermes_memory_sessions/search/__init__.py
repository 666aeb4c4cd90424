"""Search over the archive: query parsing, lexical (FTS5 words and CJK), hybrid fusion.

The PostgreSQL backend shares the query parser, the CJK splitting and the shaping of hits
(``_shaping``) with the SQLite archive, so both answer ``session_search`` alike.
"""

from hermes_memory_sessions.search._cjk import cjk_index_text, fold_version, split_cjk
from hermes_memory_sessions.search._hybrid import (
    FusedRanking,
    RankedHit,
    discover,
    fused_ranking,
    lexical_candidates,
)
from hermes_memory_sessions.search._lexical import (
    COMMON_TERM_CAP,
    NATURAL_POOL,
    NATURAL_WINDOW,
    RANK_WINDOW,
    SNIPPET_FTS_MAX_CHARS,
    Hits,
    python_snippet,
)
from hermes_memory_sessions.search._query import (
    ParsedQuery,
    Term,
    any_terms,
    latin_only,
    parse_query,
    term_has_cjk,
)
from hermes_memory_sessions.search._shaping import (
    anchored_result,
    context_rows,
    decode_row,
    dedupe_hits,
    escape_like,
    merge_found,
    neighbour_graph,
    next_numbered_title,
    or_items,
    single_message,
    smooth_ranked,
    smoothing_extra,
    terms_have_cjk,
    title_base,
)

__all__ = [
    "COMMON_TERM_CAP",
    "NATURAL_POOL",
    "NATURAL_WINDOW",
    "RANK_WINDOW",
    "SNIPPET_FTS_MAX_CHARS",
    "FusedRanking",
    "Hits",
    "ParsedQuery",
    "RankedHit",
    "Term",
    "anchored_result",
    "any_terms",
    "cjk_index_text",
    "context_rows",
    "decode_row",
    "dedupe_hits",
    "discover",
    "escape_like",
    "fold_version",
    "fused_ranking",
    "latin_only",
    "lexical_candidates",
    "merge_found",
    "neighbour_graph",
    "next_numbered_title",
    "or_items",
    "parse_query",
    "python_snippet",
    "single_message",
    "smooth_ranked",
    "smoothing_extra",
    "split_cjk",
    "term_has_cjk",
    "terms_have_cjk",
    "title_base",
]
