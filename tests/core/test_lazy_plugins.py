"""Lazy plugins: entry-point modules stay light and providers load only when created."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from hermes_memory_core import MemoryProvider, hookimpl
from hermes_memory_core.plugins import LazyFactory, PluginRegistry


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_importing_core_loads_no_scanner_and_no_pluggy() -> None:
    out = _run(
        """
        import sys
        import hermes_memory_core
        heavy = [m for m in ("hermes_memory_guard._threats", "pluggy", "yaml") if m in sys.modules]
        print(heavy)
        hermes_memory_core.MemoryProvider  # first access imports the module
        print("hermes_memory_core._provider" in sys.modules)
        """
    )
    assert out.split("\n")[:2] == ["[]", "True"]


@pytest.mark.parametrize(
    ("plugin", "heavy"),
    [
        ("hermes_memory_mem0._plugin", ("hermes_memory_mem0._provider", "httpx", "mem0")),
        ("hermes_memory_honcho._plugin", ("hermes_memory_honcho._provider", "httpx", "honcho")),
        ("hermes_memory_example._plugin", ("hermes_memory_example._provider",)),
    ],
)
def test_entry_point_modules_do_not_import_the_provider(
    plugin: str, heavy: tuple[str, ...]
) -> None:
    out = _run(
        f"""
        import sys
        from hermes_memory_core.plugins import PluginRegistry
        import {plugin} as plugin
        registry = PluginRegistry()
        registry.register_plugin(plugin, name="p")
        print(registry.names(), [m for m in {heavy!r} if m in sys.modules])
        """
    )
    names, loaded = out.strip().split("] [")
    assert names != "[" and loaded == "]", out


def test_lazy_factory_imports_on_first_create(tmp_path: Path) -> None:
    module = types.ModuleType("hm_lazy_target")

    class Target(MemoryProvider):
        name = "lazy"
        created = 0

        def __init__(self, hermes_home: object = None) -> None:
            Target.created += 1
            self.home = hermes_home

        def is_available(self) -> bool:
            return True

        def initialize(self, session_id: str, **kwargs: object) -> None:
            pass

        def get_tool_schemas(self) -> list[dict[str, object]]:
            return []

    module.Target = Target  # type: ignore[attr-defined]

    class Plugin:
        @hookimpl
        def register_memory_providers(self, register: object) -> None:
            register("hm_lazy_target:Target", name="lazy")  # type: ignore[operator]

    registry = PluginRegistry()
    registry.register_plugin(Plugin(), name="lazy-plugin")
    assert registry.names() == ["lazy"]
    assert isinstance(registry.providers["lazy"].factory, LazyFactory)
    sys.modules["hm_lazy_target"] = module
    try:
        provider = registry.create("lazy", hermes_home=tmp_path, config={})
    finally:
        del sys.modules["hm_lazy_target"]
    assert isinstance(provider, Target) and provider.home == tmp_path and Target.created == 1


def test_a_missing_lazy_target_is_a_create_error_not_a_load_error() -> None:
    class Plugin:
        @hookimpl
        def register_memory_providers(self, register: object) -> None:
            register("hm_no_such_module_xyz:Thing", name="ghost")  # type: ignore[operator]

    registry = PluginRegistry()
    registry.register_plugin(Plugin(), name="ghost-plugin")
    with pytest.raises(ModuleNotFoundError):
        registry.create("ghost")
    info = {i.name: i for i in registry.describe()}["ghost"]
    assert info.load_error is not None and "hm_no_such_module_xyz" in info.load_error


@pytest.mark.parametrize("target", ["no_colon", ":Attr", "mod:", ""])
def test_a_malformed_target_is_recorded(target: str) -> None:
    class Plugin:
        @hookimpl
        def register_memory_providers(self, register: object) -> None:
            register(target, name="bad")  # type: ignore[operator]

    registry = PluginRegistry()
    registry.register_plugin(Plugin(), name="bad-plugin")
    assert registry.names() == []
    assert registry.errors and "package.module:Attribute" in registry.errors[0].error


def test_every_public_core_name_resolves() -> None:
    import hermes_memory_core

    assert set(hermes_memory_core.__all__) == set(hermes_memory_core._EXPORTS)
    for name in hermes_memory_core.__all__:
        assert getattr(hermes_memory_core, name) is not None
    with pytest.raises(AttributeError, match="no_such_name"):
        hermes_memory_core.no_such_name


def test_manager_defaults_match_the_review_module_it_loads_lazily() -> None:
    import hermes_memory_review as review
    from hermes_memory_core import _manager_base

    assert _manager_base.DEFAULT_NUDGE_INTERVAL == review.DEFAULT_NUDGE_INTERVAL
    assert _manager_base.DEFAULT_REVIEW_TIMEOUT == review.DEFAULT_REVIEW_TIMEOUT
    assert _manager_base.DEFAULT_REVIEW_MAX_TURNS == review.DEFAULT_REVIEW_MAX_TURNS


def test_building_a_manager_loads_neither_the_scanner_nor_the_review() -> None:
    out = _run(
        """
        import sys
        from hermes_memory_core import MemoryManager
        MemoryManager().shutdown_all()
        print([m for m in ("hermes_memory_guard._threats", "hermes_memory_review",
                           "hermes_memory_guard._redact") if m in sys.modules])
        """
    )
    assert out.strip() == "[]"
