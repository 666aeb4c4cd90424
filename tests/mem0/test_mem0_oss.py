"""OSS mode end to end with the real ``mem0.Memory`` (mem0ai 2.2.1), fully offline.

Real pieces: ``Memory.from_config``, the local on-disk qdrant store in the test's home, mem0's
SQLite history, its extraction pipeline, hashing and search. Replaced: the embedding model (a
deterministic hashing embedder) and the LLM (a scripted extractor), both plugged in through
mem0's own factories (`mem0_oss_fakes`). Any non-loopback connection attempt fails the test.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mem0_oss_fakes import ScriptedLLM, oss_section, register

from hermes_memory_core.health import read_provider_status


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Refuse every connection that does not go to the loopback interface."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> None:
        host = address[0] if isinstance(address, tuple) else ""
        if self.family in (socket.AF_INET, socket.AF_INET6) and host not in (
            "127.0.0.1",
            "::1",
            "localhost",
        ):
            raise AssertionError(f"network access attempted: {address!r}")
        real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    undo = register()
    ScriptedLLM.script = {}
    ScriptedLLM.calls = []
    yield
    undo()


def _oss(make_provider, **extra):
    # In-process mem0 (qdrant, history SQLite, the scripted LLM) is slow on a busy machine;
    # these tests check what is stored, so calls get room instead of the loopback bounds.
    room = {"timeout": 60.0, "flush_timeout": 180.0, "shutdown_timeout": 60.0}
    return make_provider(None, mode="oss", oss=oss_section(), **{**room, **extra})


def test_tools_round_trip_with_the_real_memory(make_provider, home: Path):
    """Real mem0.Memory + local qdrant: add (verbatim), search, update, delete, not-found."""
    provider = _oss(make_provider)
    stored = json.loads(
        provider.handle_tool_call("mem0_add", {"content": "User prefers green tea"})
    )
    assert stored["result"] == "Fact stored."
    (memory_id,) = stored["memory_ids"]
    assert ScriptedLLM.calls == []  # infer=False never calls the LLM

    found = json.loads(provider.handle_tool_call("mem0_search", {"query": "green tea"}))
    assert found["results"][0] == {
        "id": memory_id,
        "memory": "User prefers green tea",
        "score": found["results"][0]["score"],
    }
    assert (
        json.loads(
            provider.handle_tool_call(
                "mem0_update", {"memory_id": memory_id, "text": "User prefers jasmine tea"}
            )
        )["result"]
        == "Memory updated."
    )
    found = json.loads(provider.handle_tool_call("mem0_search", {"query": "jasmine tea"}))
    assert found["results"][0]["memory"] == "User prefers jasmine tea"

    assert (
        json.loads(provider.handle_tool_call("mem0_delete", {"memory_id": memory_id}))["result"]
        == "Memory deleted."
    )
    assert json.loads(provider.handle_tool_call("mem0_delete", {"memory_id": memory_id})) == {
        "error": f"Memory not found: {memory_id}"
    }
    other = "11111111-1111-1111-1111-111111111111"
    assert json.loads(
        provider.handle_tool_call("mem0_update", {"memory_id": other, "text": "x"})
    ) == {"error": f"Memory not found: {other}"}
    # data lives under the home directory
    assert (home / "mem0" / "qdrant").is_dir()
    assert (home / "mem0" / "history.db").is_file()
    assert read_provider_status(home, "mem0")["state"] == "ok"
    assert provider.backup_paths() == []


def test_synced_turns_are_extracted_by_the_llm_and_recalled(make_provider):
    """Real mem0.Memory: sync_turn (infer=True) goes through the scripted LLM; prefetch recalls."""
    ScriptedLLM.script = {
        "always use dark mode": ["User prefers dark mode"],
        "東京に住んでいます": ["ユーザーは東京に住んでいる"],
    }
    provider = _oss(make_provider)
    provider.sync_turn("Please always use dark mode.", "Sure, dark mode it is.", session_id="s1")
    provider.sync_turn("東京に住んでいます。", "了解しました。", session_id="s1")
    provider.sync_turn("What's the weather?", "Sunny.", session_id="s1")
    provider.on_session_end([])
    assert len(ScriptedLLM.calls) == 3

    recall = provider.prefetch("dark mode settings", session_id="s1")
    assert "- User prefers dark mode" in recall.splitlines()
    recall = provider.prefetch("どこに住んでいますか 東京", session_id="s1")
    assert "- ユーザーは東京に住んでいる" in recall.splitlines()
    assert provider.recall_status().count >= 1


def test_memories_survive_a_restart(make_provider):
    """Real mem0.Memory: shutdown releases qdrant's lock; a new provider reads the same store."""
    first = _oss(make_provider)
    first.handle_tool_call("mem0_add", {"content": "User's cat is called Miso"})
    first.shutdown()
    second = _oss(make_provider)
    found = json.loads(second.handle_tool_call("mem0_search", {"query": "cat Miso"}))
    assert found["results"][0]["memory"] == "User's cat is called Miso"


