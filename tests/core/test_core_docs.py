"""Docs cover every hook (datasette's rule): a hookspec without documentation fails here."""

from __future__ import annotations

import inspect
import re
import runpy
from pathlib import Path

import pytest

from hermes_memory_core import MemoryProvider, hookspecs

ROOT = Path(__file__).resolve().parents[2]
HOOKS_DOC = ROOT / "docs" / "reference" / "hooks.md"
SPECS = [
    (name, fn)
    for cls in (hookspecs.RegistrationSpec, hookspecs.ProviderSpec)
    for name, fn in vars(cls).items()
    if callable(fn) and not name.startswith("_")
]


def spec_params(fn):
    return [p for p in inspect.signature(fn).parameters if p != "self"]


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


@pytest.mark.parametrize("name", hookspecs.PROVIDER_HOOK_NAMES)
def test_provider_base_class_offers_every_lifecycle_hook(name):
    assert callable(getattr(MemoryProvider, name, None)), f"MemoryProvider lacks {name}"
    assert inspect.getdoc(getattr(MemoryProvider, name)), f"MemoryProvider.{name} has no docstring"


def test_local_links_in_docs_resolve():
    broken = []
    for page in [*ROOT.glob("docs/**/*.md"), ROOT / "README.md", ROOT / "CONTRIBUTING.md"]:
        if not page.exists():
            continue
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, "broken links: " + ", ".join(broken)


def test_hook_reference_is_up_to_date():
    render = runpy.run_path(str(ROOT / "docs" / "gen_hook_reference.py"))["render"]
    assert HOOKS_DOC.read_text(encoding="utf-8") == render(), (
        "docs/reference/hooks.md is stale: run python docs/gen_hook_reference.py"
    )
