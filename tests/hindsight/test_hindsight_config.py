"""Settings: file over environment over defaults, clear messages for bad values, the modes,
and the package as the console script lists it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_memory_core.kit import SettingsError
from hermes_memory_hindsight import HindsightProvider
from hermes_memory_hindsight._config import CLOUD_URL, LOCAL_URL, HindsightSettings

load_settings = HindsightSettings.from_config


def test_environment_fills_what_the_file_does_not_set() -> None:
    env = {"HINDSIGHT_API_KEY": "k", "HINDSIGHT_BANK_ID": "alice", "HINDSIGHT_TIMEOUT": "9",
           "HINDSIGHT_BUDGET": "HIGH"}  # fmt: skip
    cfg = load_settings({"hindsight": {"bank_id": "from-file"}}, environ=env)
    assert (cfg.api_key, cfg.bank_id, cfg.timeout, cfg.budget) == ("k", "from-file", 9.0, "high")
    assert cfg.mode == "cloud" and cfg.base_url == CLOUD_URL and cfg.missing() == ""


def test_modes() -> None:
    cloud = load_settings({}, environ={})
    assert "HINDSIGHT_API_KEY" in cloud.missing()
    local = load_settings({}, environ={"HINDSIGHT_MODE": "local_external"})
    assert local.missing() == "" and local.base_url == LOCAL_URL
    custom = load_settings({"hindsight": {"mode": "local_external",
                                          "api_url": "http://10.0.0.5:9999/"}}, environ={})  # fmt: skip
    assert custom.base_url == "http://10.0.0.5:9999"
    embedded = load_settings({}, environ={"HINDSIGHT_MODE": "local_embedded"})
    assert "not supported" in embedded.missing() and "local_external" in embedded.missing()


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"timeout": "soon"}, "hindsight.timeout must be a number"),
        ({"timeout": 0}, "hindsight.timeout must be at least 0.1"),
        ({"mode": "clould"}, "hindsight.mode must be one of"),
        ({"budget": "max"}, "hindsight.budget must be one of"),
        ({"api_url": "file:///etc/passwd"}, "hindsight.api_url must be an http(s) URL"),
        ({"bank_id": "../other"}, "hindsight.bank_id must be"),
        ({"bank_id": "a b"}, "hindsight.bank_id must be"),
        ({"bank_id": "x\u200b"}, "hindsight.bank_id must be"),
        ({"retain_every": 0}, "hindsight.retain_every must be at least 1"),
    ],
)
def test_bad_values_are_refused_by_name(section: dict[str, object], message: str) -> None:
    with pytest.raises(SettingsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_settings({"hindsight": section}, environ={})


def test_cjk_bank_ids_are_fine() -> None:
    assert load_settings({"hindsight": {"bank_id": "記憶-1"}}, environ={}).bank_id == "記憶-1"


def test_an_invalid_setting_leaves_the_provider_inert_with_a_reason(hermes_home: Path) -> None:
    provider = HindsightProvider(hermes_home=hermes_home,
                                 config={"hindsight": {"timeout": "soon"}}, environ={})  # fmt: skip
    assert not provider.is_available()
    assert "hindsight.timeout" in provider.unavailable_reason()
    provider.initialize("s")
    answer = json.loads(provider.handle_tool_call("hindsight_recall", {"query": "x"}))
    assert "hindsight.timeout" in answer["error"]
    assert provider.prefetch("x") == "" and provider.system_prompt_block() == ""
    provider.shutdown()


def test_core_hands_the_settings_from_config_yaml_in_the_home(hermes_home: Path) -> None:
    from hermes_memory_core.config import load_config
    from hermes_memory_core.plugins import get_registry

    (hermes_home / "config.yaml").write_text(
        "hindsight:\n  mode: local_external\n  bank_id: 京都\n", encoding="utf-8"
    )
    config = load_config(hermes_home)
    provider = get_registry().create("hindsight", hermes_home=hermes_home, config=config.raw)
    assert isinstance(provider, HindsightProvider) and provider.is_available()
    assert provider.settings.bank_id == "京都" and provider.settings.mode == "local_external"
    assert provider.get_config_schema() == HindsightSettings.schema()
    bad = {"hindsight": {"bank_id": "../x"}}
    provider = get_registry().create("hindsight", hermes_home=hermes_home, config=bad)
    assert provider.unavailable_reason().startswith("configuration error: hindsight.bank_id")


def test_importing_the_package_and_asking_availability_loads_no_client(tmp_path: Path) -> None:
    code = (
        "import sys; from hermes_memory_hindsight import HindsightProvider as P; "
        "p = P(config={}, environ={}); p.is_available(); p.get_tool_schemas(); "
        "print([m for m in ('aiohttp', 'hindsight_client', 'hindsight_client_api') "
        "if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)  # fmt: skip
    assert out.stdout.strip() == "[]"


def console(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("hermes-memory")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
    return subprocess.run([str(script), "--home", str(home), *args], capture_output=True,
                          text=True, timeout=60, env={**clean, **env}, check=False)  # fmt: skip


def test_the_console_script_lists_the_plugin_with_its_availability(hermes_home: Path) -> None:
    off = console(hermes_home, "--json", "plugins")
    assert off.returncode == 0, off.stderr
    info = {p["name"]: p for p in json.loads(off.stdout)}["hindsight"]
    assert info["distribution"] == "hermes-memory-hindsight" and info["available"] is False
    assert "HINDSIGHT_API_KEY" in info["unavailable_reason"]
    on = console(hermes_home, "--json", "plugins", HINDSIGHT_API_KEY="hs-k")
    info = {p["name"]: p for p in json.loads(on.stdout)}["hindsight"]
    assert info["available"] is True and "hs-k" not in on.stdout
