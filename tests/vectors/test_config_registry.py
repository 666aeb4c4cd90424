"""Settings parsing, and third-party embedders through real entry points on sys.path."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from hermes_memory_core.config import ConfigError
from hermes_memory_vectors import (
    EmbedderConfigError,
    EmbedderRegistry,
    EmbedderSettings,
    EmbedderUnavailable,
    embedder_from_config,
)
from hermes_memory_vectors._registry import create_embedder


def test_settings_parse_all_keys() -> None:
    s = EmbedderSettings.from_section(
        {
            "db_path": "x.db",  # other keys of the section are not ours
            "embedder": " openai ",
            "embedder_model": "m",
            "embedder_url": "http://127.0.0.1:1",
            "embedder_batch_size": "20_000"[:2],
            "embedder_threads": 2.0,
            "embedder_timeout": "2.5",
            "embedder_api_key_env": "MY_KEY",
        }
    )
    assert s == EmbedderSettings("openai", "m", "http://127.0.0.1:1", 20, 2, 2.5, "MY_KEY")
    assert EmbedderSettings.from_section(None).embedder is None
    assert EmbedderSettings.from_section({"embedder": False}).embedder is None
    assert EmbedderSettings.from_section({"embedder": "None"}).embedder is None


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"embedder": 3}, r"sessions\.embedder must be an embedder name .*got 3"),
        ({"embedder_batch_size": 0}, r"sessions\.embedder_batch_size .*got 0"),
        ({"embedder_batch_size": True}, r"sessions\.embedder_batch_size .*got True"),
        ({"embedder_batch_size": 10**6}, r"sessions\.embedder_batch_size must be at most"),
        ({"embedder_threads": "lots"}, r"sessions\.embedder_threads .*got 'lots'"),
        ({"embedder_threads": 1000}, r"sessions\.embedder_threads must be at most 256"),
        ({"embedder_timeout": -1}, r"sessions\.embedder_timeout .*got -1"),
        ({"embedder_timeout": float("nan")}, r"sessions\.embedder_timeout"),
        ({"embedder_model": ["a"]}, r"sessions\.embedder_model must be a model directory"),
        ({"embedder_url": "a\x00b"}, r"sessions\.embedder_url must not contain NUL"),
        ({"embedder_api_key_env": "A-B"}, r"sessions\.embedder_api_key_env must be an environment"),
        ({"embedder_api_key": "sk-1"}, r"sessions\.embedder_api_key is not read"),
    ],
)
def test_bad_values_name_the_key(section, message) -> None:
    with pytest.raises(EmbedderConfigError, match=message) as info:
        EmbedderSettings.from_section(section)
    assert isinstance(info.value, ConfigError)
    assert "sk-1" not in str(info.value)


def test_section_name_is_used_in_messages() -> None:
    with pytest.raises(EmbedderConfigError, match=r"archive\.embedder_threads"):
        EmbedderSettings.from_section({"embedder_threads": 0}, section_name="archive")


def test_unknown_embedder_lists_what_is_installed() -> None:
    with pytest.raises(
        EmbedderConfigError, match=r"no embedder named 'nope'.*installed: .*default.*openai"
    ):
        embedder_from_config({"embedder": "nope"})


def test_a_misspelt_embedder_gets_the_closest_name() -> None:
    with pytest.raises(EmbedderConfigError) as info:
        embedder_from_config({"embedder": "defualt"})
    assert "no embedder named 'defualt' is installed (did you mean default?); installed:" in str(
        info.value
    )


def test_the_archive_warns_about_a_misspelt_embedder_and_stays_lexical(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from hermes_memory_sessions.vectors import build_embedder

    with caplog.at_level(logging.WARNING):
        assert build_embedder({"embedder": "statc"}, strict=False) is None
    assert "did you mean static?" in caplog.text


# ----------------------------------------------------------------- third-party entry points
PLUGIN = """
import sys
class Echo:
    name = "echo:v1"
    dim = 2
    def __init__(self, settings, config):
        self.settings = settings
        self.config = config
    def embed_documents(self, texts):
        return [[float(len(t)), 1.0] for t in texts]
    def embed_query(self, text):
        return [float(len(text)), 1.0]

