"""The pytest plugin's fixtures: namespaced by default, short names only when asked for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

TEST = """
import os
from pathlib import Path

def test_namespaced(hermes_memory_home, hermes_memory_manager, hermes_memory_no_network):
    assert os.environ["HERMES_HOME"] == str(hermes_memory_home)
    assert hermes_memory_manager.providers == []

def test_short(hermes_home):
    assert Path(hermes_home).is_dir()
"""


def _run(tmp_path: Path, ini: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_user.py").write_text(TEST, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text(f"[pytest]\n{ini}\n", encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )


def test_only_namespaced_fixtures_by_default(tmp_path: Path) -> None:
    done = _run(tmp_path, "")
    assert "1 passed" in done.stdout and "1 error" in done.stdout, done.stdout
    assert "fixture 'hermes_home' not found" in done.stdout


@pytest.mark.parametrize("value", ["true", "1"])
def test_short_names_are_opt_in(tmp_path: Path, value: str) -> None:
    done = _run(tmp_path, f"hermes_memory_short_fixtures = {value}")
    assert "2 passed" in done.stdout, done.stdout
