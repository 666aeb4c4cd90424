"""Every name docs/reference/api.md documents imports, and every ``__all__`` is documented.

The page and the packages' ``__all__`` are together the whole public surface (issue 20): a
name the page shows must exist where it says, and a name a package exports must be on the
page, in that package's section.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

API_MD = Path(__file__).resolve().parents[2] / "docs" / "reference" / "api.md"
TEXT = API_MD.read_text(encoding="utf-8")

#: Packages whose ``__all__`` must be documented in full in their own section.
DOCUMENTED_IN_FULL = (
    "hermes_memory_core",
    "hermes_memory_core.kit",
    "hermes_memory_guard",
    "hermes_memory_builtin",
    "hermes_memory_review",
    "hermes_memory_testing",
    "hermes_memory_postgres",
)

_DOTTED = re.compile(r"\bhermes_memory_[a-z_]+(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_CODE = re.compile(r"`([^`\n]+)`")
_LEADING_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?")


def _resolve(dotted: str) -> Any:
    """The object ``dotted`` names: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def _sections() -> dict[str, str]:
    """``## <package>`` heading -> its text (up to the next ``## ``)."""
    found: dict[str, str] = {}
    for block in re.split(r"(?m)^## ", TEXT)[1:]:
        heading, _, body = block.partition("\n")
        found[heading.strip()] = body
    return found


def _dotted_references() -> list[str]:
    refs = {m.group(0).rstrip(".") for m in _DOTTED.finditer(TEXT)}
    return sorted(refs)


@pytest.mark.parametrize("dotted", _dotted_references())
def test_every_dotted_name_on_the_page_imports(dotted: str) -> None:
    try:
        _resolve(dotted)
    except (ImportError, AttributeError) as exc:
        pytest.fail(f"docs/reference/api.md names {dotted}, which does not exist: {exc}")


def _table_names(body: str) -> list[str]:
    """The leading identifier of each backticked item in a table's first column."""
    names = []
    for line in body.splitlines():
        if not line.startswith("| `"):
            continue
        first = line.split("|")[1]
        for code in _CODE.findall(first):
            match = _LEADING_NAME.match(code)
            if match:
                names.append(match.group(0))
    return names


def _namespaces(package: str) -> list[Any]:
    spaces: list[Any] = [importlib.import_module(package)]
    if package == "hermes_memory_core":
        core: Any = spaces[0]
        spaces += [importlib.import_module("hermes_memory_core.kit"), core.MemoryManager]
    return spaces


@pytest.mark.parametrize(
    "package",
    [
        "hermes_memory_core",
        "hermes_memory_builtin",
        "hermes_memory_sessions",
        "hermes_memory_postgres",
    ],
)
def test_every_name_in_a_table_of_a_package_section_exists(package: str) -> None:
    spaces = _namespaces(package)
    missing = []
    for name in _table_names(_sections()[package]):
        if name.startswith(("hermes_memory_", "store.")):
            continue  # dotted names: checked above; protocol methods of a store instance
        head, _, attr = name.partition(".")
        owners = [s for s in spaces if hasattr(s, head)]
        if not owners or (attr and not any(hasattr(getattr(o, head), attr) for o in owners)):
            missing.append(name)
    assert not missing, f"api.md ({package}) documents names that do not exist: {missing}"


def _section_of(package: str) -> str:
    sections = _sections()
    if package == "hermes_memory_core.kit":
        body = sections["hermes_memory_core"]
        return body[body.index("### The adapter kit") :]
    return sections[package]


@pytest.mark.parametrize("package", DOCUMENTED_IN_FULL)
def test_every_exported_name_is_documented_in_its_section(package: str) -> None:
    module: ModuleType = importlib.import_module(package)
    body = _section_of(package)
    exported = list(getattr(module, "__all__", ()))
    assert exported, f"{package} has no __all__"
    undocumented = [n for n in exported if not re.search(rf"`[^`]*\b{re.escape(n)}\b", body)]
    assert not undocumented, f"{package}.__all__ names missing from api.md: {undocumented}"


@pytest.mark.parametrize("package", DOCUMENTED_IN_FULL)
def test_every_exported_name_imports(package: str) -> None:
    module = importlib.import_module(package)
    broken = [n for n in module.__all__ if not hasattr(module, n)]
    assert not broken, f"{package}.__all__ lists names it does not have: {broken}"
