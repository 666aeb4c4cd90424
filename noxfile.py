"""Developer sessions: lint, typecheck, tests per package in its own venv, docs, benchmarks.

Run ``uvx nox -l`` to list them. Every session builds its own virtualenv with uv, so a
package's tests run with only what that package declares (a dependency that the shared
workspace venv happens to have cannot hide there).
"""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "uv"
nox.options.sessions = ["lint", "typecheck", "tests", "docs"]

# package directory -> test folder(s) that exercise it
PACKAGES = {
    "packages/hermes-memory-core": ["tests/core"],
    "packages/hermes-memory-builtin": ["tests/builtin"],
    "packages/hermes-memory-sessions": ["tests/sessions"],
    "packages/hermes-memory-cli": ["tests/cli"],
    "packages/hermes-memory-mcp-server": ["tests/mcp"],
    "packages/hermes-memory-context": ["tests/context"],
    "packages/hermes-memory-vectors": ["tests/vectors"],
    "plugins/hermes-memory-example": ["tests/example"],
    "plugins/hermes-memory-mem0": ["tests/mem0"],
    "plugins/hermes-memory-honcho": ["tests/honcho"],
}
# Workspace packages a package depends on (installed from the tree, not from PyPI).
LOCAL_DEPS = {
    "packages/hermes-memory-builtin": ["packages/hermes-memory-core"],
    "packages/hermes-memory-sessions": ["packages/hermes-memory-core"],
    "packages/hermes-memory-context": ["packages/hermes-memory-core"],
    "packages/hermes-memory-vectors": ["packages/hermes-memory-core"],
    "packages/hermes-memory-cli": [
        "packages/hermes-memory-core",
        "packages/hermes-memory-builtin",
        "packages/hermes-memory-sessions",
    ],
    "packages/hermes-memory-mcp-server": [
        "packages/hermes-memory-core",
        "packages/hermes-memory-builtin",
        "packages/hermes-memory-sessions",
        "packages/hermes-memory-cli",
        "plugins/hermes-memory-example",  # test-only: an external provider to route to
    ],
    "plugins/hermes-memory-example": ["packages/hermes-memory-core"],
    "plugins/hermes-memory-mem0": ["packages/hermes-memory-core", "packages/hermes-memory-builtin"],
    "plugins/hermes-memory-honcho": [
        "packages/hermes-memory-core",
        "packages/hermes-memory-builtin",
    ],
}
TEST_DEPS = ["pytest>=8", "pytest-timeout>=2.3"]


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
    local = [arg for dep in LOCAL_DEPS.get(package, []) for arg in ("-e", dep)]
    session.install(*TEST_DEPS, *local, "-e", package)
    session.run("pytest", *PACKAGES[package], *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """Check the docs: every hook documented, every link to a local file resolves."""
    session.install(*TEST_DEPS, "-e", "packages/hermes-memory-core")
    session.run("pytest", "tests/core/test_core_docs.py", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Run the benchmarks (prints figures; record them in docs/benchmarks.md)."""
    session.run("uv", "sync", "--all-packages", external=True)
    for script in sorted(__import__("pathlib").Path("benchmarks").glob("bench_*.py")):
        session.run("uv", "run", "--all-packages", "python", str(script), external=True)
