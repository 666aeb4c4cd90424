"""The ranking after fusion: how dense scores are put on the lexical scale, how a session's
other strong hits count for a message, and how the top of the list is spread over sessions.

Pure functions over ``{message id: score}`` and ``{message id: session id}``; nothing here
touches a database (both backends call them through `hermes_memory_sessions.search._hybrid`).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence

__all__ = [
    "background_normalised",
    "distribution_normalised",
    "diversified",
    "minmax",
    "session_supported",
]


def minmax(values: Sequence[float]) -> list[float]:
    """``values`` scaled to [0, 1] by their minimum and maximum (all 1.0 when equal)."""
    if not values:
        return []
    low, high = min(values), max(values)
    if high - low <= 1e-12:
        return [1.0] * len(values)
    return [(v - low) / (high - low) for v in values]


def background_normalised(values: Sequence[float]) -> list[float]:
    """``(v - median) / (max - median)``, 0 at or below the median (all 1.0 when equal).

    Dense candidates are mostly unrelated messages, so their median stands for background
    similarity (as for the semantic-only margin). Min-max instead maps the *last* candidate
    to 0, which depends on how many candidates were fetched: the same cosine got a
    different fused score in a pool of 50 and of 100.
    """
    if not values:
        return []
    ordered = sorted(values)
    middle, high = ordered[len(ordered) // 2], ordered[-1]
    if high - middle <= 1e-12:
        return [1.0] * len(values)
    return [max(0.0, (v - middle) / (high - middle)) for v in values]


def distribution_normalised(values: Sequence[float]) -> list[float]:
    """``values`` scaled to [0, 1] between mean - 3 sd and mean + 3 sd, clipped
    (distribution-based score fusion; all 1.0 when the values are equal).

    Like `background_normalised`, a score's place depends on the whole distribution of
    the candidates rather than on the single weakest one.
    """
    if not values:
        return []
    n = len(values)
    mean = sum(values) / n
    sd = (sum((v - mean) ** 2 for v in values) / n) ** 0.5
    if sd <= 1e-12:
        return [1.0] * n
    low = mean - 3 * sd
    return [min(1.0, max(0.0, (v - low) / (6 * sd))) for v in values]


def session_supported(
    score: Mapping[int, float], session_of: Mapping[int, str], weight: float, top: int
) -> dict[int, float]:
    """Each score plus ``weight`` x the mean of its session's ``top`` best scores.

    A session holding several strong hits is likely the one the question is about, so each
    of its messages is lifted (an answer worded unlike the question sits among turns that
    are not); a session with one strong hit gets a third of that lift (``top`` = 3),
    missing places counting 0. ``weight`` 0 returns the scores unchanged.
    """
    if weight <= 0 or not score:
        return dict(score)
    by_session: dict[str, list[float]] = {}
    for mid, value in score.items():
        by_session.setdefault(session_of.get(mid, ""), []).append(value)
    strength = {
        sid: sum(sorted(values, reverse=True)[:top]) / top for sid, values in by_session.items()
    }
    return {mid: v + weight * strength[session_of.get(mid, "")] for mid, v in score.items()}


def diversified(
    score: Mapping[int, float],
    session_of: Mapping[int, str],
    penalty: float,
    limit: int | None = None,
) -> list[int]:
    """The ids best first, each pick's score lowered by ``penalty`` x the best score for
    every message of its session already picked (greedy, like maximal marginal relevance
    with "same session" as the similarity).

    A question whose evidence lies in several sessions (multi-hop) otherwise gets its top
    places filled by one session's neighbouring turns; a clear winner still keeps its
    session's next turns ahead of weaker sessions. ``penalty`` 0: plain score order.
    Ties: the smaller id first. ``limit``: only the first ``limit`` picks.
    """
    order = sorted(score, key=lambda mid: (-score[mid], mid))
    wanted = len(order) if limit is None else min(max(0, limit), len(order))
    if penalty <= 0 or len(order) < 2:
        return order[:wanted]
    step = penalty * max(abs(score[order[0]]), 1e-12)
    # Lazy greedy: a pick only lowers the scores of its own session's ids, so a popped id
    # whose key is stale (its session gained picks since it was pushed) is pushed back
    # with its current score; an id popped with a fresh key is the exact greedy choice.
    picked_in: dict[str, int] = {}
    heap = [(-score[mid], mid, 0) for mid in order]  # already a heap: sorted ascending
    out: list[int] = []
    while heap and len(out) < wanted:
        _, mid, seen = heapq.heappop(heap)
        sid = session_of.get(mid, "")
        now = picked_in.get(sid, 0)
        if now != seen:
            heapq.heappush(heap, (-(score[mid] - step * now), mid, now))
            continue
        out.append(mid)
        picked_in[sid] = now + 1
    return out
