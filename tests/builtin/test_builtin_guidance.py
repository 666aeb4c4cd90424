"""Memory guidance in MemoryManager.build_system_prompt(): present with the memory tool, the
narrower user-profile text when only USER.md is on, absent when memory is off; placed before
the MEMORY/USER blocks and frozen with them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builtin_helpers import write_file

from hermes_memory_builtin._guidance import (
    MEMORY_GUIDANCE,
    USER_PROFILE_GUIDANCE,
    memory_guidance,
)
from hermes_memory_core import scan_for_threats
from hermes_memory_core._manager import MemoryManager

RULE = "═" * 46


def manager_for(tmp_path: Path, config: str, *, files: bool = True) -> MemoryManager:
    home = tmp_path / "home"
    (home / "memories").mkdir(parents=True)
    if files:
        write_file(home / "memories" / "MEMORY.md", "Repo uses nox")
        write_file(home / "memories" / "USER.md", "Name: 林")
    (home / "config.yaml").write_text(config, encoding="utf-8")
    manager = MemoryManager.from_config(home)
    manager.initialize_all("guidance-session", platform="cli")
    return manager


def test_builtin_on_guidance_first_then_memory_then_user(tmp_path: Path) -> None:
    with manager_for(tmp_path, "memory: {}\n") as manager:
        prompt = manager.build_system_prompt()
        assert prompt.startswith(MEMORY_GUIDANCE + "\n\n" + RULE + "\nMEMORY (your personal notes)")
        assert prompt.index("MEMORY (your personal notes)") < prompt.index("USER PROFILE")
        assert prompt.count("## Long-term memory") == 1
        assert "Name: 林" in prompt
        # frozen: a write changes neither the notes nor the guidance in this session
        answer = manager.handle_tool_call(
            "memory", {"target": "memory", "action": "add", "content": "Deploys on Fridays"}
        )
        assert json.loads(answer)["success"] is True
        assert manager.build_system_prompt() == prompt


def test_guidance_present_while_memory_is_empty(tmp_path: Path) -> None:
    with manager_for(tmp_path, "memory: {}\n", files=False) as manager:
        assert manager.build_system_prompt() == MEMORY_GUIDANCE


def test_only_user_profile_on_gets_the_narrower_guidance(tmp_path: Path) -> None:
    config = "memory:\n  memory_enabled: false\n  user_profile_enabled: true\n"
    with manager_for(tmp_path, config) as manager:
        prompt = manager.build_system_prompt()
        assert prompt.startswith(USER_PROFILE_GUIDANCE + "\n\n" + RULE + "\nUSER PROFILE")
        assert MEMORY_GUIDANCE not in prompt
        assert "## Long-term memory" not in prompt
        assert "Repo uses nox" not in prompt


def test_only_memory_on_names_only_the_memory_target(tmp_path: Path) -> None:
    config = "memory:\n  memory_enabled: true\n  user_profile_enabled: false\n"
    with manager_for(tmp_path, config) as manager:
        prompt = manager.build_system_prompt()
        assert prompt.startswith(memory_guidance(True, False) + "\n\n" + RULE)
        assert 'target "user"' not in prompt
        assert 'Use target "memory" for everything' in prompt


def test_memory_off_means_no_guidance(tmp_path: Path) -> None:
    config = "memory:\n  memory_enabled: false\n  user_profile_enabled: false\n"
    with manager_for(tmp_path, config) as manager:
        prompt = manager.build_system_prompt()
        assert "## Long-term memory" not in prompt
        assert "## User profile" not in prompt
        assert "memory` tool" not in prompt
        assert not manager.has_tool("memory")


@pytest.mark.parametrize(
    "text",
    [memory_guidance(True, True), memory_guidance(True, False), memory_guidance(False, True)],
    ids=["both", "memory-only", "user-only"],
)
def test_guidance_states_the_rules(text: str) -> None:
    lowered = text.lower()
    for rule in ("statement of fact", "preferences", "corrections", "temporary", "secrets"):
        assert rule in lowered
    assert "short" in lowered and "replace" in lowered
    # our own text must pass the strictest scan the memory blocks pass
    assert scan_for_threats(text, scope="strict") == []
    assert memory_guidance(False, False) == ""
