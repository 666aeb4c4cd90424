"""Lineage titles: numbered continuations, titles moving to the heir, provenance ranks."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from hermes_memory_sessions import SessionArchiveProvider, SessionStore


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "archive.db")


def _compressed_chain(store: SessionStore, title: str, length: int) -> list[str]:
    ids = [f"s{i}" for i in range(length)]
    store.create_session(ids[0], title=title)
    for parent, child in itertools.pairwise(ids):
        store.end_session(parent, "compression")
        store.create_session(child, parent_session_id=parent)
    return ids


def test_next_title_in_lineage_counts_the_unnumbered_title_as_one(store: SessionStore) -> None:
    assert store.get_next_title_in_lineage("my project") == "my project"
    store.create_session("a", title="my project")
    assert store.get_next_title_in_lineage("my project") == "my project #2"
    store.create_session("b", title="my project #2")
    store.create_session("c", title="my project #7")
    assert store.get_next_title_in_lineage("my project") == "my project #8"
    assert store.get_next_title_in_lineage("my project #2") == "my project #8"
    # LIKE wildcards in the base match themselves only
    store.create_session("d", title="100%_done")
    assert store.get_next_title_in_lineage("100%") == "100%"
    assert store.get_next_title_in_lineage("100%_done") == "100%_done #2"


def test_compression_continuations_get_numbered_titles(store: SessionStore) -> None:
    ids = _compressed_chain(store, "数据库迁移", 3)
    titles = [store.get_session(i)["title"] for i in ids]
    assert titles == ["数据库迁移", "数据库迁移 #2", "数据库迁移 #3"]


def test_branch_and_reset_children_get_no_inherited_title(store: SessionStore) -> None:
    store.create_session("p", title="release plan")
    store.end_session("p", "branched")
    store.create_session("b", parent_session_id="p")
    store.create_session("q", title="other")
    store.end_session("q", "session_reset")
    store.create_session("r", parent_session_id="q")
    assert store.get_session("b")["title"] is None
    assert store.get_session("r")["title"] is None


def test_a_title_held_by_a_compression_ancestor_moves_to_the_continuation(
    store: SessionStore,
) -> None:
    root, child, grandchild = _compressed_chain(store, "deploy notes", 3)
    assert store.set_title(grandchild, "deploy notes") == "deploy notes"
    assert store.get_session(root)["title"] is None
    assert store.get_session(grandchild)["title"] == "deploy notes"
    assert store.get_session(child)["title"] == "deploy notes #2"


def test_a_title_of_another_conversation_is_refused(store: SessionStore) -> None:
    store.create_session("x", title="shared name")
    store.create_session("y")
    with pytest.raises(ValueError, match="already in use by session x"):
        store.set_title("y", "shared name")
    # a branch child is not an heir either
    store.end_session("x", "branched")
    store.create_session("z", parent_session_id="x")
    with pytest.raises(ValueError, match="already in use"):
        store.set_title("z", "shared name")


def test_automatic_titles_never_overwrite_a_users(store: SessionStore) -> None:
    store.create_session("s")
    assert store.set_title("s", "first guess", source="derived") == "first guess"
    assert store.set_title("s", "better guess", source="llm") == "better guess"
    assert store.set_title("s", "worse guess", source="derived") == "better guess"
    assert store.set_title("s", "again", source="llm") == "better guess"  # llm once
    assert store.set_title("s", "Mine", source="user") == "Mine"
    assert store.set_title("s", "robot", source="llm") == "Mine"
    assert store.get_session("s")["title_source"] == "user"
    store.create_session("t", title="typed at creation")
    assert store.set_title("t", "robot", source="derived") == "typed at creation"
    with pytest.raises(ValueError, match="title source"):
        store.set_title("t", "x", source="model")


def test_legacy_titles_without_provenance_count_as_the_users(store: SessionStore) -> None:
    store.create_session("old")
    store.conn.execute("UPDATE sessions SET title = 'imported', title_source = NULL")
    store.conn.commit()
    assert store.set_title("old", "robot", source="llm") == "imported"


def test_the_provider_numbers_a_compression_continuation(tmp_path: Path) -> None:
    provider = SessionArchiveProvider(hermes_home=tmp_path)
    provider.initialize("one", hermes_home=str(tmp_path))
    provider.sync_turn("hello", "hi")
    provider.store.set_title("one", "kubernetes rollout")
    provider.on_session_switch("two", parent_session_id="one")
    provider.sync_turn("more", "ok")
    provider.on_session_switch("three", parent_session_id="two", end_reason="branched")
    store = provider.store
    assert store.get_session("one")["end_reason"] == "compression"
    assert store.get_session("two")["title"] == "kubernetes rollout #2"
    assert store.get_session("two")["title_source"] == "user"  # provenance carried
    assert store.get_session("two")["end_reason"] == "branched"
    assert store.get_session("three")["title"] is None
    provider.shutdown()
