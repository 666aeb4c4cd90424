"""Cross-validated fusion settings for ``bench_locomo.py --cv``.

Only five LoCoMo conversations are available here (``locomo-dev.json``; no held split), so
the fusion settings cannot be chosen on one set and reported on another. Instead:

1. every conversation is built once (with the embedder) and every question is asked under
   every setting of `grid` (dense weight, candidate pools, neighbour smoothing, weighted
   sum or reciprocal-rank fusion); each answer's recall@5 and @10 is kept per question;
2. leave one conversation out: for each conversation, the setting with the best mean of
   R@5 and R@10 on the *other four* is chosen, and its recall on the held one is recorded.
   Every question is thus scored exactly once by a setting chosen without it;
3. the same selection over all five conversations gives the "dev" setting and figure (the
   setting a library default would be, and an optimistic figure).

The held figure is reported two ways: the mean of the five folds' recall (each fold weighs
the same) and pooled over every held question. Fixed settings (the shipped one, plain RRF)
are scored on the same questions so the selection can be compared with "no tuning".
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import hermes_memory_sessions.search._hybrid as hybrid_mod

#: Categories of LoCoMo questions (bench_locomo.CATEGORIES order).
CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}


@dataclass(frozen=True)
class Setting:
    """One fusion setting: the module constants of `hermes_memory_sessions.hybrid`."""

    fusion: str  # "weighted" | "rrf"
    weight: float
    pool: int  # LEXICAL_POOL and DENSE_POOL
    smoothing: float

    @property
    def label(self) -> str:
        if self.fusion == "rrf":
            return f"rrf pool={self.pool}"
        return f"w={self.weight:g} pool={self.pool} smooth={self.smoothing:g}"


def shipped() -> Setting:
    """The setting the library ships (read from the module, not restated)."""
    return Setting(
        hybrid_mod.FUSION,
        hybrid_mod.DENSE_WEIGHT,
        hybrid_mod.DENSE_POOL,
        hybrid_mod.FUSED_SMOOTHING,
    )


def grid() -> list[Setting]:
    """The settings tried: weighted sums over dense weight x candidate pool (neighbour
    smoothing 0.5: 0.3 and 0.7 were within 0.3 points on dev, docs/benchmarks.md), and
    plain RRF. Twelve settings: every one asks all 1,018 questions (about 17 minutes on
    two loaded cores); pool 30 ranked below 50 and 100 on dev before."""
    out = [
        Setting("weighted", w, pool, 0.5) for w in (0.3, 0.4, 0.5, 0.6, 0.7) for pool in (50, 100)
    ]
    out += [Setting("rrf", 0.5, pool, 0.0) for pool in (50, 100)]
    if shipped() not in out:
        out.append(shipped())
    return out


@contextlib.contextmanager
def applied(setting: Setting) -> Iterator[None]:
    """The hybrid module's constants set to ``setting`` for the duration."""
    names = ("FUSION", "DENSE_WEIGHT", "LEXICAL_POOL", "DENSE_POOL", "FUSED_SMOOTHING")
    saved = {n: getattr(hybrid_mod, n) for n in names}
    hybrid_mod.FUSION = setting.fusion
    hybrid_mod.DENSE_WEIGHT = setting.weight
    hybrid_mod.LEXICAL_POOL = setting.pool
    hybrid_mod.DENSE_POOL = setting.pool
    hybrid_mod.FUSED_SMOOTHING = setting.smoothing
    try:
        yield
    finally:
        for n, v in saved.items():
            setattr(hybrid_mod, n, v)


@dataclass
class Answer:
    """One question's recall@5 and @10 under one setting."""

    conv: str
    category: int
    r5: float
    r10: float


@dataclass
class Table:
    """Per setting, per question answers (questions in the same order for every setting)."""

    answers: dict[Setting, list[Answer]] = field(default_factory=lambda: defaultdict(list))
    lexical: list[Answer] = field(default_factory=list)


def _recall(gold: frozenset[str], ranked: Sequence[str], k: int) -> float:
    return len(gold & set(ranked[:k])) / len(gold)


