"""The example provider passes the conformance suite and works end to end through the manager."""

from __future__ import annotations

import json

import pytest

from hermes_memory_core import MemoryManager, list_providers
from hermes_memory_example import NotesProvider
from hermes_memory_testing import ProviderConformance


class TestNotesProviderConformance(ProviderConformance):
    @pytest.fixture
    def provider(self, hermes_home):
        return NotesProvider(hermes_home=hermes_home)


def test_note_saved_then_recalled_in_a_later_session(hermes_home):
    (hermes_home / "config.yaml").write_text("memory:\n  provider: example\n", encoding="utf-8")
    first = MemoryManager.from_config(hermes_home)
    first.initialize_all("s1")
    result = json.loads(first.handle_tool_call("example_note", {"text": "部署用 docker compose"}))
    assert result["success"] is True
    first.shutdown_all()

    second = MemoryManager.from_config(hermes_home)
    second.initialize_all("s2")
    recall = second.prefetch_all("我们怎么部署 docker?")
    assert "部署用 docker compose" in recall
    assert recall.startswith("<memory-context>")
    second.shutdown_all()


def test_bad_arguments_are_json_errors(hermes_home):
    provider = NotesProvider(hermes_home=hermes_home)
    assert "error" in json.loads(provider.handle_tool_call("example_note", {}))
    assert "error" in json.loads(provider.handle_tool_call("other", {"text": "x"}))


def test_from_config_builds_configured_external(hermes_home):
    (hermes_home / "config.yaml").write_text(
        "memory:\n  provider: example\n  prefetch_timeout: 3\n"
    )
    manager = MemoryManager.from_config(hermes_home)
    assert manager.prefetch_timeout == 3
    assert manager.get_provider("example") is not None
    assert manager.config is not None and manager.config.memory.provider == "example"
    manager.shutdown_all()


def test_installed_example_plugin_is_discovered():
    infos = {i.name: i for i in list_providers(refresh=True)}
    assert infos["example"].distribution == "hermes-memory-example"
    assert infos["example"].available
