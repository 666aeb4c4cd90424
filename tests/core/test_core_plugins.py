"""Plugin loading from real entry points: a fake distribution is written to a temp dir on sys.path."""

from __future__ import annotations

import logging
import sys
import textwrap
from pathlib import Path

import pytest

from hermes_memory_core import MemoryProvider
from hermes_memory_core.plugins import PluginRegistry


def make_dist(root: Path, dist: str, entry_points: dict[str, str], modules: dict[str, str]) -> None:
    """Write an installed distribution (dist-info with entry_points.txt) plus its modules."""
    info = root / f"{dist.replace('-', '_')}-1.2.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.2.3\n")
    lines = "\n".join(f"{name} = {target}" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[hermes_memory]\n{lines}\n")
    for module, source in modules.items():
        (root / f"{module}.py").write_text(textwrap.dedent(source))


GOOD = """
from typing import Any
from hermes_memory_core import MemoryProvider, hookimpl

class GoodProvider(MemoryProvider):
    name = "good"
    def __init__(self, *, hermes_home=None, config=None):
        self.config = config
    def is_available(self) -> bool:
        return True
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass
    def get_tool_schemas(self):
        return []
    def prefetch(self, query, *, session_id=""):
        return "good recall"

@hookimpl
def register_memory_providers(register):
    register(GoodProvider, name="good")
"""

BROKEN_IMPORT = """
raise ImportError("missing dependency: frobnicate")
"""

BROKEN_HOOK = """
from hermes_memory_core import hookimpl

@hookimpl
def register_memory_providers(register):
    raise RuntimeError("boom during registration")
"""


@pytest.fixture
def plugin_path(tmp_path, monkeypatch):
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    yield root
    for name in ("hm_good", "hm_broken_import", "hm_broken_hook", "hm_dup"):
        sys.modules.pop(name, None)


def test_broken_plugin_next_to_good_one(plugin_path, caplog):
    make_dist(plugin_path, "hm-good", {"good": "hm_good"}, {"hm_good": GOOD})
    make_dist(
        plugin_path,
        "hm-broken",
        {"broken": "hm_broken_import"},
        {"hm_broken_import": BROKEN_IMPORT},
    )
    make_dist(
        plugin_path, "hm-badhook", {"badhook": "hm_broken_hook"}, {"hm_broken_hook": BROKEN_HOOK}
    )
    with caplog.at_level(logging.WARNING):
        registry = PluginRegistry.from_entry_points(environ={})
    assert "good" in registry.providers
    assert registry.providers["good"].distribution == "hm-good"
    assert registry.providers["good"].version == "1.2.3"
    errors = {e.plugin: e for e in registry.errors}
    assert "frobnicate" in errors["broken"].error
    assert errors["broken"].distribution == "hm-broken"
    assert errors["broken"].version == "1.2.3"
    assert "boom during registration" in errors["badhook"].error
    assert any("broken" in r.getMessage() for r in caplog.records)
    provider = registry.create("good", config={"x": 1})
    assert isinstance(provider, MemoryProvider)
    assert provider.config == {"x": 1}


def test_failure_logged_once_per_process(plugin_path, caplog):
    make_dist(
        plugin_path,
        "hm-broken",
        {"broken_once": "hm_broken_import"},
        {"hm_broken_import": BROKEN_IMPORT},
    )
    with caplog.at_level(logging.WARNING):
        PluginRegistry.from_entry_points(environ={})
        sys.modules.pop("hm_broken_import", None)
        second = PluginRegistry.from_entry_points(environ={})
    assert [e.plugin for e in second.errors].count("broken_once") == 1
    assert sum("broken_once" in r.getMessage() for r in caplog.records) == 1


def test_allow_and_deny_lists(plugin_path):
    make_dist(plugin_path, "hm-good", {"good": "hm_good"}, {"hm_good": GOOD})
    make_dist(
        plugin_path,
        "hm-broken",
        {"broken": "hm_broken_import"},
        {"hm_broken_import": BROKEN_IMPORT},
    )
    only_good = PluginRegistry.from_entry_points(environ={"HERMES_MEMORY_PLUGINS": "good"})
    assert set(only_good.providers) - {"builtin", "sessions"} == {"good"}
    assert not only_good.errors
    no_good = PluginRegistry.from_entry_points(
        environ={"HERMES_MEMORY_DISABLE_PLUGINS": "good, broken"}
    )
    assert "good" not in no_good.providers
    assert not [e for e in no_good.errors if e.plugin in ("good", "broken")]


def test_duplicate_provider_name_names_both_distributions(plugin_path):
    make_dist(plugin_path, "hm-good", {"good": "hm_good"}, {"hm_good": GOOD})
    make_dist(
        plugin_path, "hm-dup", {"dup": "hm_dup"}, {"hm_dup": GOOD.replace("GoodProvider", "Dup")}
    )
    registry = PluginRegistry.from_entry_points(environ={})
    [error] = [e for e in registry.errors if e.plugin in ("good", "dup")]
    assert "hm-good" in error.error and "hm-dup" in error.error


def test_describe_lists_availability_hooks_and_errors(plugin_path):
    make_dist(plugin_path, "hm-good", {"good": "hm_good"}, {"hm_good": GOOD})
    make_dist(
        plugin_path,
        "hm-broken",
        {"broken": "hm_broken_import"},
        {"hm_broken_import": BROKEN_IMPORT},
    )
    infos = {i.name: i for i in PluginRegistry.from_entry_points(environ={}).describe()}
    assert infos["good"].available is True
    assert "prefetch" in infos["good"].hooks
    assert infos["good"].load_error is None
    assert infos["broken"].available is False
    assert "frobnicate" in infos["broken"].load_error
    assert infos["broken"].as_dict()["distribution"] == "hm-broken"


def test_unknown_provider_name_lists_installed():
    registry = PluginRegistry()
    with pytest.raises(KeyError, match="no memory provider named 'nope'"):
        registry.create("nope")


def test_allow_list_keeps_the_builtin_tier(plugin_path):
    make_dist(plugin_path, "hm-good", {"good": "hm_good"}, {"hm_good": GOOD})
    only_good = PluginRegistry.from_entry_points(environ={"HERMES_MEMORY_PLUGINS": "good"})
    assert {"good", "builtin", "sessions"} <= set(only_good.providers)
    denied = PluginRegistry.from_entry_points(environ={"HERMES_MEMORY_DISABLE_PLUGINS": "sessions"})
    assert "sessions" not in denied.providers
