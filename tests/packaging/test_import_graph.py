"""The import graph, read from the source (ast, nothing imported): arrows point one way.

Three rules (issue 20, DESIGN §1–2):

- no import cycle between distributions (core at the bottom, nothing imports upward; optional
  parts are found through entry-point groups instead);
- no import cycle between the modules of one package;
- no module imports another package's underscore names (``hermes_memory_x._mod`` or
  ``from hermes_memory_x.mod import _name``): a package's ``__all__`` is its whole surface.

Every import that runs counts, also one inside a function (a lazy import is still an arrow);
imports under ``if TYPE_CHECKING:`` do not run and do not count.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE_ROOTS = sorted(
    p for p in (*ROOT.glob("packages/*/src/*"), *ROOT.glob("plugins/*/src/*")) if p.is_dir()
)

#: Module cycles inside a package that are known and scheduled for removal. Each entry is the
#: sorted set of modules of one strongly connected component. Keep this list short and explain
#: every entry; a cycle not listed here fails the test, and so does an entry that is gone.
KNOWN_PACKAGE_CYCLES: dict[frozenset[str], str] = {
    frozenset(
        {"hermes_memory_sessions.vectors._archive", "hermes_memory_sessions.vectors._index"}
    ): "to be removed by the sessions reorganisation (issue 20: sessions in rooms)",
    frozenset(
        {
            "hermes_memory_sessions.storage._reads",
            "hermes_memory_sessions.storage._store",
            "hermes_memory_sessions.tool",
        }
    ): "to be removed by the sessions reorganisation (issue 20: sessions in rooms)",
}

#: Underscore names one package still takes from another: ``(importer, module, name)``.
#: Same rule: every entry says why, and an entry that is gone fails the test.
KNOWN_PRIVATE_IMPORTS: dict[tuple[str, str, str], str] = {
    (
        "hermes_memory_postgres.archive.search",
        "hermes_memory_sessions.search",
        name,
    ): "to be removed by the sessions reorganisation (the search subpackage gets a public API)"
    for name in ("_latin_only", "_needles")
} | {
    (
        "hermes_memory_postgres.archive.hybrid",
        "hermes_memory_sessions.search",
        "_needles",
    ): "to be removed by the sessions reorganisation (the search subpackage gets a public API)",
} | {
    (
        "hermes_memory_postgres.memory",
        "hermes_memory_builtin.sidecar",
        "_valid_meta",
    ): "to be removed by the builtin reorganisation (pending/store are being rewritten)",
}


@dataclass(frozen=True)
class Import:
    source: str  # importing module, dotted
    target: str  # imported module (the deepest module the statement names), dotted
    names: tuple[str, ...]  # names taken from it by ``from … import``
    line: int


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for root in SOURCE_ROOTS:
        for path in sorted(root.rglob("*.py")):
            found[_module_name(path, root)] = path
    return found


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node except the bodies of ``if TYPE_CHECKING:`` blocks."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    if level == 0:
        return target or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, target] if target else base)


def _imports(module: str, path: Path) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, alias.name, (), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, is_package, node.level, node.module)
            plain: list[str] = []
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in MODULES:  # ``from pkg import submodule``
                    yield Import(module, sub, (), node.lineno)
                else:
                    plain.append(alias.name)
            if plain:
                yield Import(module, target, tuple(plain), node.lineno)


def _package(module: str) -> str:
    return module.split(".")[0]


def _ours(module: str) -> bool:
    return _package(module) in {_package(m) for m in MODULES}


IMPORTS = [imp for mod, path in MODULES.items() for imp in _imports(mod, path)]


def _cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[frozenset[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _owner(module: str) -> str:
    """The imported module itself, or the nearest enclosing module of ours."""
    while module and module not in MODULES:
        module = module.rpartition(".")[0]
    return module


def test_the_source_tree_is_found() -> None:
    packages = {_package(m) for m in MODULES}
    assert {"hermes_memory_core", "hermes_memory_guard", "hermes_memory_sessions"} <= packages
    assert len(packages) == len(SOURCE_ROOTS) >= 18


def test_no_import_cycle_between_distributions() -> None:
    edges: dict[str, set[str]] = {}
    where: dict[tuple[str, str], str] = {}
    for imp in IMPORTS:
        src, dst = _package(imp.source), _package(imp.target)
        if src != dst and _ours(imp.target):
            edges.setdefault(src, set()).add(dst)
            where.setdefault((src, dst), f"{imp.source}:{imp.line} imports {imp.target}")
    cycles = _cycles(edges)
    detail = [
        sorted(where[(a, b)] for a in cycle for b in cycle if (a, b) in where) for cycle in cycles
    ]
    assert not cycles, f"distributions import each other: {detail}"


def test_core_and_guard_sit_at_the_bottom() -> None:
    upward = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in IMPORTS
        if _package(imp.source) in {"hermes_memory_core", "hermes_memory_guard"}
        and _ours(imp.target)
        and _package(imp.target) not in {"hermes_memory_core", "hermes_memory_guard"}
    ]
    guard_up = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in IMPORTS
        if _package(imp.source) == "hermes_memory_guard"
        and _package(imp.target) == "hermes_memory_core"
    ]
    assert not upward and not guard_up, upward + guard_up


def _package_cycles() -> dict[frozenset[str], list[str]]:
    edges: dict[str, set[str]] = {}
    for imp in IMPORTS:
        target = _owner(imp.target)
        if _package(imp.source) == _package(target) and target and target != imp.source:
            edges.setdefault(imp.source, set()).add(target)
    return {cycle: sorted(cycle) for cycle in _cycles(edges)}


def test_no_import_cycle_inside_a_package() -> None:
    cycles = _package_cycles()
    unexpected = [members for cycle, members in cycles.items() if cycle not in KNOWN_PACKAGE_CYCLES]
    assert not unexpected, f"modules of one package import each other in a circle: {unexpected}"


def test_the_allow_list_of_cycles_is_current() -> None:
    gone = [sorted(c) for c in KNOWN_PACKAGE_CYCLES if c not in _package_cycles()]
    assert not gone, f"remove these entries from KNOWN_PACKAGE_CYCLES: {gone}"


def _private_imports() -> dict[tuple[str, str, str], int]:
    """``(importer, module, name) -> line`` of each underscore name taken across packages
    (name ``""``: the module path itself has an underscore part)."""
    found: dict[tuple[str, str, str], int] = {}
    for imp in IMPORTS:
        if not _ours(imp.target) or _package(imp.source) == _package(imp.target):
            continue
        if any(part.startswith("_") for part in imp.target.split(".")[1:]):
            found[(imp.source, imp.target, "")] = imp.line
        for name in imp.names:
            if name.startswith("_"):
                found[(imp.source, imp.target, name)] = imp.line
    return found


def test_no_module_imports_another_packages_private_names() -> None:
    private = [
        f"{src}:{line} imports {name or '(module)'} from {dst}"
        for (src, dst, name), line in _private_imports().items()
        if (src, dst, name) not in KNOWN_PRIVATE_IMPORTS
    ]
    assert not private, "\n".join(private)


def test_the_allow_list_of_private_imports_is_current() -> None:
    gone = [key for key in KNOWN_PRIVATE_IMPORTS if key not in _private_imports()]
    assert not gone, f"remove these entries from KNOWN_PRIVATE_IMPORTS: {gone}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import a.b\n", [("a.b", ())]),
        ("from . import x\n", [("pkg", ("x",))]),
        ("from .m import _p\n", [("pkg.m", ("_p",))]),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import q\n",
            [("typing", ("TYPE_CHECKING",))],
        ),
        ("def f():\n    import lazy.mod\n", [("lazy.mod", ())]),
    ],
)
def test_the_reader_sees_what_runs(tmp_path: Path, source: str, expected: list[object]) -> None:
    path = tmp_path / "mod.py"
    path.write_text(source, encoding="utf-8")
    assert [(i.target, i.names) for i in _imports("pkg.mod", path)] == expected


def test_cycles_are_found() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset("abc")]
    assert _cycles({"a": {"b"}, "b": set()}) == []
