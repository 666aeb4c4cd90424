"""Cross-validated fusion settings for ``bench_locomo.py --cv``.

The fusion settings are chosen on the five LoCoMo dev conversations (``locomo-dev.json``)
only; the held conversations (a separate file, ``--data``) are for reporting, a few times,
never for choosing. The choice and its honest estimate:

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
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import astuple, dataclass, field
from pathlib import Path
from typing import Any

import hermes_memory_sessions.search._hybrid as hybrid_mod
from hermes_memory_sessions.search._query import folded, parse_query

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
    """One fusion setting: the module constants of `hermes_memory_sessions.search._hybrid`."""

    fusion: str  # "weighted" | "rrf"
    weight: float
    pool: int  # LEXICAL_POOL and DENSE_POOL
    smoothing: float
    norm: str = "minmax"  # DENSE_NORM
    support: float = 0.0  # SESSION_SUPPORT
    diversity: float = 0.0  # SESSION_DIVERSITY
    top: int = 3  # SESSION_TOP
    fold: bool = False  # SUFFIX_FOLDING

    @property
    def label(self) -> str:
        if self.fusion == "rrf":
            return f"rrf pool={self.pool}"
        return (
            f"w={self.weight:g} pool={self.pool} smooth={self.smoothing:g} {self.norm}"
            f" sess={self.support:g} div={self.diversity:g}"
            + (f" top={self.top}" if self.top != 3 else "")
            + (" fold" if self.fold else "")
        )


#: Module constants of `_hybrid` each `Setting` field sets (pool sets both pools).
_CONSTANTS = {
    "FUSION": "fusion",
    "DENSE_WEIGHT": "weight",
    "LEXICAL_POOL": "pool",
    "DENSE_POOL": "pool",
    "FUSED_SMOOTHING": "smoothing",
    "DENSE_NORM": "norm",
    "SESSION_SUPPORT": "support",
    "SESSION_DIVERSITY": "diversity",
    "SESSION_TOP": "top",
    "SUFFIX_FOLDING": "fold",
}


def shipped() -> Setting:
    """The setting the library ships (read from the module, not restated)."""
    return Setting(
        hybrid_mod.FUSION,
        hybrid_mod.DENSE_WEIGHT,
        hybrid_mod.DENSE_POOL,
        hybrid_mod.FUSED_SMOOTHING,
        hybrid_mod.DENSE_NORM,
        hybrid_mod.SESSION_SUPPORT,
        hybrid_mod.SESSION_DIVERSITY,
        hybrid_mod.SESSION_TOP,
        hybrid_mod.SUFFIX_FOLDING,
    )


#: The settings before issue 22's fusion work (b778032), scored beside the choice.
PREVIOUS = Setting("weighted", 0.5, 50, 0.5)
#: The settings shipped before suffix folding (3a10e23: session support 0.5, no folding).
BEFORE_FOLDING = Setting("weighted", 0.5, 50, 0.3, "minmax", 0.5)


def grid() -> list[Setting]:
    """The settings tried: weighted sums over dense weight x candidate pool x neighbour
    smoothing x dense normalisation x session support x session diversity, and plain RRF.
    Weights outside 0.4-0.6 and pool 30 ranked well below on dev before (docs/benchmarks.md);
    the lexical and dense sides of each question are computed once per pool
    (`memoized_sides`), so a setting costs only the fusion."""
    out = [
        Setting("weighted", w, pool, smooth, norm, support, div)
        for w in (0.4, 0.5, 0.6)
        for pool in (50, 100)
        for smooth in (0.3, 0.5, 0.7)
        for norm in ("minmax", "background", "distribution")
        for support in (0.0, 0.25, 0.5)
        for div in (0.0, 0.05, 0.15)
    ]
    out += [Setting("rrf", 0.5, pool, 0.0) for pool in (50, 100)]
    for fixed in (shipped(), PREVIOUS):
        if fixed not in out:
            out.append(fixed)
    return out


def session_grid() -> list[Setting]:
    """The second search (``--cv-grid session``): the full grid chose session support 0.5,
    its largest value, in every fold, with dense weight 0.5 and min-max in every fold but
    one; so weight and scale are fixed there and the support (weight and how many of a
    session's best hits make its strength) is searched beyond that edge."""
    out = [
        Setting("weighted", 0.5, pool, smooth, "minmax", support, 0.0, top)
        for pool in (50, 100)
        for smooth in (0.3, 0.5)
        for support in (0.0, 0.25, 0.5, 0.75, 1.0, 1.5)
        for top in (2, 3, 5)
    ]
    for fixed in (shipped(), PREVIOUS):
        if fixed not in out:
            out.append(fixed)
    return out


def folding_grid() -> list[Setting]:
    """The third search (``--cv-grid folding``): the hybrid's lexical side with its
    natural-language fallback searched by stem prefixes (`_hybrid.SUFFIX_FOLDING`) or as
    written, with the settings the fallback's scores feed (dense weight, smoothing,
    session support) around the shipped ones."""
    base = shipped()
    out = [
        Setting("weighted", w, base.pool, smooth, base.norm, support, 0.0, base.top, fold)
        for fold in (False, True)
        for w in (0.4, 0.5, 0.6)
        for smooth in (0.3, 0.5)
        for support in (0.25, 0.5, 0.75)
    ]
    for fixed in (base, PREVIOUS, BEFORE_FOLDING):
        if fixed not in out:
            out.append(fixed)
    return out


GRIDS: dict[str, Callable[[], list[Setting]]] = {
    "folding": folding_grid,
    "full": grid,
    "session": session_grid,
}


@contextlib.contextmanager
def applied(setting: Setting) -> Iterator[None]:
    """The hybrid module's constants set to ``setting`` for the duration."""
    saved = {n: getattr(hybrid_mod, n) for n in _CONSTANTS}
    for name, attr in _CONSTANTS.items():
        setattr(hybrid_mod, name, getattr(setting, attr))
    try:
        yield
    finally:
        for n, v in saved.items():
            setattr(hybrid_mod, n, v)


@contextlib.contextmanager
def memoized_sides() -> Iterator[None]:
    """`_hybrid`'s lexical side, dense side and neighbour lookup answered from a cache for
    the duration: every setting of one pool sees exactly the same candidates, computed
    once (they do not depend on the fusion constants; rows are copied, never shared)."""
    names = ("_lexical", "_dense_side", "_neighbours")
    saved = {n: getattr(hybrid_mod, n) for n in names}
    lexical: dict[tuple[Any, ...], Any] = {}
    dense: dict[tuple[Any, ...], Any] = {}
    near: dict[tuple[int, int], tuple[int, ...]] = {}

    def lexical_side(store: Any, parsed: Any, pool: int, filters: dict[str, Any]) -> Any:
        key = (id(store), parsed.text, parsed.fold, pool, repr(sorted(filters.items())))
        if key not in lexical:
            lexical[key] = saved["_lexical"](store, parsed, pool, filters)
        first, second, sources, needles = lexical[key]
        return [dict(r) for r in first], [dict(r) for r in second], dict(sources), list(needles)

    def dense_side(
        index: Any, query: str, count: int, filters: dict[str, Any], started: Any = None
    ) -> Any:
        key = (id(index), query, count, repr(sorted(filters.items())))
        if key not in dense:
            dense[key] = saved["_dense_side"](index, query, count, filters, started)
        else:  # the embeddings discover started are waited for (its thread is free again)
            tiers = getattr(index, "tiers", None) or (index,)
            for one, future in zip(tiers, started or (False,) * len(tiers), strict=True):
                if future is not False:
                    one.query_result(future)
        vector, hits = dense[key]
        return vector, [type(h)(dict(h.row), h.score) for h in hits]

    def neighbours(store: Any, ids: list[int]) -> dict[int, tuple[int, ...]]:
        missing = [i for i in ids if (id(store), i) not in near]
        if missing:
            found = saved["_neighbours"](store, missing)
            for i in missing:
                near[(id(store), i)] = tuple(found.get(i, ()))
        return {i: near[(id(store), i)] for i in ids}

    hybrid_mod._lexical = lexical_side  # type: ignore[assignment]
    hybrid_mod._dense_side = dense_side
    hybrid_mod._neighbours = neighbours  # type: ignore[assignment]
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
    #: The lexical policy with its fallback searched by stem prefixes (`folded`), as the
    #: hybrid's lexical side does (the lexical-only path does not).
    lexical_folded: list[Answer] = field(default_factory=list)


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
                table.lexical.append(_answer(conv, q, ranked))
                ranked = archive.tool_policy(folded(parse_query(q.text)), 10)
                table.lexical_folded.append(_answer(conv, q, ranked))
            with memoized_sides():
                _ask_all(archive, conv, settings, table)
        finally:
            archive.close()
    return table


def _answer(conv: Any, q: Any, ranked: Sequence[str]) -> Answer:
    """Question ``q`` of ``conv`` answered by ``ranked`` (dialog ids, best first)."""
    return Answer(
        conv.sample_id, q.category, _recall(q.gold, ranked, 5), _recall(q.gold, ranked, 10)
    )


def _ask_all(archive: Any, conv: Any, settings: Sequence[Setting], table: Table) -> None:
    """Every question of ``conv`` under every setting (sides memoized by the caller)."""
    for setting in settings:
        with applied(setting):
            for q in conv.questions:
                table.answers[setting].append(_answer(conv, q, archive.hybrid(q.text, 10)))


def save(table: Table, path: Path) -> None:
    """``table`` as JSON (one conversation's run can be merged with others by `load`)."""
    data = {
        "lexical": [list(astuple(a)) for a in table.lexical],
        "lexical_folded": [list(astuple(a)) for a in table.lexical_folded],
        "answers": [
            [list(astuple(s)), [list(astuple(a)) for a in answers]]
            for s, answers in table.answers.items()
        ],
    }
    path.write_text(json.dumps(data), encoding="utf-8")


def load(paths: Sequence[Path]) -> Table:
    """The tables of `save` merged (settings every file has; answers in file order)."""
    tables = []
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        table = Table(
            lexical=[Answer(*a) for a in data["lexical"]],
            lexical_folded=[Answer(*a) for a in data.get("lexical_folded", [])],
        )
        for fields, answers in data["answers"]:
            table.answers[Setting(*fields)] = [Answer(*a) for a in answers]
        tables.append(table)
    common = [s for s in tables[0].answers if all(s in t.answers for t in tables)]
    merged = Table(
        lexical=[a for t in tables for a in t.lexical],
        lexical_folded=[a for t in tables for a in t.lexical_folded],
    )
    for s in common:
        merged.answers[s] = [a for t in tables for a in t.answers[s]]
    return merged


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
    if table.lexical_folded:
        plain = _mean(table.lexical_folded)
        print(f"  {'lexical policy, suffix folding':<34}{plain[0]:8.1f}{plain[1]:8.1f}")
    fixed = [shipped(), PREVIOUS, *(s for s in table.answers if s.fusion == "rrf")]
    fixed += [BEFORE_FOLDING] if BEFORE_FOLDING in table.answers else []
    for s in dict.fromkeys(fixed):
        r5, r10 = _mean(table.answers[s])
        tags = {shipped(): " (shipped)", PREVIOUS: " (previous)", BEFORE_FOLDING: " (3a10e23)"}
        tag = tags.get(s, "")
        print(f"  {s.label + tag:<58}{r5:8.1f}{r10:8.1f}")
    print("\nBy category, R@5 / R@10:")
    print(f"  held (CV):   {_by_category(pooled)}")
    print(f"  dev setting: {_by_category(table.answers[dev])}")
    print(f"  shipped:     {_by_category(table.answers[shipped()])}")
    print(f"  lexical:     {_by_category(table.lexical)}")
    if table.lexical_folded:
        print(f"  lexical, folding: {_by_category(table.lexical_folded)}")
    ranked = sorted(table.answers, key=lambda s: -_objective(table.answers[s]))
    print(f"\nBest {TOP_SHOWN} of {len(ranked)} settings on all conversations (dev), R@5 / R@10:")
    for s in ranked[:TOP_SHOWN]:
        r5, r10 = _mean(table.answers[s])
        print(f"  {s.label:<58}{r5:8.1f}{r10:8.1f}")
    print("\nEach new element alone (dev, best setting with only that element switched on):")
    for name, keep in _ABLATIONS.items():
        subset = [s for s in ranked if s.fusion == "weighted" and keep(s)]
        if subset:
            r5, r10 = _mean(table.answers[subset[0]])
            print(f"  {name:<24}{subset[0].label:<58}{r5:8.1f}{r10:8.1f}")
        held = leave_one_out(_restricted(table, subset), names) if subset else []
        if held:
            h5, h10 = _mean([a for f in held for a in f.answers])
            print(f"  {'':<24}{'held (CV over this subset), pooled':<58}{h5:8.1f}{h10:8.1f}")


#: Settings shown in the dev ranking.
TOP_SHOWN = 25
#: Subsets of the grid: none of the new elements, and each alone.
_ABLATIONS: dict[str, Callable[[Setting], bool]] = {
    "none (weights, pools)": lambda s: (
        s.norm == "minmax" and not s.support and not s.diversity and not s.fold
    ),
    "background norm only": lambda s: (
        s.norm == "background" and not s.support and not s.diversity and not s.fold
    ),
    "session support only": lambda s: (
        s.norm == "minmax" and s.support > 0 and not s.diversity and not s.fold
    ),
    "support + suffix folding": lambda s: (
        s.norm == "minmax" and s.support > 0 and not s.diversity and s.fold
    ),
    "diversity only": lambda s: (
        s.norm == "minmax" and not s.support and s.diversity > 0 and not s.fold
    ),
    "distribution norm only": lambda s: (
        s.norm == "distribution" and not s.support and not s.diversity and not s.fold
    ),
}


def _restricted(table: Table, settings: Sequence[Setting]) -> Table:
    """``table`` with only ``settings`` (the CV of a subset of the grid)."""
    out = Table(lexical=table.lexical)
    for s in settings:
        out.answers[s] = table.answers[s]
    return out
