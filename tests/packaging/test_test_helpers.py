"""Test modules never import a ``conftest`` by name.

Every test folder has a ``conftest.py`` and they all share the module name ``conftest``: which one
``from conftest import x`` finds depends on which folders one pytest call collects, so
``pytest tests/context tests/honcho`` failed to collect. Shared helpers live in a module with a
unique name (``<folder>_helpers.py``).
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_test_module_imports_a_conftest() -> None:
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            if any(name.split(".")[-1] == "conftest" for name in names):
                offenders.append(f"{path.relative_to(TESTS)}:{node.lineno}")
    assert offenders == []
