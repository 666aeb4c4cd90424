"""Public contract of the session archive provider: its `get_config_schema()` entry uses the
field vocabulary shared with Hermes (`reference/hermes-memory-behaviour.md` §6)."""

from __future__ import annotations

from hermes_memory_sessions import SessionArchiveProvider


def test_config_schema_declares_a_text_db_path():
    fields = {f["key"]: f for f in SessionArchiveProvider().get_config_schema()}
    field = fields["sessions.db_path"]
    assert field["type"] == "text"
    assert field["secret"] is False and field["required"] is False
    assert field["description"]
