"""config.yaml parsing: Hermes keys, defaults, casting, and errors that name the key."""

from __future__ import annotations

import logging

import pytest

from hermes_memory_core import ConfigError, load_config, resolve_home


def write(home, text):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(text, encoding="utf-8")


def test_missing_file_gives_defaults(tmp_path):
    cfg = load_config(tmp_path)
    assert cfg.memory.memory_char_limit == 2200
    assert cfg.memory.user_char_limit == 1375
    assert cfg.memory.prefetch_timeout == 8.0
    assert cfg.memory.provider == ""
    assert cfg.sessions.db_path == tmp_path / "hermes-memory" / "sessions.db"


def test_hermes_keys_with_string_values_are_cast(tmp_path):
    write(
        tmp_path,
        "model: {default: gpt}\nmemory:\n  memory_enabled: 'yes'\n  user_profile_enabled: off\n"
        "  memory_char_limit: '20000'\n  provider: mem0\n  prefetch_timeout: 2.5\n"
        "sessions:\n  db_path: archive/sessions.db\n",
    )
    cfg = load_config(tmp_path)
    assert cfg.memory.memory_enabled is True
    assert cfg.memory.user_profile_enabled is False
    assert cfg.memory.memory_char_limit == 20000
    assert cfg.memory.provider == "mem0"
    assert cfg.memory.prefetch_timeout == 2.5
    assert cfg.sessions.db_path == tmp_path / "archive" / "sessions.db"
    assert cfg.raw["model"] == {"default": "gpt"}


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("memory:\n  memory_char_limit: lots\n", "memory.memory_char_limit"),
        ("memory:\n  memory_char_limit: -5\n", "memory.memory_char_limit"),
        ("memory:\n  memory_enabled: maybe\n", "memory.memory_enabled"),
        ("memory:\n  prefetch_timeout: 0\n", "memory.prefetch_timeout"),
        ("memory:\n  hook_timeout: -1\n", "memory.hook_timeout"),
        ("memory:\n  tool_timeout: .inf\n", "memory.tool_timeout"),
        ("memory:\n  shutdown_timeout: soon\n", "memory.shutdown_timeout"),
        ("memory:\n  recall_max_chars: 0\n", "memory.recall_max_chars"),
        ("memory:\n  recall_max_lines: many\n", "memory.recall_max_lines"),
        ("memory:\n  provider: [a, b]\n", "memory.provider"),
        ("memory: 3\n", "'memory'"),
        ("sessions:\n  db_path: 12\n", "sessions.db_path"),
    ],
)
def test_wrong_type_names_the_key(tmp_path, text, key):
    write(tmp_path, text)
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config(tmp_path)


def test_malformed_yaml_is_a_config_error(tmp_path):
    write(tmp_path, "memory: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(tmp_path)


def test_unknown_key_warns(tmp_path, caplog):
    write(tmp_path, "memory:\n  memroy_char_limit: 10\n")
    with caplog.at_level(logging.WARNING):
        load_config(tmp_path)
    assert "memory.memroy_char_limit" in caplog.text


def test_home_resolution(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "h"))
    assert resolve_home() == tmp_path / "h"
    assert resolve_home(profile="work") == tmp_path / "h" / "profiles" / "work"
    with pytest.raises(ConfigError):
        resolve_home(profile="../escape")


def test_time_bounds_and_recall_caps(tmp_path):
    from hermes_memory_core import MemoryManager
    from hermes_memory_guard import DEFAULT_RECALL_MAX_CHARS, DEFAULT_RECALL_MAX_LINES

    defaults = load_config(tmp_path).memory
    assert (defaults.hook_timeout, defaults.tool_timeout, defaults.shutdown_timeout) == (
        5.0,
        30.0,
        5.0,
    )
    assert (defaults.recall_max_chars, defaults.recall_max_lines) == (
        DEFAULT_RECALL_MAX_CHARS,
        DEFAULT_RECALL_MAX_LINES,
    )
    write(
        tmp_path,
        "memory:\n  hook_timeout: '1.5'\n  tool_timeout: 12\n  shutdown_timeout: 2\n"
        "  recall_max_chars: 500\n  recall_max_lines: 9\n",
    )
    manager = MemoryManager.from_config(tmp_path)
    assert (manager.hook_timeout, manager.tool_timeout, manager.shutdown_timeout) == (1.5, 12, 2)
    assert (manager.recall_max_chars, manager.recall_max_lines) == (500, 9)
    manager.shutdown_all()
