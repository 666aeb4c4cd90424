"""Developer sessions: lint, typecheck, tests per package in its own venv, docs, benchmarks.

Run ``uvx nox -l`` to list them. Every session builds its own virtualenv with uv, so a
package's tests run with only what that package declares (a dependency that the shared
workspace venv happens to have cannot hide there).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv"
nox.options.sessions = ["lint", "typecheck", "tests", "docs"]

ROOT = Path(__file__).resolve().parent

# Every distribution of the workspace -> the test folder(s) that exercise it
# (tests/packaging checks that this covers every pyproject under packages/ and plugins/).
PACKAGES = {
    "packages/hermes-memory-core": ["tests/core"],
    "packages/hermes-memory-guard": ["tests/guard"],
    "packages/hermes-memory-testing": ["tests/testing"],
    "packages/hermes-memory-review": ["tests/review"],
    "packages/hermes-memory-builtin": ["tests/builtin"],
    "packages/hermes-memory-sessions": ["tests/sessions"],
    "packages/hermes-memory-cli": ["tests/cli", "tests/integration"],
    "packages/hermes-memory-mcp-server": ["tests/mcp"],
    "packages/hermes-memory-context": ["tests/context"],
    "packages/hermes-memory-vectors": ["tests/vectors"],
    # needs a server: HERMES_MEMORY_TEST_PG_DSN, else these tests skip
    "packages/hermes-memory-postgres": ["tests/postgres", "tests/backends"],
    "plugins/hermes-memory-example": ["tests/example"],
    "plugins/hermes-memory-mem0": ["tests/mem0"],
    "plugins/hermes-memory-honcho": ["tests/honcho"],
    "plugins/hermes-memory-facts": ["tests/facts"],
    "plugins/hermes-memory-byterover": ["tests/byterover"],
    "plugins/hermes-memory-retaindb": ["tests/retaindb"],
    "plugins/hermes-memory-openviking": ["tests/openviking"],
    "plugins/hermes-memory-hindsight": ["tests/hindsight"],
    "plugins/hermes-memory-supermemory": ["tests/supermemory"],
}
# Workspace packages a package's tests need beyond what the package itself declares.
TEST_ONLY_DEPS = {
    # the review and isolation tests drive the real builtin and sessions tiers
    "packages/hermes-memory-core": [
        "packages/hermes-memory-builtin",
        "packages/hermes-memory-sessions",
    ],
    # test_archive_scrubbing runs the same checks on the PostgreSQL archive
    "packages/hermes-memory-sessions": [
        "packages/hermes-memory-postgres",
        "packages/hermes-memory-vectors",
    ],
    "packages/hermes-memory-mcp-server": [
        "packages/hermes-memory-cli",
        "plugins/hermes-memory-example",  # an external provider to route to
    ],
    # the review runs through a real MemoryManager and the builtin tier's memory tool
    "packages/hermes-memory-review": ["packages/hermes-memory-builtin"],
    "plugins/hermes-memory-mem0": ["packages/hermes-memory-builtin"],
    "plugins/hermes-memory-honcho": ["packages/hermes-memory-builtin"],
}


CORE = "packages/hermes-memory-core"
TESTING = "packages/hermes-memory-testing"


def _declared(package: str) -> list[str]:
    """Workspace packages ``package`` declares in its pyproject (not extras)."""
    project = tomllib.loads((ROOT / package / "pyproject.toml").read_text("utf-8"))["project"]
    by_name = {Path(p).name: p for p in PACKAGES}
    names = (re.split(r"[<>=!~;\[ ]", dep, maxsplit=1)[0] for dep in project["dependencies"])
    return [by_name[name] for name in names if name in by_name]


def _local_deps(package: str) -> list[str]:
    """Workspace packages to install from the tree (not from PyPI), dependencies first."""
    order: list[str] = []

    def visit(pkg: str) -> None:
        for dep in _declared(pkg):
            if dep not in order:
                visit(dep)
                order.append(dep)

    visit(package)
    extras = list(TEST_ONLY_DEPS.get(package, []))
    if package == CORE or CORE in order:
        # this repository's tests use the fixtures of the pytest plugin of hermes-memory-testing
        extras.append(TESTING)
    for extra in extras:
        visit(extra)
        if extra not in order:
            order.append(extra)
    return [dep for dep in order if dep != package]


# Workspace packages a package depends on (installed from the tree, not from PyPI).
LOCAL_DEPS = {package: _local_deps(package) for package in PACKAGES}
TEST_DEPS = ["pytest>=8", "pytest-timeout>=2.3", "hypothesis>=6.100"]


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check over the whole tree."""
    session.install("ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict on every package (configured in the root pyproject)."""
    session.install("mypy", "types-PyYAML", "pytest", *[a for p in PACKAGES for a in ("-e", p)])
    session.run("mypy")


@nox.session
@nox.parametrize("package", list(PACKAGES))
def tests(session: nox.Session, package: str) -> None:
    """The tests of one package, in a venv holding only that package and what it declares."""
    local = [arg for dep in LOCAL_DEPS[package] for arg in ("-e", dep)]
    session.install(*TEST_DEPS, *local, "-e", package)
    # the root pytest config names an ini option of core's pytest plugin (absent here when
    # the package does not need core, e.g. the guard)
    session.run(
        "pytest", "-W", "ignore::pytest.PytestConfigWarning", *PACKAGES[package], *session.posargs
    )


@nox.session
def docs(session: nox.Session) -> None:
    """Check the docs: every hook documented, every link to a local file resolves."""
    core = "packages/hermes-memory-core"
    session.install(*TEST_DEPS, *[a for d in LOCAL_DEPS[core] for a in ("-e", d)], "-e", core)
    session.run("pytest", "tests/core/test_core_docs.py", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Run the benchmarks (prints figures; record them in docs/benchmarks.md)."""
    session.run("uv", "sync", "--all-packages", external=True)
    for script in sorted(__import__("pathlib").Path("benchmarks").glob("bench_*.py")):
        session.run("uv", "run", "--all-packages", "python", str(script), external=True)