def test_mirrored_builtin_writes_in_oss_mode(make_provider):
    """Real mem0.Memory: builtin add/replace/remove are mirrored to the local store."""
    provider = _oss(make_provider)
    provider.on_memory_write("add", "user", "Works as a nurse")
    provider.on_session_end([])
    hits = provider._conn.call(
        "t", lambda b: b.search("nurse", user_id="u1", top_k=5, rerank=False), wait=5
    )
    assert [h["memory"] for h in hits] == ["Works as a nurse"]
    provider.on_memory_write(
        "replace", "user", "Works as a doctor", {"previous_content": "Works as a nurse"}
    )
    provider.on_session_end([])
    hits = provider._conn.call(
        "t", lambda b: b.search("works", user_id="u1", top_k=5, rerank=False), wait=5
    )
    assert [h["memory"] for h in hits] == ["Works as a doctor"]
    provider.on_memory_write("remove", "user", "Works as a doctor")
    provider.on_session_end([])
    hits = provider._conn.call(
        "t", lambda b: b.search("works", user_id="u1", top_k=5, rerank=False), wait=5
    )
    assert hits == []


def test_initialize_returns_before_the_store_is_open(make_provider):
    """Real mem0.Memory: import + store opening happen on the connect thread, not in initialize."""
    started = time.monotonic()
    provider = _oss(make_provider)
    assert time.monotonic() - started < 0.5
    assert json.loads(provider.handle_tool_call("mem0_search", {"query": "anything"}))["count"] == 0


def test_broken_oss_config_is_reported(make_provider, home):
    """Real mem0.Memory.from_config rejecting an unknown LLM: status + tool error, no exception."""
    provider = make_provider(
        None, mode="oss", oss={**oss_section(), "llm": {"provider": "no-such-llm"}}
    )
    result = json.loads(provider.handle_tool_call("mem0_search", {"query": "x"}))
    assert "could not start (oss mode)" in result["error"]
    status = read_provider_status(home, "mem0")
    assert status["state"] == "degraded"
    assert "no-such-llm" in status["detail"]


def test_offline_keyword_model_never_stalls_a_call(make_provider, home: Path, monkeypatch, caplog):
    """fastembed installed, its BM25 model not cached, no network: mem0 would download it
    inside the first call and sleep 3 + 9 + 27 s between retries. The adapter loads the
    model from the cache only, so no retry sleep happens and one warning says why."""
    pytest.importorskip("fastembed")
    from fastembed.common import model_management

    def no_retry_sleep(seconds: float) -> None:
        raise AssertionError(f"fastembed slept {seconds} s before retrying a download")

    monkeypatch.setattr(model_management.time, "sleep", no_retry_sleep)
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(home / "empty-fastembed-cache"))
    provider = _oss(make_provider)
    stored = json.loads(provider.handle_tool_call("mem0_add", {"content": "User likes rye"}))
    assert stored["result"] == "Fact stored."
    found = json.loads(provider.handle_tool_call("mem0_search", {"query": "rye"}))
    assert found["results"][0]["memory"] == "User likes rye"
    assert "keyword (BM25) search is off" in caplog.text
