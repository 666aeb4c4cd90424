"""Settings: config.yaml ``honcho:`` section, environment variables, validation, schema."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from hermes_memory_core.kit import SettingsError
from hermes_memory_honcho import HonchoProvider
from hermes_memory_honcho._config import (
    HonchoConfig,
    is_private_host,
    normalize_base_url,
    sanitize_id,
    session_key,
)


def test_defaults_and_env():
    cfg = HonchoConfig.load(None, environ={"HONCHO_API_KEY": "k", "HONCHO_WORKSPACE_ID": "ws1"})
    assert cfg.api_key == "k" and cfg.workspace == "ws1"
    assert cfg.resolved_base_url == "https://api.honcho.dev"
    assert cfg.timeout == 8.0 and cfg.max_retries == 1 and cfg.recall_mode == "hybrid"


def test_file_wins_over_env_and_aliases_work():
    section = {"baseUrl": "http://10.0.0.5:8000/v3/", "timeout": "2.5", "observe_me": "false"}
    cfg = HonchoProvider(
        config={"honcho": section},
        environ={"HONCHO_BASE_URL": "http://elsewhere", "HONCHO_TIMEOUT": "9"},
    ).settings
    assert cfg.resolved_base_url == "http://10.0.0.5:8000"
    assert cfg.timeout == 2.5 and cfg.observe_me is False


def test_honcho_url_env_alias():
    provider = HonchoProvider(config={}, environ={"HONCHO_URL": "http://h:1"})
    assert provider.settings.base_url == "http://h:1"
    both = {"HONCHO_URL": "http://h:1", "HONCHO_BASE_URL": "http://h:2"}
    assert HonchoProvider(config={}, environ=both).settings.base_url == "http://h:2"


@pytest.mark.parametrize(
    ("section", "needle"),
    [
        ({"timeout": "soon"}, "honcho.timeout must be a number"),
        ({"max_retries": 1.5}, "honcho.max_retries must be an integer"),
        ({"enabled": "maybe"}, "honcho.enabled must be true or false"),
        ({"recall_mode": "always"}, "honcho.recall_mode must be one of hybrid, context, tools"),
        ({"workspace": "my workspace"}, "honcho.workspace"),
        ({"timeout": 0}, "honcho.timeout must be greater than 0"),
    ],
)
def test_bad_values_name_the_key(section, needle):
    with pytest.raises(SettingsError, match=needle):
        HonchoConfig.load(section, environ={})
    reason = HonchoProvider(config={"honcho": section}, environ={}).unavailable_reason()
    assert reason.startswith("configuration error: ") and needle in reason


def test_api_key_of_the_wrong_type_is_refused_without_showing_it():
    secret = "hch-s3cret-v4lue"
    provider = HonchoProvider(config={"honcho": {"api_key": [secret]}}, environ={})
    reason = provider.unavailable_reason()
    assert "honcho.api_key must be a string" in reason and secret not in reason
    assert provider.config is None and not provider.is_available()


def test_section_that_is_not_a_mapping():
    reason = HonchoProvider(config={"honcho": ["x"]}, environ={}).unavailable_reason()
    assert reason == "configuration error: honcho must be a mapping of settings, got list"


def test_unknown_key_warns(caplog):
    caplog.set_level(logging.WARNING)
    HonchoProvider(config={"honcho": {"colour_of_the_sky": "blue"}}, environ={}).settings
    assert "honcho.colour_of_the_sky is ignored" in caplog.text


def test_unavailable_reasons(tmp_path: Path):
    none = HonchoProvider(hermes_home=tmp_path, config={}, environ={})
    assert not none.is_available()
    assert "HONCHO_API_KEY" in none.unavailable_reason()
    assert "HONCHO_BASE_URL" in none.unavailable_reason()
    off = HonchoProvider(config={"honcho": {"enabled": False, "api_key": "k"}}, environ={})
    assert "disabled" in off.unavailable_reason()
    bad = HonchoProvider(config={"honcho": {"timeout": "x"}}, environ={})
    assert bad.unavailable_reason().startswith("configuration error: honcho.timeout")
    ok = HonchoProvider(config={}, environ={"HONCHO_API_KEY": "k"})
    assert ok.is_available() and ok.unavailable_reason() == ""
    hosted = HonchoProvider(config={"honcho": {"base_url": "http://127.0.0.1:8000"}}, environ={})
    assert hosted.is_available()


def test_reads_config_yaml_from_home_when_not_given(tmp_path: Path):
    (tmp_path / "config.yaml").write_text("honcho:\n  base_url: http://127.0.0.1:9\n")
    provider = HonchoProvider(hermes_home=tmp_path, environ={})
    assert provider.is_available()
    assert provider.config is not None and provider.config.base_url == "http://127.0.0.1:9"


def test_inactive_provider_is_inert_and_says_why(tmp_path: Path):
    provider = HonchoProvider(hermes_home=tmp_path, config={}, environ={})
    provider.initialize("s", hermes_home=str(tmp_path))
    assert provider.prefetch("x") == ""
    provider.sync_turn("a", "b")
    assert "Honcho is not available" in provider.handle_tool_call("honcho_search", {"query": "x"})
    from hermes_memory_core.health import read_provider_status

    status = read_provider_status(tmp_path, "honcho")
    assert status is not None and "HONCHO_API_KEY" in status["detail"]
    provider.shutdown()


def test_schema_documents_every_setting_with_env_vars():
    schema = {f["key"]: f for f in HonchoProvider().get_config_schema()}
    assert schema["api_key"]["secret"] is True and schema["api_key"]["env_var"] == "HONCHO_API_KEY"
    assert schema["base_url"]["env_var"] == "HONCHO_BASE_URL"
    assert set(schema) >= {"workspace", "peer_name", "ai_peer", "dialectic_cadence", "timeout"}
    assert all(f["description"] for f in schema.values())


def test_ids():
    assert sanitize_id("alice") == "alice"
    weird = sanitize_id("张伟@telegram")
    assert weird.startswith("__") and len(weird) <= 100 and weird != sanitize_id("李伟@telegram")
    long = session_key("x" * 300)
    assert len(long) == 100
    assert session_key("") == "default"
    assert normalize_base_url("http://h:8000/v3/") == "http://h:8000"
    assert is_private_host("http://192.168.1.4:8000") and is_private_host("http://localhost")
    assert not is_private_host("https://api.honcho.dev")