def collect(
    convs: Sequence[Any],
    build: Callable[[Any], Any],
    settings: Sequence[Setting],
) -> Table:
    """Ask every question of every conversation under every setting (one build each).

    ``build(conv)`` returns an object with ``hybrid(q, k)``, ``tool_policy(q, k)`` (ranked
    dialog ids) and ``close()`` (bench_locomo.Archive).
    """
    table = Table()
    for conv in convs:
        started = time.perf_counter()
        archive = build(conv)
        print(
            f"  {conv.sample_id}: built in {time.perf_counter() - started:.1f} s;"
            f" {len(settings)} settings x {len(conv.questions)} questions",
            file=sys.stderr,
            flush=True,
        )
        try:
            for q in conv.questions:
                ranked = archive.tool_policy(q.text, 10)
                table.lexical.append(
                    Answer(
                        conv.sample_id,
                        q.category,
                        _recall(q.gold, ranked, 5),
                        _recall(q.gold, ranked, 10),
                    )
                )
            for setting in settings:
                with applied(setting):
                    for q in conv.questions:
                        ranked = archive.hybrid(q.text, 10)
                        table.answers[setting].append(
                            Answer(
                                conv.sample_id,
                                q.category,
                                _recall(q.gold, ranked, 5),
                                _recall(q.gold, ranked, 10),
                            )
                        )
        finally:
            archive.close()
    return table


def _mean(answers: Sequence[Answer]) -> tuple[float, float]:
    if not answers:
        return 0.0, 0.0
    n = len(answers)
    return 100 * sum(a.r5 for a in answers) / n, 100 * sum(a.r10 for a in answers) / n


def _objective(answers: Sequence[Answer]) -> float:
    r5, r10 = _mean(answers)
    return (r5 + r10) / 2


def choose(table: Table, convs: set[str]) -> Setting:
    """The setting with the best mean of R@5 and R@10 on the questions of ``convs``
    (ties: the first in grid order)."""
    best: Setting | None = None
    best_score = -1.0
    for setting, answers in table.answers.items():
        score = _objective([a for a in answers if a.conv in convs])
        if score > best_score + 1e-9:
            best, best_score = setting, score
    assert best is not None
    return best


@dataclass
class Fold:
    held: str
    setting: Setting
    answers: list[Answer]


def leave_one_out(table: Table, names: Sequence[str]) -> list[Fold]:
    """For each conversation: the setting chosen on the others, scored on it."""
    folds = []
    for held in names:
        setting = choose(table, set(names) - {held})
        folds.append(Fold(held, setting, [a for a in table.answers[setting] if a.conv == held]))
    return folds


def _by_category(answers: Sequence[Answer]) -> str:
    cells = []
    for cat, name in CATEGORY_NAMES.items():
        r5, r10 = _mean([a for a in answers if a.category == cat])
        cells.append(f"{name} {r5:.1f} / {r10:.1f}")
    return " · ".join(cells)


def report(table: Table, names: Sequence[str]) -> None:
    """Print the folds, the held and dev figures and the fixed settings, per category."""
    folds = leave_one_out(table, names)
    print("\nLeave-one-conversation-out: setting chosen on the other conversations")
    print(f"{'held conversation':<20}{'questions':>10}{'R@5':>8}{'R@10':>8}  chosen setting")
    for f in folds:
        r5, r10 = _mean(f.answers)
        print(f"{f.held:<20}{len(f.answers):>10}{r5:8.1f}{r10:8.1f}  {f.setting.label}")
    fold_means = [_mean(f.answers) for f in folds]
    macro5 = sum(m[0] for m in fold_means) / len(fold_means)
    macro10 = sum(m[1] for m in fold_means) / len(fold_means)
    pooled = [a for f in folds for a in f.answers]
    p5, p10 = _mean(pooled)
    print(f"{'held: mean of folds':<30}{macro5:8.1f}{macro10:8.1f}")
    print(f"{'held: pooled questions':<30}{p5:8.1f}{p10:8.1f}")
    dev = choose(table, set(names))
    d5, d10 = _mean(table.answers[dev])
    print(f"{'dev (chosen on all five)':<30}{d5:8.1f}{d10:8.1f}  {dev.label}")
    print("\nFixed settings on the same questions (no selection), R@5 / R@10:")
    lex = _mean(table.lexical)
    print(f"  {'lexical policy':<34}{lex[0]:8.1f}{lex[1]:8.1f}")
    fixed = [shipped(), *(s for s in table.answers if s.fusion == "rrf")]
    for s in dict.fromkeys(fixed):
        r5, r10 = _mean(table.answers[s])
        tag = " (shipped)" if s == shipped() else ""
        print(f"  {s.label + tag:<34}{r5:8.1f}{r10:8.1f}")
    print("\nBy category, R@5 / R@10:")
    print(f"  held (CV):   {_by_category(pooled)}")
    print(f"  dev setting: {_by_category(table.answers[dev])}")
    print(f"  shipped:     {_by_category(table.answers[shipped()])}")
    print(f"  lexical:     {_by_category(table.lexical)}")
    ranked = sorted(table.answers, key=lambda s: -_objective(table.answers[s]))
    print("\nAll settings on all five conversations (dev), best first, R@5 / R@10:")
    for s in ranked:
        r5, r10 = _mean(table.answers[s])
        print(f"  {s.label:<34}{r5:8.1f}{r10:8.1f}")
