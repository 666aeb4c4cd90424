"""`MemoryManager.context_for_path`: progressive discovery of context files through the manager."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory_core import ManagerClosedError, MemoryManager


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("Root rules: run the tests before committing.\n")
    service = root / "services" / "billing"
    service.mkdir(parents=True)
    (service / "AGENTS.md").write_text("计费服务：金额一律用整数分存储。\n", encoding="utf-8")
    (service / "invoice.py").write_text("print('x')\n")
    return root


def test_a_touched_directory_brings_its_context_once_per_session(repo: Path) -> None:
    manager = MemoryManager()
    manager.initialize_all("20261201_090000_aaaaaa", cwd=str(repo))
    try:
        first = manager.context_for_path(repo / "services" / "billing" / "invoice.py")
        assert first is not None and "金额一律用整数分存储" in first
        assert "Root rules" not in first  # the session's own directories are in the prompt
        assert manager.context_for_path(repo / "services" / "billing" / "invoice.py") is None
        # a new session sees the file again
        manager.on_session_switch("20261201_100000_bbbbbb", reset=True)
        again = manager.context_for_path(repo / "services" / "billing")
        assert again is not None and "金额" in again
    finally:
        manager.shutdown_all()
    with pytest.raises(ManagerClosedError):
        manager.context_for_path(repo)


def test_without_a_working_directory_nothing_is_discovered(repo: Path) -> None:
    manager = MemoryManager()
    manager.initialize_all("20261201_090000_cccccc")
    try:
        assert manager.context_for_path(repo / "services" / "billing" / "invoice.py") is None
    finally:
        manager.shutdown_all()


def test_a_working_directory_that_is_not_one_is_reported_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    manager = MemoryManager()
    manager.initialize_all("20261201_090000_dddddd", cwd=str(tmp_path / "missing"))
    try:
        assert manager.context_for_path(tmp_path) is None
        assert "project context files" in caplog.text
    finally:
        manager.shutdown_all()


def test_the_tracker_is_found_through_its_entry_point() -> None:
    from hermes_memory_context import ContextTracker
    from hermes_memory_core._project_context import installed_tracker

    assert installed_tracker() is ContextTracker
