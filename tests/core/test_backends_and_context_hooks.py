"""Optional parts found through entry points, not imports: storage backends
(`load_backend`) and the project-context tracker behind `MemoryManager.context_for_path`."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_memory_core import BACKEND_GROUPS, BackendNotInstalled, MemoryManager, load_backend
from hermes_memory_core._project_context import ProjectContext


def install_dist(site: Path, module: str, code: str, groups: dict[str, dict[str, str]]) -> None:
    """A distribution on ``sys.path`` (dist-info with entry points), as pip would leave it."""
    (site / f"{module}.py").write_text(code, encoding="utf-8")
    info = site / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    text = "".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items())
        for group, entries in groups.items()
    )
    (info / "entry_points.txt").write_text(text)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("hm_backend_a", "hm_backend_broken"):
        sys.modules.pop(name, None)


def test_a_registered_backend_is_loaded_by_tier_and_name(site: Path) -> None:
    install_dist(
        site,
        "hm_backend_a",
        "def store(config, **options):\n    return ('store', config, options)\n",
        {BACKEND_GROUPS["memory"]: {"rows": "hm_backend_a:store"}},
    )
    factory = load_backend("memory", "rows")
    assert factory({"k": 1}, memory_char_limit=5) == ("store", {"k": 1}, {"memory_char_limit": 5})
    with pytest.raises(BackendNotInstalled, match=r"sessions\.backend is 'rows'"):
        load_backend("sessions", "rows")  # registered for the other tier only


def test_a_missing_or_broken_backend_is_a_clear_import_error(site: Path) -> None:
    install_dist(
        site,
        "hm_backend_broken",
        "import hm_no_such_module\n",
        {BACKEND_GROUPS["sessions"]: {"broken": "hm_backend_broken:archive"}},
    )
    with pytest.raises(BackendNotInstalled, match="install hermes-memory-nowhere") as missing:
        load_backend("sessions", "nowhere")
    assert isinstance(missing.value, ImportError)
    with pytest.raises(BackendNotInstalled, match="cannot be imported"):
        load_backend("sessions", "broken")
    with pytest.raises(ValueError, match="unknown tier"):
        load_backend("archive", "postgres")


def test_an_injected_tracker_serves_context_for_path(tmp_path: Path) -> None:
    seen: list[str] = []

    class Tracker:
        def __init__(self, cwd: str) -> None:
            seen.append(cwd)

        def discover_for_path(self, path: object) -> str | None:
            return f"rules near {Path(str(path)).name}"

    context = ProjectContext(Tracker)
    assert context.discover(tmp_path) is None  # no session started yet
    context.start(tmp_path)
    assert context.discover(tmp_path / "a.py") == "rules near a.py"
    context.start()  # a new session keeps the directory, with a fresh tracker
    assert seen == [str(tmp_path), str(tmp_path)]


def test_the_manager_works_without_a_tracker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from hermes_memory_core import _project_context

    monkeypatch.setattr(_project_context, "installed_tracker", lambda: None)
    manager = MemoryManager()
    manager.initialize_all("20261201_090000_eeeeee", cwd=str(tmp_path))
    try:
        assert manager.context_for_path(tmp_path) is None
    finally:
        manager.shutdown_all()
