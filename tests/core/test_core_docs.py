"""Docs cover every hook (datasette's rule): a contract member without documentation fails here.

The contract is one source: the `MemoryProvider` base class plus the registration hook.
"""

from __future__ import annotations

import inspect
import re
import runpy
from pathlib import Path

import pytest

from hermes_memory_core import MemoryProvider
from hermes_memory_core._provider import PROVIDER_HOOK_NAMES

ROOT = Path(__file__).resolve().parents[2]
HOOKS_DOC = ROOT / "docs" / "reference" / "hooks.md"
_GEN = runpy.run_path(str(ROOT / "docs" / "gen_hook_reference.py"))
SPECS = [(name, fn) for _, name, fn in _GEN["contract"]()]
spec_params = _GEN["params"]


def test_the_reference_covers_the_whole_provider_class():
    """Every public member of MemoryProvider is either documented or an event helper."""
    public = {n for n in vars(MemoryProvider) if not n.startswith("_")}
    documented = {name for name, _ in SPECS}
    helpers = {"tier", "tool_locator_args", "bind_write_listener", "emit_memory_write"}
    helpers |= {"settings_class"}  # a class attribute, described under `configure`
    assert public - documented - helpers == set()


@pytest.mark.parametrize(("name", "fn"), SPECS, ids=[n for n, _ in SPECS])
def test_hookspec_has_docstring_with_every_param(name, fn):
    doc = inspect.getdoc(fn) or ""
    assert len(doc.splitlines()[0]) > 10, f"{name}: needs a one-line summary"
    for param in spec_params(fn):
        assert f":param {param}:" in doc, f"{name}: parameter {param!r} is not documented"


@pytest.mark.parametrize(("name", "fn"), SPECS, ids=[n for n, _ in SPECS])
def test_hook_has_a_section_in_the_reference(name, fn):
    headings = re.findall(r"^### (\w+)\((.*)\)$", HOOKS_DOC.read_text(encoding="utf-8"), re.M)
    documented = {
        hook: [a.strip() for a in args.split(",") if a.strip()] for hook, args in headings
    }
    assert name in documented, f"docs/reference/hooks.md has no section for {name}"
    assert documented[name] == spec_params(fn), (
        f"{name}: documented signature differs from the spec"
    )


@pytest.mark.parametrize("name", PROVIDER_HOOK_NAMES)
def test_provider_base_class_offers_every_lifecycle_hook(name):
    assert callable(getattr(MemoryProvider, name, None)), f"MemoryProvider lacks {name}"
    assert inspect.getdoc(getattr(MemoryProvider, name)), f"MemoryProvider.{name} has no docstring"


def test_local_links_in_docs_resolve():
    broken = []
    for page in [*ROOT.glob("docs/**/*.md"), *ROOT.glob("README*.md"), ROOT / "CONTRIBUTING.md"]:
        if not page.exists():
            continue
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, "broken links: " + ", ".join(broken)


def test_hook_reference_is_up_to_date():
    render = _GEN["render"]
    assert HOOKS_DOC.read_text(encoding="utf-8") == render(), (
        "docs/reference/hooks.md is stale: run python docs/gen_hook_reference.py"
    )


def test_the_remote_provider_how_to_shows_the_example_as_it_is():
    """docs/how-to/write-a-provider.md embeds the whole kit example; it must not drift."""
    source = (
        ROOT / "plugins" / "hermes-memory-example" / "src" / "hermes_memory_example" / "_remote.py"
    ).read_text(encoding="utf-8")
    howto = (ROOT / "docs" / "how-to" / "write-a-provider.md").read_text(encoding="utf-8")
    assert f"```python\n{source}```" in howto
    assert len(source.splitlines()) <= 160
