"""The ranking after fusion (issue 22): dense scores relative to the candidates' background,
a session's other strong hits lifting its members, and the top spread over sessions."""

from __future__ import annotations

from hermes_memory_sessions.search._rerank import (
    background_normalised,
    distribution_normalised,
    diversified,
    minmax,
    session_supported,
)


def test_background_normalisation_does_not_depend_on_how_many_candidates_were_fetched() -> None:
    # The same best cosines over a background of similar messages, fetched as a pool of 13
    # and of 23 (the larger pool reaching further down the tail): min-max moves the third
    # best from 0.4 to 0.8, the background scale (0 at the median) keeps every head score.
    short = [0.90, 0.86, 0.84, *[0.80] * 10]
    long = [*short, *[0.80] * 4, 0.70, 0.68, 0.66, 0.64, 0.62, 0.60]
    assert round(minmax(short)[2], 6) == 0.4 and round(minmax(long)[2], 6) == 0.8
    assert background_normalised(short)[:3] == background_normalised(long)[:3]
    assert background_normalised(long)[-1] == 0.0  # below the median: no dense credit
    assert background_normalised([0.5, 0.5]) == [1.0, 1.0]
    assert background_normalised([]) == []


def test_distribution_normalisation_is_clipped_to_three_deviations() -> None:
    values = [0.0] * 19 + [1.0, 10.0]
    scaled = distribution_normalised(values)
    assert scaled[-1] == 1.0  # far above mean + 3 sd: clipped
    assert 0.0 < scaled[0] < scaled[19] < 1.0
    assert distribution_normalised([0.3, 0.3]) == [1.0, 1.0]
    assert distribution_normalised([]) == []


def test_a_session_with_several_strong_hits_lifts_its_weaker_member() -> None:
    score = {1: 0.8, 2: 0.7, 3: 0.6, 10: 0.9, 11: 0.62}
    session = {1: "a", 2: "a", 3: "a", 10: "b", 11: "c"}
    lifted = session_supported(score, session, 0.5, 3)
    # Session "a" (0.8, 0.7, 0.6) is stronger than "b" (one hit of 0.9) and "c" (one 0.62):
    # its weakest message now outranks the lone hit of "c" it was below.
    assert lifted[3] > lifted[11]
    assert score[3] < score[11]
    assert lifted[1] > lifted[10]  # two supporting hits beat one slightly better hit
    assert session_supported(score, session, 0.0, 3) == score


def test_diversity_brings_a_second_session_into_the_top_when_scores_are_close() -> None:
    # One session's three turns score a little above the other session's best turn.
    score = {1: 1.0, 2: 0.97, 3: 0.95, 20: 0.93, 21: 0.40}
    session = {1: "x", 2: "x", 3: "x", 20: "y", 21: "y"}
    assert diversified(score, session, 0.0)[:2] == [1, 2]
    assert diversified(score, session, 0.1)[:2] == [1, 20]
    # A clear winner keeps its session's turns ahead of a much weaker session.
    assert diversified(score, session, 0.1).index(2) < diversified(score, session, 0.1).index(21)
    # Every id once, and ``limit`` cuts the same order.
    full = diversified(score, session, 0.1)
    assert sorted(full) == sorted(score)
    assert diversified(score, session, 0.1, 3) == full[:3]


def test_diversified_without_penalty_is_score_order_with_ids_breaking_ties() -> None:
    score = {5: 0.5, 3: 0.5, 9: 0.9}
    assert diversified(score, {}, 0.0) == [9, 3, 5]
    assert diversified({}, {}, 0.2) == []


def _greedy(score: dict[int, float], session: dict[int, str], penalty: float) -> list[int]:
    """The definition: each step picks the best score lowered by the session's picks."""
    step = penalty * max(score.values())
    left, picked, out = dict(score), dict.fromkeys(session.values(), 0), []
    while left:
        mid = min(left, key=lambda m: (-(left[m] - step * picked[session[m]]), m))
        out.append(mid)
        picked[session[mid]] += 1
        del left[mid]
    return out


def test_diversified_is_the_exact_greedy_order() -> None:
    import random

    rng = random.Random(22)
    for _ in range(200):
        n = rng.randint(2, 40)
        score = {i: round(rng.random(), 2) for i in range(n)}
        session = {i: f"s{rng.randint(0, 5)}" for i in range(n)}
        penalty = rng.choice([0.05, 0.15, 0.5])
        assert diversified(score, session, penalty) == _greedy(score, session, penalty)
