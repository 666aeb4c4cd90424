"""The review nudge and the background review, through `MemoryManager` with the real builtin
store and scripted model callables (no network, no LLM)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory_builtin import BuiltinMemoryProvider, MemoryStore, PendingStore
from hermes_memory_core import ConfigError, ManagerClosedError, MemoryManager
from hermes_memory_review import (
    REVIEW_PROMPT,
    ModelReply,
    NudgeCounter,
    ToolCall,
    parse_reply,
)

CONVERSATION = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": "我叫小林，我更喜欢用制表符缩进。"},
    {"role": "assistant", "content": "好的，记住了。"},
]


def make_manager(home: Path, **options: Any) -> MemoryManager:
    manager = MemoryManager(hermes_home=home, **options)
    assert manager.add_provider(BuiltinMemoryProvider(hermes_home=home))
    manager.initialize_all("s1")
    return manager


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def manager(home: Path) -> Iterator[MemoryManager]:
    m = make_manager(home, nudge_interval=3)
    yield m
    m.shutdown_all()


def store_of(home: Path) -> MemoryStore:
    store = MemoryStore(home / "memories")
    store.load_from_disk()
    return store


def seed(home: Path, target: str, *entries: str) -> None:
    store = store_of(home)
    for entry in entries:
        assert store.add(target, entry)["success"] is True


class Script:
    """A model that replies with scripted tool calls, then stops; records what it saw."""

    def __init__(self, *rounds: list[ToolCall]) -> None:
        self.rounds = list(rounds)
        self.seen: list[list[dict[str, Any]]] = []
        self.tools: list[dict[str, Any]] = []

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        self.seen.append(messages)
        self.tools = tools
        if self.rounds:
            return ModelReply("", self.rounds.pop(0))
        return ModelReply("Nothing to save.")


def memory_call(**args: Any) -> ToolCall:
    return ToolCall("memory", args)


def turns(manager: MemoryManager, count: int) -> None:
    for n in range(count):
        manager.on_turn_start(n + 1, f"message {n}")


# ---------------------------------------------------------------------- the nudge
def test_due_after_interval_turns(manager: MemoryManager) -> None:
    turns(manager, 2)
    assert manager.review_due is False
    turns(manager, 1)
    assert manager.review_due is True


def test_not_due_with_interval_zero(home: Path) -> None:
    m = make_manager(home, nudge_interval=0)
    try:
        turns(m, 50)
        assert m.review_due is False
    finally:
        m.shutdown_all()


def test_memory_call_resets_the_count(manager: MemoryManager) -> None:
    turns(manager, 2)
    manager.handle_tool_call("memory", {"action": "add", "target": "user", "content": "likes tea"})
    turns(manager, 2)
    assert manager.review_due is False
    turns(manager, 1)
    assert manager.review_due is True


def test_memory_call_clears_a_due_review(manager: MemoryManager) -> None:
    turns(manager, 3)
    assert manager.review_due
    # Even a failed call counts as the model using memory.
    manager.handle_tool_call("memory", {"action": "remove", "target": "user", "old_text": "x"})
    assert manager.review_due is False


def test_turns_not_counted_without_the_memory_tool(home: Path) -> None:
    m = MemoryManager(hermes_home=home, nudge_interval=1)
    try:
        turns(m, 5)
        assert m.review_due is False
    finally:
        m.shutdown_all()


def test_hydration_is_prior_turns_modulo_interval(home: Path) -> None:
    m = MemoryManager(hermes_home=home, nudge_interval=3)
    try:
        m.add_provider(BuiltinMemoryProvider(hermes_home=home))
        m.initialize_all("s1", prior_user_turns=7)  # 7 % 3 == 1 turn already counted
        turns(m, 1)
        assert m.review_due is False
        turns(m, 1)
        assert m.review_due is True
    finally:
        m.shutdown_all()


def test_hydration_on_session_switch_and_reset(manager: MemoryManager) -> None:
    manager.on_session_switch("s2", prior_user_turns=5)  # 5 % 3 == 2
    turns(manager, 1)
    assert manager.review_due is True
    manager.on_session_switch("s3", reset=True)
    turns(manager, 2)
    assert manager.review_due is False


def test_prior_user_turns_not_passed_to_providers(home: Path) -> None:
    seen: dict[str, Any] = {}

    class Recorder(BuiltinMemoryProvider):
        def initialize(self, session_id: str, **kwargs: Any) -> None:
            seen.update(kwargs)
            super().initialize(session_id, **kwargs)

    m = MemoryManager(hermes_home=home)
    try:
        m.add_provider(Recorder(hermes_home=home))
        m.initialize_all("s1", prior_user_turns=4)
        assert "prior_user_turns" not in seen
    finally:
        m.shutdown_all()


@pytest.mark.parametrize("bad", [-1, "3", 2.5, True])
def test_bad_counts_are_clear_errors(bad: Any) -> None:
    with pytest.raises(ValueError, match="prior_user_turns"):
        NudgeCounter(3).hydrate(bad)
    with pytest.raises(ValueError, match="nudge_interval"):
        NudgeCounter(bad)


def test_config_keys_reach_the_manager(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.yaml").write_text(
        "memory:\n  nudge_interval: 2\n  review_timeout: 30\n  review_max_turns: 3\n",
        encoding="utf-8",
    )
    m = MemoryManager.from_config(home)
    try:
        m.initialize_all("s1")
        turns(m, 2)
        assert m.review_due is True
        assert m.config is not None
        assert m.config.memory.review_timeout == 30.0
        assert m.config.memory.review_max_turns == 3
    finally:
        m.shutdown_all()


@pytest.mark.parametrize(
    ("line", "key"),
    [("review_timeout: soon", "review_timeout"), ("review_max_turns: 0", "review_max_turns")],
)
def test_bad_review_config_is_a_clear_error(home: Path, line: str, key: str) -> None:
    home.mkdir(parents=True)
    (home / "config.yaml").write_text(f"memory:\n  {line}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=f"memory.{key}"):
        MemoryManager.from_config(home)


# ---------------------------------------------------------------------- running a review
def test_review_saves_a_fact_with_background_origin(manager: MemoryManager, home: Path) -> None:
    turns(manager, 3)
    model = Script([memory_call(action="add", target="user", content="名字是小林，偏好制表符缩进")])
    handle = manager.run_review(model, CONVERSATION, background=False)
    result = handle.result
    assert result.status == "completed"
    assert len(result.saved) == 1
    assert manager.review_due is False
    store = store_of(home)
    assert store.entries("user") == ["名字是小林，偏好制表符缩进"]
    assert store.entry_metadata("user")[0]["origin"] == "background_review"
    # The model saw the conversation, then the review prompt; and only the memory tool.
    first = model.seen[0]
    assert first[:3] == CONVERSATION
    assert first[-1] == {"role": "user", "content": REVIEW_PROMPT}
    assert [t["function"]["name"] for t in model.tools] == ["memory"]
    # The second call saw the tool result under the call's id.
    second = model.seen[1]
    assert second[-2]["role"] == "assistant"
    assert second[-1]["role"] == "tool"
    assert second[-1]["tool_call_id"] == second[-2]["tool_calls"][0]["id"]
    assert json.loads(second[-1]["content"])["success"] is True


@pytest.mark.parametrize("action", ["remove", "replace"])
def test_review_remove_or_replace_is_staged(
    manager: MemoryManager, home: Path, action: str
) -> None:
    seed(home, "memory", "Project pins Node 18")
    args: dict[str, Any] = {"action": action, "target": "memory", "old_text": "Node 18"}
    if action == "replace":
        args["content"] = "Project pins Node 20"
    handle = manager.run_review(Script([memory_call(**args)]), CONVERSATION, background=False)
    outcome = handle.result.actions[0].outcome
    assert outcome["success"] is True and outcome["staged"] is True
    assert outcome["proposal_staged"] is True
    assert handle.result.staged == [outcome["pending_id"]]
    assert store_of(home).entries("memory") == ["Project pins Node 18"]
    (record,) = PendingStore(home / "memories").proposals()
    assert record["id"] == outcome["pending_id"]
    assert record["operations"][0]["matched_entry"] == "Project pins Node 18"


def test_review_batch_saves_adds_and_stages_the_rest(manager: MemoryManager, home: Path) -> None:
    seed(home, "memory", "Uses npm", "Deploys on Fridays")
    batch = memory_call(
        target="memory",
        operations=[
            {"action": "add", "content": "CI runs on GitHub Actions"},
            {"action": "remove", "old_text": "Fridays"},
            {"action": "replace", "old_text": "npm", "content": "Uses pnpm"},
        ],
    )
    handle = manager.run_review(Script([batch]), CONVERSATION, background=False)
    outcome = handle.result.actions[0].outcome
    assert outcome["staged"] is True and outcome["additions_saved"] == 1
    assert store_of(home).entries("memory") == [
        "Uses npm",
        "Deploys on Fridays",
        "CI runs on GitHub Actions",
    ]
    (record,) = PendingStore(home / "memories").proposals()
    assert [op["action"] for op in record["operations"]] == ["remove", "replace"]


def test_origin_cannot_be_set_through_tool_arguments(manager: MemoryManager, home: Path) -> None:
    seed(home, "memory", "alpha fact", "beta fact")
    # A review claiming another origin in its arguments is still gated.
    sneaky = memory_call(action="remove", target="memory", old_text="alpha", origin="cli")
    handle = manager.run_review(Script([sneaky]), CONVERSATION, background=False)
    assert handle.result.actions[0].outcome.get("staged") is True
    assert "alpha fact" in store_of(home).entries("memory")
    # A live call claiming to be the review is not gated (and not recorded as one).
    live = manager.handle_tool_call(
        "memory", {"action": "remove", "target": "memory", "old_text": "beta", "origin": "x"}
    )
    assert json.loads(live).get("staged") is None
    assert store_of(home).entries("memory") == ["alpha fact"]


def test_openai_message_and_response_shapes_are_accepted(manager: MemoryManager) -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_9",
                "type": "function",
                "function": {
                    "name": "memory",
                    "arguments": json.dumps({"action": "add", "target": "user", "content": "x1"}),
                },
            }
        ],
    }
    replies: list[Any] = [{"choices": [{"message": message}]}, {"content": "done"}]

    def model(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        return replies.pop(0)

    result = manager.run_review(model, CONVERSATION, background=False).result
    assert result.status == "completed" and result.reply == "done"
    assert len(result.saved) == 1
    assert parse_reply(message).tool_calls[0].id == "call_9"


@pytest.mark.parametrize(
    "reply", [None, "text", {"choices": []}, {"tool_calls": [{"function": {"arguments": "{}"}}]}]
)
def test_unusable_model_reply_fails_the_review(manager: MemoryManager, reply: Any) -> None:
    result = manager.run_review(lambda m, t: reply, CONVERSATION, background=False).result
    assert result.status == "failed" and result.error


def test_model_exception_fails_the_review(manager: MemoryManager) -> None:
    def broken(messages: Any, tools: Any) -> Any:
        raise ConnectionError("refused")

    result = manager.run_review(broken, CONVERSATION, background=False).result
    assert result.status == "failed" and "refused" in result.error


def test_other_tools_and_bad_arguments_answer_errors(manager: MemoryManager, home: Path) -> None:
    model = Script(
        [
            ToolCall("session_search", {"query": "x"}),
            ToolCall("memory", "{not json"),
            ToolCall("memory", "[1, 2]"),
        ]
    )
    result = manager.run_review(model, CONVERSATION, background=False).result
    assert result.status == "completed"
    assert [a.outcome["success"] for a in result.actions] == [False, False, False]
    assert "only the memory tool" in result.actions[0].outcome["error"]
    assert store_of(home).entries("memory") == []


def test_review_is_bounded_in_model_calls(home: Path) -> None:
    m = make_manager(home, review_max_turns=3)
    try:
        endless = Script(*[[memory_call(action="pending", target="user")] for _ in range(10)])
        result = m.run_review(endless, CONVERSATION, background=False).result
        assert result.status == "max_turns"
        assert result.turns == 3 and len(endless.seen) == 3
    finally:
        m.shutdown_all()


def test_review_is_bounded_in_time(home: Path) -> None:
    release = threading.Event()
    m = make_manager(home, review_timeout=0.2)
    try:

        def stuck(messages: Any, tools: Any) -> ModelReply:
            release.wait(30)
            return ModelReply("", [memory_call(action="add", target="user", content="late")])

        result = m.run_review(stuck, CONVERSATION, background=False).result
        assert result.status == "timeout"
        release.set()
        assert store_of(home).entries("user") == []
    finally:
        release.set()
        m.shutdown_all()


def test_next_turn_cancels_a_blocked_review(manager: MemoryManager, home: Path) -> None:
    entered = threading.Event()
    release = threading.Event()
    returned = threading.Event()

    def blocking(messages: Any, tools: Any) -> ModelReply:
        entered.set()
        release.wait(30)
        returned.set()
        return ModelReply("", [memory_call(action="add", target="user", content="too late")])

    handle = manager.run_review(blocking, CONVERSATION)
    assert entered.wait(10)
    manager.on_turn_start(4, "next question")  # must not wait for the model
    assert handle.cancelled
    assert handle.wait(10), "the review did not stop while its model call was blocked"
    assert not returned.is_set()
    assert handle.result.status == "cancelled"
    release.set()
    assert returned.wait(10)
    assert store_of(home).entries("user") == []
    assert handle.result.actions == []


def test_cancel_event_reaches_a_model_that_accepts_it(manager: MemoryManager) -> None:
    got: list[threading.Event] = []
    entered = threading.Event()

    def model(messages: Any, tools: Any, *, cancel: threading.Event) -> ModelReply:
        got.append(cancel)
        entered.set()
        cancel.wait(30)
        return ModelReply("stopped")

    handle = manager.run_review(model, CONVERSATION)
    assert entered.wait(10)
    manager.on_turn_start(1, "hello")
    assert handle.wait(10)
    assert got and got[0].is_set()


def test_shutdown_cancels_and_later_reviews_refuse(home: Path) -> None:
    release = threading.Event()
    entered = threading.Event()
    m = make_manager(home)

    def blocking(messages: Any, tools: Any) -> ModelReply:
        entered.set()
        release.wait(30)
        return ModelReply("")

    handle = m.run_review(blocking, CONVERSATION)
    assert entered.wait(10)
    m.shutdown_all()
    assert handle.wait(10) and handle.result.status == "cancelled"
    release.set()
    with pytest.raises(ManagerClosedError):
        m.run_review(blocking, CONVERSATION)


def test_a_new_review_cancels_the_previous_one(manager: MemoryManager) -> None:
    release = threading.Event()
    entered = threading.Event()

    def blocking(messages: Any, tools: Any) -> ModelReply:
        entered.set()
        release.wait(30)
        return ModelReply("")

    first = manager.run_review(blocking, CONVERSATION)
    assert entered.wait(10)
    second = manager.run_review(Script(), CONVERSATION, background=False)
    assert first.wait(10) and first.result.status == "cancelled"
    assert second.result.status == "completed"
    release.set()


def test_without_a_callable_the_host_gets_the_prompt(manager: MemoryManager) -> None:
    recalled = {
        "role": "user",
        "content": "hi\n\n<memory-context>\n[System note: recalled]\nsecret plan\n"
        "</memory-context>",
    }
    messages = manager.review_messages([recalled])
    assert manager.review_prompt() == REVIEW_PROMPT
    assert messages[-1] == {"role": "user", "content": REVIEW_PROMPT}
    assert "secret plan" not in messages[0]["content"]
    with pytest.raises(TypeError, match="review_messages"):
        manager.run_review(None, [])  # type: ignore[arg-type]
