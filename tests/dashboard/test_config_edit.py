"""The settings page's line editor: one key changes, comments and everything else stay."""

from __future__ import annotations

import pytest
import yaml

from hermes_memory_cli._dashboard._config_edit import ConfigEditError, with_values

TEXT = """\
# top comment
model: gpt-test
memory:
  # limits
  memory_char_limit: 2200  # default
  provider: mem0
mem0:
  api_key_env: MEM0_API_KEY
"""


def test_replaces_in_place_keeping_the_trailing_comment() -> None:
    out = with_values(TEXT, {("memory", "memory_char_limit"): 3000})
    assert "  memory_char_limit: 3000  # default\n" in out
    assert out.replace("3000", "2200") == TEXT


def test_inserts_into_the_block_and_appends_a_missing_section() -> None:
    out = with_values(
        TEXT, {("memory", "write_approval"): True, ("sessions", "embedder"): "default"}
    )
    data = yaml.safe_load(out)
    assert data["memory"]["write_approval"] is True
    assert data["sessions"] == {"embedder": "default"}
    assert data["mem0"] == {"api_key_env": "MEM0_API_KEY"}
    assert "# top comment" in out and "# limits" in out


def test_none_removes_the_key_only() -> None:
    out = with_values(TEXT, {("memory", "provider"): None})
    assert "provider" not in out
    assert yaml.safe_load(out)["memory"] == {"memory_char_limit": 2200}


def test_values_that_look_like_other_types_are_quoted() -> None:
    out = with_values("", {("sessions", "embedder"): "yes", ("sessions", "db_path"): "a: b"})
    assert yaml.safe_load(out)["sessions"] == {"embedder": "yes", "db_path": "a: b"}


def test_crlf_files_stay_crlf() -> None:
    out = with_values(TEXT.replace("\n", "\r\n"), {("memory", "nudge_interval"): 5})
    assert "\r\n  nudge_interval: 5\r\n" in out
    assert "\n" not in out.replace("\r\n", "")


def test_an_inline_section_is_refused() -> None:
    with pytest.raises(ConfigEditError, match="inline"):
        with_values("memory: {memory_char_limit: 10}\n", {("memory", "nudge_interval"): 5})
