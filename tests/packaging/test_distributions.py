"""Our distributions: free names, no import-package clash, wheels that install and run.

`hermes-memory` and `hermes-memory-mcp` on PyPI are unrelated projects that install the import
packages `hermes_memory` and `hermes_memory_mcp`. A user who follows our docs must never get
their code, and installing ours beside theirs must not overwrite a module of theirs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECTS = sorted((ROOT / "packages").glob("*/pyproject.toml")) + sorted(
    (ROOT / "plugins").glob("*/pyproject.toml")
)
# Other people's projects on PyPI (checked 2026-12-01 with `pip download --no-deps`).
TAKEN_DISTRIBUTIONS = {"hermes-memory", "hermes-memory-mcp"}
TAKEN_IMPORTS = {"hermes_memory", "hermes_memory_mcp"}
# The providers added in 0.2 (mem0 and Honcho pull in large SDKs and have their own suites).
NEW_PROVIDERS = ("hindsight", "supermemory", "openviking", "retaindb", "byterover", "facts")
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))] + [
    p.parent / "README.md" for p in PROJECTS
]


def _normalise(name: str) -> str:
    """PEP 503: PyPI treats runs of ``-``, ``_`` and ``.`` and any case as the same name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _project(path: Path) -> dict[str, object]:
    return tomllib.loads(path.read_text(encoding="utf-8"))["project"]  # type: ignore[no-any-return]


def test_no_distribution_uses_a_taken_name() -> None:
    names = {_normalise(str(_project(p)["name"])) for p in PROJECTS}
    assert len(names) == len(PROJECTS)
    assert not names & TAKEN_DISTRIBUTIONS
    assert all(n.startswith("hermes-memory-") for n in names)


def test_import_names_match_distribution_names_and_clash_with_nothing() -> None:
    for path in PROJECTS:
        dist = str(_project(path)["name"])
        packages = [p.name for p in (path.parent / "src").iterdir() if p.is_dir()]
        packages = [p for p in packages if not p.startswith((".", "__"))]
        assert packages == [dist.replace("-", "_")], path
        assert not set(packages) & TAKEN_IMPORTS


def test_every_internal_dependency_has_a_version_floor() -> None:
    ours = {_normalise(str(_project(p)["name"])) for p in PROJECTS}
    for path in PROJECTS:
        project = _project(path)
        deps = list(project.get("dependencies", []))  # type: ignore[call-overload]
        for extra in dict(project.get("optional-dependencies", {})).values():  # type: ignore[call-overload]
            deps += extra
        for dep in deps:
            name = re.split(r"[<>=!~;\[ ]", dep, maxsplit=1)[0]
            if _normalise(name) in ours:
                assert ">=" in dep, f"{path}: {dep} has no floor"


def test_docs_never_tell_a_user_to_install_someone_elses_package() -> None:
    install = re.compile(
        r"(?:pip install|pipx install|uv tool install|uvx|uv pip install|--from|--with)"
        r"\s+(?:-\S+\s+)*[\"']?([A-Za-z0-9_.\-]+)"
    )
    offenders = []
    for doc in DOCS:
        if not doc.exists():
            continue
        for match in install.finditer(doc.read_text(encoding="utf-8")):
            if _normalise(match.group(1)) in TAKEN_DISTRIBUTIONS:
                offenders.append(f"{doc.relative_to(ROOT)}: {match.group(0)}")
    assert offenders == []


def test_one_version_source_per_distribution() -> None:
    """The version is written in pyproject.toml only; code reads it from installed metadata."""
    for path in PROJECTS:
        for source in (path.parent / "src").rglob("*.py"):
            text = source.read_text(encoding="utf-8")
            assert not re.search(r"^__version__\s*=\s*[\"']", text, re.M), source


@pytest.mark.slow
def test_wheels_install_into_a_fresh_venv_and_run(tmp_path: Path) -> None:
    """Build the meta-package's wheels, install them into an empty venv, run the commands."""
    uv = os.environ.get("UV")
    if not uv:
        if os.environ.get("CI") == "true":
            pytest.fail("UV is not set: run the suite through `uv run` as the README says")
        pytest.skip("needs uv (run the suite through `uv run`, which sets UV)")
    dist = tmp_path / "dist"
    wanted = [
        "hermes-memory-guard",
        "hermes-memory-review",
        "hermes-memory-core",
        "hermes-memory-builtin",
        "hermes-memory-sessions",
        "hermes-memory-cli",
        "hermes-memory-mcp-server",
        *(f"hermes-memory-{name}" for name in NEW_PROVIDERS),
    ]
    for name in wanted:
        subprocess.run(
            [uv, "build", "--quiet", "--wheel", "--package", name, "--out-dir", str(dist)],
            cwd=ROOT,
            check=True,
            timeout=300,
        )
    wheels = sorted(dist.glob("*.whl"))
    assert [w.name.split("-")[0] for w in wheels] == sorted(n.replace("-", "_") for n in wanted)
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as zf:
            tops = {
                n.split("/")[0] for n in zf.namelist() if not n.split("/")[0].endswith(".dist-info")
            }
            assert not tops & TAKEN_IMPORTS, wheel
            assert any(
                n.endswith("/licenses/LICENSE") or n.endswith("/LICENSE") for n in zf.namelist()
            )

    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [uv, "pip", "install", "--quiet", "--python", str(python), *map(str, wheels)],
        check=True,
        timeout=600,
    )
    version = str(_project(ROOT / "packages/hermes-memory-cli/pyproject.toml")["version"])
    out = subprocess.run(
        [str(venv / "bin" / "hermes-memory"), "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert version in out.stdout
    out = subprocess.run(
        [str(venv / "bin" / "hermes-memory-mcp"), "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert version in out.stdout + out.stderr
    plugins = subprocess.run(
        [str(venv / "bin" / "hermes-memory"), "--json", "plugins"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, "HERMES_HOME": str(tmp_path / "plugins-home")},
    )
    listed = {p["name"]: p for p in json.loads(plugins.stdout)}
    for name in NEW_PROVIDERS:
        assert listed[name]["distribution"] == f"hermes-memory-{name}"
        assert listed[name]["load_error"] is None, listed[name]
        assert isinstance(listed[name]["available"], bool)
    assert listed["facts"]["available"] is True  # local: nothing to configure
    assert listed["supermemory"]["available"] is False  # no key in this environment
    home = tmp_path / "home"
    demo = subprocess.run(
        [str(venv / "bin" / "hermes-memory"), "demo"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HERMES_HOME": str(home)},
    )
    assert demo.returncode == 0, demo.stderr
    assert "Demo finished" in demo.stdout
    assert not home.exists()  # the demo runs on a temporary home of its own


def test_noxfile_gives_every_distribution_a_test_session() -> None:
    """noxfile.PACKAGES (read with ast: nox need not be installed) names every pyproject under
    packages/ and plugins/, and each with test folders that exist."""
    import ast

    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    packages: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "PACKAGES" for t in node.targets
        ):
            packages = ast.literal_eval(node.value)
    expected = {str(p.parent.relative_to(ROOT)) for p in PROJECTS}
    assert set(packages) == expected
    missing = [f for folders in packages.values() for f in folders if not (ROOT / f).is_dir()]
    assert not missing
