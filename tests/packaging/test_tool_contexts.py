"""Adapter tool modules use the narrow context their provider builds, never its private state.

Issue 20: ``retaindb/tools.py`` (now ``_tools.py``) set ``p._profile`` and called
``p._enqueue``; three more tool modules added to ``p._known_facts``. Each adapter's tools now
get a small typed context (``ToolContext``) with exactly the calls they need. This reads every
plugin's tool modules (ast, nothing imported) and fails on any access to an underscore
attribute of an object other than the module's own classes (``self``/``cls``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL_MODULES = sorted(ROOT.glob("plugins/*/src/*/_tools*.py"))


def _private_accesses(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
            continue
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
            continue
        found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_there_are_tool_modules_to_check() -> None:
    names = {path.parents[2].name for path in TOOL_MODULES}
    assert {"hermes-memory-retaindb", "hermes-memory-hindsight"} <= names


@pytest.mark.parametrize("path", TOOL_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_tool_module_touches_no_private_state(path: Path) -> None:
    assert _private_accesses(path.read_text(encoding="utf-8")) == []


def test_the_check_catches_provider_privates() -> None:
    source = (
        "def f(p, provider):\n    p._profile = []\n    provider._enqueue(1)\n    self._ok = 1\n"
    )
    assert _private_accesses(source) == ["line 2: p._profile", "line 3: provider._enqueue"]
