"""BuiltinMemoryProvider: config, snapshot block, tool, plugin entry point, manager mirroring."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from builtin_helpers import write_file

from hermes_memory_builtin import MEMORY_SCHEMA, BuiltinMemoryProvider, MemoryStore
from hermes_memory_builtin._guidance import MEMORY_GUIDANCE, memory_guidance
from hermes_memory_core import MemoryProvider
from hermes_memory_core._manager import MemoryManager
from hermes_memory_core.plugins import PluginRegistry

RULE = "═" * 46


def home_with_files(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / "memories").mkdir(parents=True)
    write_file(home / "memories" / "MEMORY.md", "Repo uses nox")
    write_file(home / "memories" / "USER.md", "Name: Sam")
    return home


def test_is_a_provider_named_builtin(tmp_path: Path) -> None:
    provider = BuiltinMemoryProvider(hermes_home=tmp_path)
    assert isinstance(provider, MemoryProvider)
    assert provider.name == "builtin"
    assert provider.is_available() is True
    assert provider.unavailable_reason() == ""
    assert provider.get_tool_schemas() == [MEMORY_SCHEMA]
    assert not (tmp_path / "memories").exists()  # __init__ does no I/O


def test_snapshot_block_memory_then_user(tmp_path: Path) -> None:
    home = home_with_files(tmp_path)
    provider = BuiltinMemoryProvider(hermes_home=home)
    provider.initialize("s1", hermes_home=str(home), platform="cli")
    block = provider.system_prompt_block()
    assert block == (
        f"{MEMORY_GUIDANCE}\n\n"
        f"{RULE}\nMEMORY (your personal notes) [0% — 13/2,200 chars]\n{RULE}\nRepo uses nox"
        "\n\n"
        f"{RULE}\nUSER PROFILE (who the user is) [0% — 9/1,375 chars]\n{RULE}\nName: Sam"
    )
    provider.handle_tool_call("memory", {"target": "user", "action": "add", "content": "Likes Go"})
    assert provider.system_prompt_block() == block  # frozen for the session


def test_home_from_initialize_kwargs(tmp_path: Path) -> None:
    home = home_with_files(tmp_path)
    provider = BuiltinMemoryProvider()
    provider.initialize("s1", hermes_home=str(home), platform="cli")
    assert provider.store.memory_dir == home / "memories"
    assert "Repo uses nox" in provider.system_prompt_block()


def test_config_flags_and_limits(tmp_path: Path) -> None:
    home = home_with_files(tmp_path)
    config = {
        "memory": {
            "memory_enabled": "yes",
            "user_profile_enabled": "false",
            "memory_char_limit": "500",
            "user_char_limit": 300,
        }
    }
    provider = BuiltinMemoryProvider(hermes_home=home, config=config)
    assert provider.store.memory_char_limit == 500
    assert provider.store.user_char_limit == 300
    provider.initialize("s1", hermes_home=str(home))
    assert provider.system_prompt_block() == (
        f"{memory_guidance(True, False)}\n\n"
        f"{RULE}\nMEMORY (your personal notes) [2% — 13/500 chars]\n{RULE}\nRepo uses nox"
    )
    schema = provider.get_tool_schemas()[0]
    assert schema["parameters"]["properties"]["target"]["enum"] == ["memory"]
    refused = json.loads(
        provider.handle_tool_call("memory", {"target": "user", "action": "add", "content": "x"})
    )
    assert refused["error"] == "Built-in USER.md writes are disabled in memory config."


def test_both_disabled(tmp_path: Path) -> None:
    config = {"memory": {"memory_enabled": False, "user_profile_enabled": "off"}}
    provider = BuiltinMemoryProvider(hermes_home=tmp_path, config=config)
    assert provider.is_available() is False
    assert "memory_enabled" in provider.unavailable_reason()
    assert provider.get_tool_schemas() == []
    provider.initialize("s1")
    assert provider.system_prompt_block() == ""


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"memory_char_limit": "big"}, r"memory\.memory_char_limit must be an integer"),
        ({"user_char_limit": -5}, r"memory\.user_char_limit must be at least 1"),
        ({"memory_enabled": "maybe"}, "memory.memory_enabled must be true or false"),
    ],
)
def test_bad_config_is_a_clear_error(section: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BuiltinMemoryProvider(config={"memory": section})


def test_given_store_is_used(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m", memory_char_limit=100)
    provider = BuiltinMemoryProvider(store, config={"memory": {"user_profile_enabled": False}})
    provider.initialize("s", hermes_home=str(tmp_path / "elsewhere"))
    assert provider.store is store
    assert store.user_profile_enabled is False
    provider.handle_tool_call("memory", {"target": "memory", "action": "add", "content": "hi"})
    assert (tmp_path / "m" / "MEMORY.md").read_text(encoding="utf-8") == "hi"


def test_turn_start_resets_failure_cap(tmp_path: Path) -> None:
    provider = BuiltinMemoryProvider(hermes_home=tmp_path)
    provider.initialize("s")
    args = {"target": "memory", "action": "remove", "old_text": "missing"}
    answers = [json.loads(provider.handle_tool_call("memory", args)) for _ in range(4)]
    assert answers[3]["done"] is True and "Stop retrying" in answers[3]["error"]
    provider.on_turn_start(2, "next message")
    again = json.loads(provider.handle_tool_call("memory", args))
    assert again["error"].startswith("No entry matched 'missing'.")


def test_unknown_tool_name(tmp_path: Path) -> None:
    provider = BuiltinMemoryProvider(hermes_home=tmp_path)
    answer = json.loads(provider.handle_tool_call("memo", {}))
    assert answer["success"] is False and "memo" in answer["error"]


def test_non_primary_context_is_recorded_as_origin(tmp_path: Path) -> None:
    provider = BuiltinMemoryProvider(hermes_home=tmp_path)
    provider.initialize("s", agent_context="cron")
    provider.handle_tool_call("memory", {"target": "memory", "action": "add", "content": "c"})
    assert provider.store.entry_metadata("memory")[0]["origin"] == "cron"


def test_entry_point_registers_the_provider(tmp_path: Path) -> None:
    registry = PluginRegistry.from_entry_points()
    assert "builtin" in registry.names()
    provider = registry.create("builtin", hermes_home=tmp_path, config={})
    assert isinstance(provider, BuiltinMemoryProvider)


class RecordingProvider(MemoryProvider):
    """A real external provider that keeps every mirrored write."""

    name = "recorder"

    def __init__(self) -> None:
        self.writes: list[tuple[str, str, str, dict[str, Any] | None]] = []

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        self.writes.append((action, target, content, metadata))


def test_manager_routes_tool_and_mirrors_successful_writes(tmp_path: Path) -> None:
    home = home_with_files(tmp_path)
    (home / "config.yaml").write_text("memory:\n  memory_char_limit: '800'\n", encoding="utf-8")
    manager = MemoryManager.from_config(home)
    builtin = manager.get_provider("builtin")
    assert isinstance(builtin, BuiltinMemoryProvider)
    assert builtin.store.memory_char_limit == 800
    recorder = RecordingProvider()
    manager.add_provider(recorder)
    manager.initialize_all("session-1", platform="cli")
    assert "Repo uses nox" in manager.build_system_prompt()
    assert manager.has_tool("memory")

    def tool(**args: Any) -> dict[str, Any]:
        return json.loads(manager.handle_tool_call("memory", args))

    assert tool(target="memory", action="replace", old_text="nox", content="Repo uses nox 2024")[
        "success"
    ]
    assert not tool(target="memory", action="remove", old_text="absent")["success"]
    assert tool(
        target="user",
        operations=[
            {"action": "add", "content": "Prefers short answers"},
            {"action": "remove", "old_text": "Sam"},
        ],
    )["success"]
    manager.flush_pending(timeout=5)
    assert [(a, t, c) for a, t, c, _ in recorder.writes] == [
        ("replace", "memory", "Repo uses nox 2024"),
        ("add", "user", "Prefers short answers"),
        ("remove", "user", "Name: Sam"),
    ]
    assert recorder.writes[0][3] is not None
    assert recorder.writes[0][3]["previous_content"] == "Repo uses nox"
    manager.shutdown_all()


@pytest.mark.parametrize("value", ["yes", "OFF", 1, 0, "", "t", "none", 1.5, "maybe"])
def test_memory_flags_follow_the_core_config_rule(tmp_path: Path, value: object) -> None:
    """The builtin accepts exactly the boolean spellings core's load_config accepts."""
    from hermes_memory_core.config import ConfigError, load_config

    (tmp_path / "config.yaml").write_text(
        f"memory:\n  memory_enabled: {value!r}\n", encoding="utf-8"
    )
    try:
        expected: bool | None = load_config(tmp_path).memory.memory_enabled
    except ConfigError:
        expected = None
    config = {"memory": {"memory_enabled": value}}
    if expected is None:
        with pytest.raises(ValueError, match=r"memory\.memory_enabled must be true or false"):
            BuiltinMemoryProvider(hermes_home=tmp_path, config=config)
    else:
        assert BuiltinMemoryProvider(hermes_home=tmp_path, config=config).memory_enabled is expected


def test_settings_come_through_the_typed_path_like_every_adapter(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from hermes_memory_builtin import BuiltinSettings
    from hermes_memory_core.plugins import availability

    assert BuiltinMemoryProvider.settings_class is BuiltinSettings
    config = {"memory": {"provider": "honcho", "nudge_interval": 5, "user_char_limit": 99}}
    provider = BuiltinMemoryProvider(hermes_home=tmp_path, config=config)
    # the section's other keys belong to core's MemoryConfig: not "unknown" here
    assert "unknown key" not in caplog.text
    assert provider.settings.user_char_limit == 99
    assert [f["key"] for f in provider.get_config_schema()] == [
        "memory_enabled",
        "user_profile_enabled",
        "memory_char_limit",
        "user_char_limit",
        "write_approval",
    ]
    provider.configure({"memory": {"write_approval": "sometimes"}})  # what core does
    available, reason = availability(provider)
    assert available is False
    assert (
        reason
        == "configuration error: memory.write_approval must be true or false, got 'sometimes'"
    )
