"""`ContextCompressor`: thresholds (CJK too), the cut, tool pairs, repeated compression,
failing and slow summarisers, provider notes and the ``compression:`` config section."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from hermes_memory_context import (
    SUMMARY_PREFIX,
    ContextCompressor,
    default_token_counter,
    estimate_tokens,
    is_summary_message,
)
from hermes_memory_core import ConfigError, MemoryManager, MemoryProvider, ModelReply


class Summariser:
    """A scripted summariser that records what it was asked."""

    def __init__(self, reply: Any = None) -> None:
        self.calls: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []
        self.reply = reply

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        self.calls.append((messages, tools))
        if self.reply is not None:
            return self.reply
        return {"role": "assistant", "content": f"summary #{len(self.calls)}"}

    @property
    def request(self) -> str:
        return str(self.calls[-1][0][-1]["content"])


def conversation(turns: int, *, tools_every: int = 0, text: str = "word ") -> list[dict[str, Any]]:
    """A system message and ``turns`` exchanges; every ``tools_every``-th has a tool call
    with two results."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are helpful."}]
    for i in range(turns):
        messages.append({"role": "user", "content": f"question {i}: " + text * 8})
        if tools_every and i % tools_every == 0:
            calls = [
                {
                    "id": f"call_{i}_{k}",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": json.dumps({"q": i})},
                }
                for k in range(2)
            ]
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
            for call in calls:
                messages.append(
                    {"role": "tool", "tool_call_id": call["id"], "content": f"result {i} " * 5}
                )
        messages.append({"role": "assistant", "content": f"answer {i}: " + text * 8})
    return messages


def compressor(summarize: Any = None, **kw: Any) -> ContextCompressor:
    kw.setdefault("context_window", 2000)
    kw.setdefault("protect_last_n", 4)
    kw.setdefault("count_tokens", estimate_tokens)
    return ContextCompressor(summarize=summarize or Summariser(), **kw)


# ---------------------------------------------------------------------- counting, thresholds
def test_the_estimate_counts_cjk_characters_one_token_each() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcdefgh") == 2
    assert estimate_tokens("abcdefghi") == 3  # rounded up
    assert estimate_tokens("你好世界") == 4
    assert estimate_tokens("日本語のテキスト") == 8
    assert estimate_tokens("한국어 텍스트") == 6 + 1  # six syllables, one space
    assert estimate_tokens("全角ＡＢＣ") == 5


def test_without_tiktoken_the_default_counter_is_the_estimate() -> None:
    pytest.importorskip("hermes_memory_context")
    try:
        import tiktoken  # noqa: F401
    except ImportError:
        assert default_token_counter() is estimate_tokens
    else:  # pragma: no cover - tiktoken is not a dependency of the test environment
        pytest.skip("tiktoken is installed")


def test_should_compress_at_the_threshold() -> None:
    c = compressor(context_window=1000, threshold=0.5)
    assert c.threshold_tokens == 500
    small = [{"role": "user", "content": "x" * 1000}]  # 250 + 4 tokens
    assert not c.should_compress(small)
    big = [{"role": "user", "content": "x" * 1984}]  # 496 + 4 = 500 tokens
    assert c.count_messages(big) == 500
    assert c.should_compress(big)


def test_cjk_text_reaches_the_threshold_with_four_times_fewer_characters() -> None:
    c = compressor(context_window=1000, threshold=0.5)
    chinese = [{"role": "user", "content": "我们讨论了数据库的备份策略" * 40}]  # 520 characters
    latin = [{"role": "user", "content": "we discussed the backup plan" * 19}]  # 532 characters
    assert c.should_compress(chinese)
    assert not c.should_compress(latin)


def test_a_custom_counter_is_used() -> None:
    seen: list[str] = []

    def count(text: str) -> int:
        seen.append(text)
        return 100

    c = compressor(context_window=1000, count_tokens=count)
    assert c.count_messages([{"role": "user", "content": "hi"}] * 4) == 4 * 104
    assert seen == ["hi"]  # counted once, cached


def test_a_disabled_compressor_never_asks_but_compresses_by_hand() -> None:
    c = compressor(enabled=False)
    messages = conversation(40)
    assert not c.should_compress(messages)
    assert c.compress(messages).compressed > 0


