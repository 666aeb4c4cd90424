"""Compression lineage, resume and undo on every archive backend (SQLite always, PostgreSQL
when a server is reachable), through the real manager and ``sessions`` provider."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hermes_memory_context import ContextCompressor, estimate_tokens, is_summary_message
from hermes_memory_core import MemoryManager
from hermes_memory_sessions import (
    SessionArchiveProvider,
    SessionNotFoundError,
    load_conversation,
    undo,
)
from hermes_memory_sessions.tool import session_search

SYSTEM = {"role": "system", "content": "You are a careful assistant."}


def exchange(i: int, *, tool: bool = False) -> list[dict[str, Any]]:
    """One user turn: question, optionally a tool call and its result, answer."""
    turn: list[dict[str, Any]] = [
        {"role": "user", "content": f"question {i} about the backup plan 备份计划 " * 3}
    ]
    if tool:
        call = {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "lookup", "arguments": json.dumps({"n": i})},
        }
        turn.append({"role": "assistant", "content": None, "tool_calls": [call]})
        turn.append({"role": "tool", "tool_call_id": f"call_{i}", "content": f"row {i}"})
    turn.append({"role": "assistant", "content": f"answer {i}: keep seven daily dumps " * 3})
    return turn


def shape(messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What must survive the archive: role, content, the calls' ids and the result's id."""
    return [
        (
            m["role"],
            m.get("content"),
            tuple(c["id"] for c in m.get("tool_calls") or []),
            m.get("tool_call_id"),
        )
        for m in messages
        if m["role"] != "system"
    ]


class Chat:
    """A conversation recorded through a manager into ``archive``."""

    def __init__(self, archive: Any, session_id: str) -> None:
        self.archive = archive
        self.manager = MemoryManager()
        self.manager.add_provider(SessionArchiveProvider(archive))
        self.manager.initialize_all(session_id)
        self.messages: list[dict[str, Any]] = [SYSTEM]
        self.turn = 0
        self.summaries = 0

    def summarize(self, messages: list[dict[str, Any]], tools: list[Any]) -> dict[str, Any]:
        self.summaries += 1
        return {"role": "assistant", "content": f"Summary {self.summaries}: seven daily dumps."}

    def talk(self, turns: int) -> None:
        for _ in range(turns):
            turn = exchange(self.turn, tool=self.turn % 3 == 0)
            self.turn += 1
            self.messages += turn
            self.manager.sync_all(turn[0]["content"], turn[-1]["content"], messages=turn)

    def close(self) -> None:
        self.manager.shutdown_all()


@pytest.fixture
def chat(archive: Any) -> Any:
    c = Chat(archive, "20261201_090000_aaaaaa")
    yield c
    c.close()


def test_compression_continues_the_lineage_and_resume_finds_the_tip(archive, chat) -> None:
    compressor = ContextCompressor(
        context_window=2000,
        protect_last_n=6,
        summarize=chat.summarize,
        count_tokens=estimate_tokens,
    )
    root = "20261201_090000_aaaaaa"
    chat.talk(12)
    archive.set_title(root, "Backup plan")
    first = compressor.compress(chat.messages, manager=chat.manager)
    assert first.error == "" and first.compressed > 0
    child = first.session_id
    assert child and child != root and chat.manager.session_id == child
    chat.messages = first.messages
    chat.talk(12)
    second = compressor.compress(chat.messages, manager=chat.manager)
    assert second.error == "" and second.compressed > 0
    tip = second.session_id
    assert tip and tip not in (root, child)

    rows = {sid: archive.get_session(sid) for sid in (root, child, tip)}
    assert rows[root]["end_reason"] == "compression"
    assert rows[child]["end_reason"] == "compression"
    assert rows[tip]["ended_at"] is None
    assert rows[child]["parent_session_id"] == root
    assert rows[tip]["parent_session_id"] == child
    assert [rows[s]["title"] for s in (root, child, tip)] == [
        "Backup plan",
        "Backup plan #2",
        "Backup plan #3",
    ]
    assert archive.compression_tip(root) == tip
    assert archive.lineage_root(tip) == root

    # resume: the tip's messages are exactly what the model saw after the compression
    conv = load_conversation(archive, root)
    assert conv.session_id == tip and conv.root_session_id == root
    assert conv.title == "Backup plan #3"
    assert is_summary_message(conv[0]) and conv[0]["content"].endswith(
        "Summary 2: seven daily dumps."
    )
    assert shape(conv) == shape(second.messages)
    for by in ({"title": "Backup plan"}, {"latest": True}):
        assert load_conversation(archive, **by).session_id == tip
    assert load_conversation(archive, root[:12]).session_id == tip

    # browse shows the chain once, at its tip, with a real preview (never the summary)
    browse = json.loads(session_search({}, store=archive))
    assert [r["session_id"] for r in browse["results"]] == [tip]
    assert browse["results"][0]["preview"].startswith("question ")
    # discovery keeps one hit per conversation
    found = json.loads(session_search({"query": "seven daily dumps"}, store=archive))
    assert found["count"] == 1


