"""The cross-validation of ``bench_locomo.py --cv`` never chooses a fold's setting on the
conversation it reports (benchmarks/_locomo_cv.py, loaded from the repository)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from sessions_helpers import WordsEmbedder

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cv() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "locomo_cv_under_test", ROOT / "benchmarks/_locomo_cv.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_each_fold_is_chosen_on_the_other_conversations(cv: ModuleType) -> None:
    a = cv.Setting("weighted", 0.3, 50, 0.5)
    b = cv.Setting("weighted", 0.7, 50, 0.5)
    table = cv.Table()
    # a is perfect on c1 only; b is better on c2 and c3.
    for conv, ra, rb in (("c1", 1.0, 0.0), ("c2", 0.2, 0.6), ("c3", 0.2, 0.6)):
        table.answers[a].append(cv.Answer(conv, 4, ra, ra))
        table.answers[b].append(cv.Answer(conv, 4, rb, rb))
    folds = {f.held: f for f in cv.leave_one_out(table, ["c1", "c2", "c3"])}
    # Held c1: chosen on c2 + c3 -> b, which scores 0 on c1 (the optimistic a is not seen).
    assert folds["c1"].setting == b and folds["c1"].answers[0].r5 == 0.0
    # Held c2: chosen on c1 + c3 -> a (1.2 vs 0.6), scored on c2.
    assert folds["c2"].setting == a and folds["c2"].answers[0].r5 == 0.2
    # On all three conversations (the dev choice) a wins: 1.4 vs 1.2.
    assert cv.choose(table, {"c1", "c2", "c3"}) == a


def test_the_grid_holds_the_shipped_setting_and_plain_rrf(cv: ModuleType) -> None:
    grid = cv.grid()
    assert cv.shipped() in grid
    assert any(s.fusion == "rrf" for s in grid)


def test_memoized_sides_rank_exactly_as_the_live_search(cv: ModuleType, tmp_path: Path) -> None:
    pytest.importorskip("numpy")
    from hermes_memory_sessions.search._hybrid import discover
    from hermes_memory_sessions.storage import SessionStore

    store = SessionStore(tmp_path / "a.db", embedder=WordsEmbedder(32), embed_in_background=False)
    try:
        for s in range(6):
            store.create_session(f"s{s}", source="cli", started_at=1_700_000_000 + s * 3600)
            for t in range(8):
                store.append_message(
                    f"s{s}",
                    "user" if t % 2 == 0 else "assistant",
                    f"turn {t} of session {s} about garden roses {s * t} and painting",
                    timestamp=1_700_000_000 + s * 3600 + t,
                )
        store.embed_pending()
        setting = cv.Setting("weighted", 0.5, 50, 0.5, "background", 0.5, 0.15)
        queries = ["garden roses painting", "what about painting in session 3?", "turn 5"]

        def ranked() -> list[list[int]]:
            out = []
            for q in queries:
                found = discover(store, q, limit=10, role_filter=["user", "assistant"])
                out.append([int(r["id"]) for r in found.rows] if found else [])
            return out

        with cv.applied(setting):
            live = ranked()
            with cv.memoized_sides():
                first, again = ranked(), ranked()
        assert live == first == again
        assert any(live)
    finally:
        store.close()


def test_memoized_sides_follow_the_suffix_folding(cv: ModuleType, tmp_path: Path) -> None:
    # The lexical side differs with folding ("paint" finds "painting" only then): the
    # memo must not answer a folded question with the unfolded candidates.
    pytest.importorskip("numpy")
    from hermes_memory_sessions.search._hybrid import discover
    from hermes_memory_sessions.storage import SessionStore

    store = SessionStore(tmp_path / "a.db", embedder=WordsEmbedder(32), embed_in_background=False)
    try:
        for s in range(4):
            store.create_session(f"s{s}", source="cli", started_at=1_700_000_000 + s * 3600)
            for t, text in enumerate(["we went to the lake", f"painting number {s}", "nice"]):
                store.append_message(f"s{s}", "user", text, timestamp=1_700_000_000 + s * 3600 + t)
        store.embed_pending()
        query = "did we paint anything after the lake?"
        plain = cv.Setting("weighted", 0.5, 50, 0.3, "minmax", 0.5, 0.0, 3, False)
        folded = cv.Setting("weighted", 0.5, 50, 0.3, "minmax", 0.5, 0.0, 3, True)

        def matches() -> list[str]:
            found = discover(store, query, limit=10)
            return [str(r["match"]) for r in found.rows] if found else []

        live = {}
        for setting in (plain, folded):
            with cv.applied(setting):
                live[setting] = matches()
        assert live[plain] != live[folded]
        with cv.memoized_sides():
            for setting in (plain, folded, plain):
                with cv.applied(setting):
                    assert matches() == live[setting]
    finally:
        store.close()
