"""Settings: file over environment over defaults, clear messages for bad values, the
container tag, a light import, and the package as the console script lists it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_memory_core.kit import SettingsError
from hermes_memory_supermemory import SupermemoryProvider
from hermes_memory_supermemory._config import (
    DEFAULT_URL,
    SupermemoryConfigError,
    SupermemorySettings,
    namespace_for,
)

load_settings = SupermemorySettings.from_config


def test_environment_fills_what_the_file_does_not_set() -> None:
    env = {"SUPERMEMORY_API_KEY": "k", "SUPERMEMORY_CONTAINER_TAG": "from-env",
           "SUPERMEMORY_TIMEOUT": "9", "SUPERMEMORY_BASE_URL": "http://10.0.0.5:8787/"}  # fmt: skip
    cfg = load_settings({"supermemory": {"container_tag": "from-file"}}, environ=env)
    assert (cfg.api_key, cfg.container_tag, cfg.timeout) == ("k", "from-file", 9.0)
    assert cfg.base_url == "http://10.0.0.5:8787" and cfg.missing() == ""
    default = load_settings({}, environ={})
    assert default.base_url == DEFAULT_URL and default.container_tag == "hermes"
    assert "SUPERMEMORY_API_KEY" in default.missing() and default.timeout == 5.0


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"timeout": "soon"}, "supermemory.timeout must be a number"),
        ({"timeout": 0}, "supermemory.timeout must be at least 0.1"),
        ({"search_mode": "all"}, "supermemory.search_mode must be one of"),
        ({"base_url": "file:///etc/passwd"}, "supermemory.base_url must be an http(s) URL"),
        ({"container_tag": "../other"}, "supermemory.container_tag must be"),
        ({"container_tag": "a b"}, "supermemory.container_tag must be"),
        ({"container_tag": "a?b#c"}, "supermemory.container_tag must be"),
        ({"container_tag": "x\u200b"}, "supermemory.container_tag must be"),
        ({"container_tag": ".."}, "supermemory.container_tag must be"),
        ({"profile_every": -1}, "supermemory.profile_every must be at least 0"),
    ],
)
def test_bad_values_are_refused_by_name(section: dict[str, object], message: str) -> None:
    with pytest.raises(SettingsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_settings({"supermemory": section}, environ={})


def test_container_tags_of_any_script_and_identity() -> None:
    assert load_settings({"supermemory": {"container_tag": "記憶-1"}}, environ={}).container_tag
    assert namespace_for("team:{identity}", "bob@example") == "team:bob@example"
    assert namespace_for("u-{identity}", "") == "u-default"
    with pytest.raises(SupermemoryConfigError):
        namespace_for("u-{identity}", "a/b")
    with pytest.raises(SupermemoryConfigError):
        namespace_for("u-{identity}", "evil\u202e")


def test_an_invalid_setting_leaves_the_provider_inert_with_a_reason(hermes_home: Path) -> None:
    provider = SupermemoryProvider(hermes_home=hermes_home,
                                   config={"supermemory": {"timeout": "soon"}}, environ={})  # fmt: skip
    assert not provider.is_available()
    assert "supermemory.timeout" in provider.unavailable_reason()
    provider.initialize("s")
    answer = json.loads(provider.handle_tool_call("supermemory_search", {"query": "x"}))
    assert "supermemory.timeout" in answer["error"]
    assert provider.prefetch("x") == "" and provider.system_prompt_block() == ""
    provider.shutdown()


def test_settings_come_from_the_one_parse_of_config_yaml(hermes_home: Path) -> None:
    from hermes_memory_core.config import load_config
    from hermes_memory_core.plugins import list_providers

    (hermes_home / "config.yaml").write_text(
        "supermemory:\n  api_key: sm-k\n  container_tag: 京都\n", encoding="utf-8"
    )
    infos = {i.name: i for i in list_providers(hermes_home=hermes_home,
                                               config=load_config(hermes_home).raw)}  # fmt: skip
    assert infos["supermemory"].available
    provider = SupermemoryProvider(config=load_config(hermes_home).raw, environ={})
    assert provider.settings.container_tag == "京都"
    keys = {s["key"] for s in provider.get_config_schema()}
    assert {"api_key", "base_url", "container_tag", "profile_every", "max_pending"} <= keys
    (hermes_home / "config.yaml").write_text("supermemory:\n  container_tag: a/b\n")
    infos = {i.name: i for i in list_providers(hermes_home=hermes_home,
                                               config=load_config(hermes_home).raw)}  # fmt: skip
    reason = infos["supermemory"].unavailable_reason
    assert reason.startswith("configuration error: supermemory.container_tag must be")


def test_importing_the_package_and_asking_availability_loads_no_sdk() -> None:
    code = (
        "import sys; from hermes_memory_supermemory import SupermemoryProvider as P; "
        "p = P(config={}, environ={}); p.is_available(); p.get_tool_schemas(); "
        "print([m for m in ('httpx', 'supermemory') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)  # fmt: skip
    assert out.stdout.strip() == "[]"


def console(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("hermes-memory")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SUPERMEMORY_")}
    return subprocess.run([str(script), "--home", str(home), *args], capture_output=True,
                          text=True, timeout=60, env={**clean, **env}, check=False)  # fmt: skip


def test_the_console_script_lists_the_plugin_with_its_availability(hermes_home: Path) -> None:
    off = console(hermes_home, "--json", "plugins")
    assert off.returncode == 0, off.stderr
    info = {p["name"]: p for p in json.loads(off.stdout)}["supermemory"]
    assert info["distribution"] == "hermes-memory-supermemory" and info["available"] is False
    assert "SUPERMEMORY_API_KEY" in info["unavailable_reason"]
    on = console(hermes_home, "--json", "plugins", SUPERMEMORY_API_KEY="sm-secret-k")
    info = {p["name"]: p for p in json.loads(on.stdout)}["supermemory"]
    assert info["available"] is True and "sm-secret-k" not in on.stdout + on.stderr


def test_provider_status_shows_the_health_record(hermes_home: Path) -> None:
    from supermemory_fake import FakeSupermemory

    (hermes_home / "config.yaml").write_text("memory:\n  provider: supermemory\n", encoding="utf-8")
    fake = FakeSupermemory(fail=[401])
    try:
        config = {"supermemory": {"api_key": "sm-bad-key", "base_url": fake.url, "retries": 0}}
        provider = SupermemoryProvider(hermes_home=hermes_home, config=config, environ={})
        provider.initialize("s1")
        provider.handle_tool_call("supermemory_profile", {})
        provider.shutdown()
    finally:
        fake.close()
    answer = console(hermes_home, "--json", "provider", "status", SUPERMEMORY_API_KEY="sm-bad-key")
    status = json.loads(answer.stdout)
    assert status["provider"] == "supermemory" and status["available"] is True
    assert status["health"]["state"] == "circuit_open"
    assert status["health"]["last_error_kind"] == "auth"
    assert status["health"]["namespace"] == "hermes"
    assert "sm-bad-key" not in answer.stdout + answer.stderr