def test_resume_by_id_prefix_title_and_latest(archive) -> None:
    for n, (sid, source, title) in enumerate(
        [
            ("20261201_080000_aaaaaa", "cli", "Trip to Kyoto"),
            ("20261201_090000_bbbbbb", "telegram", None),
            ("20261201_090000_bbbbcc", "cli", None),
            ("20261201_100000_dddddd", "cli", None),  # newest, but empty
        ]
    ):
        archive.create_session(sid, source=source, title=title, started_at=1_700_000_000 + n)
        if n < 3:
            archive.append_message(sid, "user", f"hello {n} 你好", timestamp=1_700_000_000 + n)
            archive.append_message(
                sid,
                "assistant",
                None,
                tool_calls=[{"id": "c1", "function": {"name": "f", "arguments": {"city": "京都"}}}],
                timestamp=1_700_000_000 + n,
            )
            archive.append_message(
                sid, "tool", "sunny", tool_name="f", tool_call_id="c1", timestamp=1_700_000_000 + n
            )
    conv = load_conversation(archive, "20261201_080000_aaaaaa")
    assert conv.session_id == "20261201_080000_aaaaaa" and conv.title == "Trip to Kyoto"
    assert conv == [
        {"role": "user", "content": "hello 0 你好"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "f", "arguments": '{"city": "京都"}'},
                }
            ],
        },
        {"role": "tool", "content": "sunny", "tool_call_id": "c1", "name": "f"},
    ]
    assert load_conversation(archive, "20261201_08").session_id == "20261201_080000_aaaaaa"
    assert load_conversation(archive, title="Trip to Kyoto").session_id == "20261201_080000_aaaaaa"
    assert load_conversation(archive, latest=True).session_id == "20261201_090000_bbbbcc"
    latest_tg = load_conversation(archive, latest=True, source="telegram")
    assert latest_tg.session_id == "20261201_090000_bbbbbb"
    with pytest.raises(SessionNotFoundError, match="ambiguous"):
        load_conversation(archive, "20261201_090000_bbbb")
    with pytest.raises(SessionNotFoundError, match="no session matches"):
        load_conversation(archive, "nope")
    with pytest.raises(SessionNotFoundError, match="titled"):
        load_conversation(archive, title="Trip to Osaka")
    with pytest.raises(SessionNotFoundError, match="with messages"):
        load_conversation(archive, latest=True, source="discord")
    with pytest.raises(SessionNotFoundError, match="not 'telegram'"):
        load_conversation(archive, "20261201_080000_aaaaaa", source="telegram")
    with pytest.raises(ValueError, match="exactly one"):
        load_conversation(archive)
    with pytest.raises(ValueError, match="exactly one"):
        load_conversation(archive, "x", latest=True)