def make_embedder(settings, config):
    return Echo(settings, config)

def exits(settings):
    sys.exit(3)

def not_an_embedder():
    return object()

def config_error(settings):
    from hermes_memory_vectors import EmbedderConfigError
    raise EmbedderConfigError(settings.key("model") + " must be set for echo")
"""


def install_dist(site: Path, dist: str, module: str, code: str, entries: dict[str, str]) -> None:
    (site / f"{module}.py").write_text(code)
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    lines = "\n".join(f"{k} = {v}" for k, v in entries.items())
    (info / "entry_points.txt").write_text(f"[hermes_memory.embedders]\n{lines}\n")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("hm_echo_plugin", "hm_broken_plugin", "hm_squatter"):
        sys.modules.pop(name, None)


def test_third_party_embedders_load_each_on_its_own(site: Path) -> None:
    install_dist(
        site,
        "hm-echo",
        "hm_echo_plugin",
        PLUGIN,
        {
            "echo": "hm_echo_plugin:make_embedder",
            "echo-module": "hm_echo_plugin",
            "exits": "hm_echo_plugin:exits",
            "junk": "hm_echo_plugin:not_an_embedder",
            "picky": "hm_echo_plugin:config_error",
        },
    )
    install_dist(
        site,
        "hm-broken",
        "hm_broken_plugin",
        "raise RuntimeError('boom at import')\n",
        {"broken": "hm_broken_plugin:make"},
    )
    install_dist(
        site, "hm-squatter", "hm_squatter", PLUGIN, {"default": "hm_squatter:make_embedder"}
    )

    registry = EmbedderRegistry.from_entry_points()
    names = registry.names()
    assert {"echo", "echo-module", "exits", "junk", "picky"} <= set(names)
    assert {"default", "static", "onnx", "fastembed", "openai"} <= set(names)  # ours
    assert registry.embedders["default"].distribution == "hermes-memory-vectors"
    errors = {e.name: e for e in registry.errors}
    assert "boom at import" in errors["broken"].error
    assert errors["broken"].distribution == "hm-broken"
    assert "reserved" in errors["default"].error and errors["default"].distribution == "hm-squatter"

    settings = EmbedderSettings.from_section({"embedder": "echo", "embedder_model": "m"})
    embedder = create_embedder(
        "echo", settings, config={"embedder": "echo", "x": 1}, registry=registry
    )
    assert embedder.embed_query("abc") == [3.0, 1.0]
    assert embedder.settings.model == "m"
    assert embedder.config["x"] == 1
    assert create_embedder("echo-module", settings, registry=registry).name == "echo:v1"

    with pytest.raises(
        EmbedderUnavailable, match=r"'exits' from hm-echo failed to start: SystemExit"
    ):
        create_embedder("exits", settings, registry=registry)
    with pytest.raises(EmbedderUnavailable, match="lacks name / dim"):
        create_embedder("junk", settings, registry=registry)
    with pytest.raises(EmbedderConfigError, match="must be set for echo"):
        create_embedder("picky", settings, registry=registry)
    with pytest.raises(
        EmbedderConfigError, match=r"'broken'.*its entry point failed.*boom at import"
    ):
        create_embedder("broken", settings, registry=registry)


def test_embedder_from_config_finds_a_third_party_embedder(site: Path) -> None:
    from hermes_memory_vectors import get_embedder_registry

    install_dist(
        site, "hm-echo", "hm_echo_plugin", PLUGIN, {"echo": "hm_echo_plugin:make_embedder"}
    )
    get_embedder_registry(refresh=True)
    try:
        embedder = embedder_from_config({"embedder": "echo"})
        assert embedder is not None and embedder.name == "echo:v1"
    finally:
        sys.path.remove(str(site)) if str(site) in sys.path else None
        get_embedder_registry(refresh=True)