@pytest.mark.parametrize(
    ("kw", "fragment"),
    [
        ({"context_window": 0}, "context_window"),
        ({"context_window": "8k"}, "context_window"),
        ({"threshold": 0}, "threshold"),
        ({"threshold": 1.5}, "threshold"),
        ({"target_ratio": -1}, "target_ratio"),
        ({"protect_last_n": -1}, "protect_last_n"),
        ({"timeout": 0}, "timeout"),
    ],
)
def test_bad_settings_are_refused(kw: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        compressor(**kw)
    with pytest.raises(TypeError):
        ContextCompressor(context_window=1000, summarize="no")  # type: ignore[arg-type]


# ---------------------------------------------------------------------- the cut
def test_compress_keeps_the_system_head_and_the_protected_tail() -> None:
    summarise = Summariser()
    c = compressor(summarise, protect_last_n=6)
    messages = conversation(40)
    before = json.dumps(messages)
    result = c.compress(messages)
    assert json.dumps(messages) == before  # the input is not modified
    assert result.error == ""
    assert result.messages[0] == messages[0]
    summary = result.messages[1]
    assert is_summary_message(summary)
    assert summary["content"].startswith(SUMMARY_PREFIX)
    assert "summary of the earlier part of this conversation" in summary["content"]
    assert summary["content"].endswith("summary #1")
    assert result.summary == "summary #1"
    kept = result.messages[2:]
    assert len(kept) >= 6
    assert kept == messages[-len(kept) :]
    assert result.compressed == len(messages) - 1 - len(kept)
    assert result.tokens_after == c.count_messages(result.messages) < result.tokens_before
    assert c.count_messages(kept) <= max(c.tail_budget, c.count_messages(messages[-6:]))
    # the summary's role avoids two messages of one role in a row
    assert summary["role"] != kept[0]["role"]
    # the summariser got OpenAI messages, no tools, and the middle
    ((request, tools),) = summarise.calls
    assert tools == []
    assert request[0]["role"] == "system" and request[1]["role"] == "user"
    assert "question 0:" in request[1]["content"]
    assert f"question {39}:" not in request[1]["content"]  # protected: not summarised


def test_the_tail_grows_to_the_token_budget_beyond_protect_last_n() -> None:
    c = compressor(protect_last_n=1, context_window=4000, target_ratio=0.8)
    result = c.compress(conversation(60))
    kept = result.messages[2:]
    assert len(kept) > 1
    assert c.count_messages(kept) <= c.tail_budget


def _pairs_intact(messages: list[dict[str, Any]]) -> None:
    calls = {
        call["id"]
        for m in messages
        if m.get("role") == "assistant"
        for call in m.get("tool_calls") or []
    }
    results = {m["tool_call_id"] for m in messages if m.get("role") == "tool"}
    assert results <= calls, "a tool result lost its call"
    assert calls <= results, "a tool call lost its result"


@pytest.mark.parametrize("protect", list(range(0, 14)))
def test_a_tool_call_and_its_results_stay_together(protect: int) -> None:
    c = compressor(protect_last_n=protect, context_window=1200)
    messages = conversation(30, tools_every=2)
    result = c.compress(messages)
    assert result.compressed > 0
    _pairs_intact(result.messages)
    assert result.messages[2]["role"] != "tool"
    assert len(result.messages) - 2 >= protect


def test_nothing_to_compress_when_the_tail_is_everything() -> None:
    summarise = Summariser()
    c = compressor(summarise, protect_last_n=100)
    messages = conversation(5)
    result = c.compress(messages)
    assert result.messages == messages and result.compressed == 0
    assert "nothing to compress" in result.error
    assert summarise.calls == []


def test_a_summary_larger_than_the_budget_is_cut_to_fit() -> None:
    c = compressor(Summariser({"content": "very long summary " * 2000}), context_window=4000)
    result = c.compress(conversation(80))
    assert result.compressed > 0
    summary = result.messages[1]
    assert c.count_messages([summary]) <= c.summary_budget
    assert summary["content"].endswith("[summary cut to fit the context window]")


def test_a_summary_that_does_not_shrink_anything_is_refused() -> None:
    c = compressor(Summariser({"content": "x" * 4000}), target_ratio=0.1, protect_last_n=2)
    messages = conversation(4)
    result = c.compress(messages)
    assert result.messages == messages and result.compressed == 0
    assert "would not make the conversation shorter" in result.error


# ---------------------------------------------------------------------- repeated compression
def test_repeated_compression_summarises_the_previous_summary_with_the_new_middle() -> None:
    summarise = Summariser()
    c = compressor(summarise, protect_last_n=4)
    first = c.compress(conversation(30))
    grown = first.messages + conversation(30)[1:][-20:]  # 10 more exchanges
    second = c.compress(grown)
    assert second.compressed > 0
    assert [is_summary_message(m) for m in second.messages].count(True) == 1
    assert second.messages[1]["content"].endswith("summary #2")
    request = summarise.request
    assert "Summary of the conversation so far" in request
    assert "summary #1" in request
    assert SUMMARY_PREFIX not in request  # the previous summary's header is not repeated
    third = c.compress(second.messages + conversation(12)[1:])
    assert third.messages[1]["content"].endswith("summary #3")
    assert "summary #2" in summarise.request and "summary #1" not in summarise.request


def test_a_hermes_summary_counts_as_the_previous_summary() -> None:
    summarise = Summariser()
    messages = conversation(20)
    messages.insert(1, {"role": "user", "content": "[CONTEXT COMPACTION] earlier: the plan"})
    compressor(summarise).compress(messages)
    assert "Summary of the conversation so far" in summarise.request
    assert "earlier: the plan" in summarise.request


# ---------------------------------------------------------------------- the summariser
@pytest.mark.parametrize(
    "reply",
    [
        ModelReply("from a ModelReply"),
        {"role": "assistant", "content": "from a message"},
        {"choices": [{"message": {"role": "assistant", "content": "from a completion"}}]},
        {"content": [{"type": "text", "text": "from "}, {"type": "text", "text": "parts"}]},
    ],
)
def test_every_reply_shape_of_the_review_model_works(reply: Any) -> None:
    result = compressor(Summariser(reply)).compress(conversation(30))
    assert result.compressed > 0 and result.summary.startswith("from ")


@pytest.mark.parametrize(
    ("summarize", "fragment"),
    [
        (lambda m, t: (_ for _ in ()).throw(RuntimeError("HTTP 500")), "HTTP 500"),
        (lambda m, t: 42, "no usable reply"),
        (lambda m, t: {"choices": []}, "no usable reply"),
        (lambda m, t: {"content": "   "}, "empty summary"),
        (lambda m, t: ModelReply(""), "empty summary"),
    ],
)
def test_a_failing_summariser_leaves_the_messages_unchanged(summarize: Any, fragment: str) -> None:
    messages = conversation(30)
    result = compressor(summarize).compress(messages)
    assert result.messages == messages
    assert result.compressed == 0 and result.summary == "" and result.session_id is None
    assert fragment in result.error


def test_a_slow_summariser_is_abandoned_at_the_timeout() -> None:
    release = threading.Event()

    def slow(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, str]:
        release.wait(30)
        return {"content": "too late"}

    messages = conversation(30)
    try:
        result = compressor(slow, timeout=0.2).compress(messages)
    finally:
        release.set()
    assert result.messages == messages and result.compressed == 0
    assert "did not answer within 0.2 s" in result.error


def test_a_summariser_taking_cancel_is_told_at_the_timeout() -> None:
    told = threading.Event()

    def slow(
        messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, cancel: threading.Event
    ) -> dict[str, str]:
        if cancel.wait(30):
            told.set()
        return {"content": "aborted"}

    result = compressor(slow, timeout=0.2).compress(conversation(30))
    assert result.compressed == 0 and "did not answer" in result.error
    assert told.wait(30)


# ---------------------------------------------------------------------- with a manager
class Notes(MemoryProvider):
    """An external provider that extracts a note before compression."""

    name = "notes"

    def __init__(self) -> None:
        self.seen: list[list[dict[str, Any]]] = []

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        self.seen.append(messages)
        return "The user prefers tabs over spaces."


def test_on_pre_compress_runs_first_and_its_notes_reach_the_summariser() -> None:
    provider = Notes()
    manager = MemoryManager()
    manager.add_provider(provider)
    manager.initialize_all("20261201_090000_aaaaaa")
    summarise = Summariser()
    try:
        result = compressor(summarise).compress(conversation(30), manager=manager)
    finally:
        manager.shutdown_all()
    assert result.compressed > 0
    assert result.session_id is None  # no session archive in this manager
    (dropped,) = provider.seen
    assert dropped[0]["content"].startswith("question 0:")
    assert len(dropped) == result.compressed
    assert "The user prefers tabs over spaces." in summarise.request


# ---------------------------------------------------------------------- configuration
def test_from_config_reads_the_compression_section(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(
        "compression:\n  enabled: false\n  threshold: 0.7\n  target_ratio: 0.3\n"
        "  protect_last_n: 8\n  timeout: 30\n  in_place: true\n",
        encoding="utf-8",
    )
    c = ContextCompressor.from_config(tmp_path, context_window=10_000, summarize=Summariser())
    assert (c.enabled, c.threshold, c.target_ratio, c.protect_last_n, c.timeout) == (
        False,
        0.7,
        0.3,
        8,
        30.0,
    )
    assert c.threshold_tokens == 7000 and c.tail_budget == 2100


def test_from_config_defaults_without_a_file(tmp_path: Path) -> None:
    c = ContextCompressor.from_config(tmp_path, context_window=8000, summarize=Summariser())
    assert (c.enabled, c.threshold, c.target_ratio, c.protect_last_n) == (True, 0.5, 0.2, 20)


@pytest.mark.parametrize(
    ("yaml", "fragment"),
    [
        ("compression: 3\n", "'compression' must be a mapping"),
        ("compression:\n  threshold: high\n", "compression.threshold"),
        ("compression:\n  threshold: 2\n", "compression.threshold"),
        ("compression:\n  protect_last_n: -2\n", "compression.protect_last_n"),
        ("compression:\n  enabled: maybe\n", "compression.enabled"),
    ],
)
def test_from_config_names_a_bad_key(tmp_path: Path, yaml: str, fragment: str) -> None:
    (tmp_path / "config.yaml").write_text(yaml, encoding="utf-8")
    with pytest.raises(ConfigError, match=fragment):
        ContextCompressor.from_config(tmp_path, context_window=8000, summarize=Summariser())


def test_an_unknown_key_warns(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "config.yaml").write_text("compression:\n  treshold: 0.4\n", encoding="utf-8")
    ContextCompressor.from_config(tmp_path, context_window=8000, summarize=Summariser())
    assert "compression.treshold" in caplog.text