def test_undo_takes_back_whole_exchanges(archive) -> None:
    sid = "20261201_090000_aaaaaa"
    archive.create_session(sid)
    for i in range(4):
        for m in exchange(i, tool=i == 3):
            archive.append_messages(sid, [m])
    archive.set_title(sid, "Undo me")
    before = archive.get_session(sid)
    assert before["message_count"] == 4 * 2 + 2 and before["tool_call_count"] == 1

    result = undo(archive, sid[:10])
    assert (result.session_id, result.exchanges, result.messages) == (sid, 1, 4)
    assert result.user_messages == [exchange(3)[0]["content"]]
    after = archive.get_session(sid)
    assert after["message_count"] == 6 and after["tool_call_count"] == 0
    assert after["rewind_count"] == before["rewind_count"] + 1
    conv = load_conversation(archive, sid)
    assert shape(conv) == shape([m for i in range(3) for m in exchange(i)])
    # undone rows stay in the archive, out of search and resume
    assert len(archive.get_messages(sid)) == 10
    assert archive.find_hits("question 3") is None
    assert archive.find_hits("question 2") is not None

    result = undo(archive, sid, 5)
    assert (result.exchanges, result.messages) == (3, 6)
    assert load_conversation(archive, sid) == []
    assert undo(archive, sid).exchanges == 0
    # the browse preview never shows an undone message
    browse = json.loads(session_search({}, store=archive))
    assert browse["results"][0]["preview"] == ""

    with pytest.raises(ValueError):
        undo(archive, sid, 0)
    with pytest.raises(SessionNotFoundError):
        undo(archive, "missing")


def test_undo_after_compression_works_on_the_tip_and_keeps_the_summary(archive, chat) -> None:
    compressor = ContextCompressor(
        context_window=2000,
        protect_last_n=4,
        summarize=chat.summarize,
        count_tokens=estimate_tokens,
    )
    chat.talk(10)
    result = compressor.compress(chat.messages, manager=chat.manager)
    assert result.session_id
    chat.messages = result.messages
    chat.talk(1)
    undone = undo(archive, "20261201_090000_aaaaaa", 50)
    assert undone.session_id == result.session_id
    conv = load_conversation(archive, result.session_id)
    assert len(conv) == 1 and is_summary_message(conv[0])


def test_the_sessions_package_recognises_our_summaries() -> None:
    from hermes_memory_context import SUMMARY_PREFIX
    from hermes_memory_sessions.storage._message_rows import SUMMARY_PREFIXES

    assert SUMMARY_PREFIX.startswith(SUMMARY_PREFIXES)


def test_a_closed_manager_still_compresses_without_touching_the_archive(archive) -> None:
    manager = MemoryManager()
    manager.add_provider(SessionArchiveProvider(archive))
    manager.initialize_all("20261201_090000_aaaaaa")
    manager.shutdown_all()
    messages = [SYSTEM, *(m for i in range(12) for m in exchange(i))]
    compressor = ContextCompressor(
        context_window=2000,
        protect_last_n=4,
        summarize=lambda m, t: {"content": "short"},
        count_tokens=estimate_tokens,
    )
    result = compressor.compress(messages, manager=manager)
    assert result.compressed > 0 and result.session_id is None
    assert "archive was not updated" in result.error
    assert archive.list_sessions() == []


def test_a_resumed_session_ended_at_exit_still_compresses_into_the_lineage(archive) -> None:
    first = Chat(archive, "20261201_090000_aaaaaa")
    first.talk(10)
    first.manager.on_session_end(first.messages)  # the host exits: end_reason session_end
    first.close()
    assert archive.get_session("20261201_090000_aaaaaa")["end_reason"] == "session_end"

    conv = load_conversation(archive, latest=True)
    assert archive.reopen_session(conv.session_id) is True
    assert archive.get_session(conv.session_id)["ended_at"] is None
    assert archive.reopen_session(conv.session_id) is False
    archive.end_session(conv.session_id, "session_end")  # even without the host's reopen:
    again = Chat(archive, conv.session_id)
    try:
        again.messages = [SYSTEM, *conv]
        again.talk(4)
        compressor = ContextCompressor(
            context_window=2000,
            protect_last_n=4,
            summarize=again.summarize,
            count_tokens=estimate_tokens,
        )
        result = compressor.compress(again.messages, manager=again.manager)
    finally:
        again.close()
    assert result.session_id
    assert archive.get_session(conv.session_id)["end_reason"] == "compression"
    assert archive.compression_tip(conv.session_id) == result.session_id
