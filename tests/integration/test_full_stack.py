"""The three tiers together, as an agent uses them: real files, a real SQLite archive, real plugins.

Providers come from the installed entry points (builtin, sessions, and the example plugin as
the external provider), exactly as `MemoryManager.from_config` finds them for a user.
"""

from __future__ import annotations

import json

import pytest

from hermes_memory_core import MemoryManager


@pytest.fixture
def home(hermes_home):
    (hermes_home / "config.yaml").write_text(
        "# my hermes config\nmemory:\n  provider: example\n  prefetch_timeout: 5\n",
        encoding="utf-8",
    )
    return hermes_home


def session(home, session_id):
    manager = MemoryManager.from_config(home)
    manager.initialize_all(session_id, platform="cli", agent_context="primary")
    return manager


def test_three_tiers_across_two_sessions(home):
    first = session(home, "20261130_090000_aaaaaa")
    assert [p.name for p in first.providers] == ["builtin", "sessions", "example"]
    assert {"memory", "session_search", "example_note"} <= set(first.get_all_tool_names())
    prompt_before = first.build_system_prompt()

    saved = json.loads(
        first.handle_tool_call(
            "memory", {"action": "add", "target": "user", "content": "用户喜欢简洁的中文回答"}
        )
    )
    assert saved["success"] is True
    assert first.build_system_prompt() == prompt_before, "the snapshot is frozen for the session"

    first.on_turn_start(1, "How should we deploy the billing service?")
    first.sync_all(
        "How should we deploy the billing service?",
        "Let's use docker compose with a healthcheck; 我们下周再讨论监控。",
    )
    assert first.flush_pending(10)
    first.on_session_end([])
    first.shutdown_all()

    second = session(home, "20261201_090000_bbbbbb")
    assert "用户喜欢简洁的中文回答" in second.build_system_prompt()
    # the builtin write was mirrored to the external provider, which recalls it now
    assert "用户喜欢简洁的中文回答" in second.prefetch_all("请用中文回答，简洁一点")

    english = json.loads(
        second.handle_tool_call("session_search", {"query": "docker compose healthcheck"})
    )
    chinese = json.loads(second.handle_tool_call("session_search", {"query": "监控"}))
    for result in (english, chinese):
        assert result.get("success", True) is not False, result
        assert "20261130_090000_aaaaaa" in json.dumps(result), result
    second.shutdown_all()


def test_secret_never_reaches_disk_through_memory_or_archive(home):
    secret = "sk-proj-" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp"
    manager = session(home, "20261130_100000_cccccc")
    manager.sync_all(f"my openai key is {secret}", "I will not store it.")
    manager.handle_tool_call(
        "memory", {"action": "add", "target": "memory", "content": f"OpenAI key: {secret}"}
    )
    assert manager.flush_pending(10)
    manager.shutdown_all()
    for path in home.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), f"secret leaked into {path}"


def test_model_is_told_when_a_secret_was_masked_in_a_memory_write(home):
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    manager = session(home, "20261130_110000_dddddd")
    result = json.loads(
        manager.handle_tool_call(
            "memory", {"action": "add", "target": "memory", "content": f"CI token {secret}"}
        )
    )
    assert result["success"] is True
    assert "[redacted]" in result["redacted"]
    plain = json.loads(
        manager.handle_tool_call(
            "memory", {"action": "add", "target": "memory", "content": "CI runs on GitHub"}
        )
    )
    assert "redacted" not in plain
    manager.shutdown_all()
