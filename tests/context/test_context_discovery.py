"""build_context_section: discovery, priority, git-root bound, order, SOUL.md, bad input."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from context_helpers import write

from hermes_memory_context import (
    ContextError,
    build_context_section,
    collect_project_files,
    find_git_root,
    project_directories,
)

# (kind, a path relative to a directory that makes a file of that kind), priority order
KINDS = [
    ("hermes", ".hermes.md"),
    ("hermes", "HERMES.md"),
    ("agents", "AGENTS.md"),
    ("claude", "CLAUDE.md"),
    ("cursor", ".cursorrules"),
    ("cursor", ".cursor/rules/style.mdc"),
]


def test_nothing_found_is_empty(repo: Path, home: Path) -> None:
    assert build_context_section(repo / "services" / "api", home=home) == ""


@pytest.mark.parametrize(
    ("higher", "lower"),
    [
        (h, lo)
        for (i, h), (j, lo) in itertools.product(enumerate(KINDS), repeat=2)
        if h[0] != lo[0] and i < j
    ],
    ids=lambda pair: pair[1],
)
def test_each_kind_beats_the_lower_ones(
    repo: Path, home: Path, higher: tuple[str, str], lower: tuple[str, str]
) -> None:
    cwd = repo / "services" / "api"
    # the lower kind sits closer to cwd, the higher one at the root: priority still wins
    write(cwd / lower[1], f"lower rule from {lower[1]}")
    write(repo / higher[1], f"higher rule from {higher[1]}")
    section = build_context_section(cwd, home=home)
    assert f"higher rule from {higher[1]}" in section
    assert "lower rule" not in section
    kind, files = collect_project_files(cwd)
    assert kind is not None and kind.name == higher[0]
    assert [f.label for f in files] == [higher[1]]


def test_only_one_kind_loaded_when_all_are_present(repo: Path, home: Path) -> None:
    cwd = repo / "services"
    for _, name in KINDS:
        write(cwd / name, f"from {name}")
    section = build_context_section(cwd, home=home)
    assert "from .hermes.md" in section
    # .hermes.md and HERMES.md are one kind: the first of the two in a directory is used
    for _, name in KINDS[1:]:
        assert f"from {name}" not in section


def test_all_files_of_the_winning_kind_root_first(repo: Path, home: Path) -> None:
    cwd = repo / "services" / "api"
    write(repo / "AGENTS.md", "ROOT rules")
    write(repo / "services" / "AGENTS.md", "SERVICES rules")
    write(cwd / "AGENTS.md", "API rules")
    write(cwd / "CLAUDE.md", "claude rules")
    section = build_context_section(cwd, home=home)
    positions = [section.index(t) for t in ("ROOT rules", "SERVICES rules", "API rules")]
    assert positions == sorted(positions)
    assert "## AGENTS.md\n\nROOT rules" in section
    assert "## services/AGENTS.md\n\nSERVICES rules" in section
    assert "## services/api/AGENTS.md\n\nAPI rules" in section
    assert "claude rules" not in section
    assert section.startswith("# Project context\n\n")


def test_cursor_kind_loads_cursorrules_then_rule_files_in_name_order(
    repo: Path, home: Path
) -> None:
    write(repo / ".cursorrules", "legacy rules")
    write(repo / ".cursor" / "rules" / "b.mdc", "rule b")
    write(repo / ".cursor" / "rules" / "a.mdc", "rule a")
    write(repo / ".cursor" / "rules" / "notes.txt", "not a rule")
    section = build_context_section(repo, home=home)
    assert section.index("legacy rules") < section.index("rule a") < section.index("rule b")
    assert "not a rule" not in section


def test_whitespace_only_file_does_not_hide_a_lower_kind(repo: Path, home: Path) -> None:
    write(repo / ".hermes.md", "  \n\t\n")
    write(repo / "AGENTS.md", "real rules")
    section = build_context_section(repo, home=home)
    assert "real rules" in section
    assert ".hermes.md" not in section


def test_directory_named_like_a_context_file_is_not_a_file(repo: Path, home: Path) -> None:
    (repo / "AGENTS.md").mkdir()
    write(repo / "CLAUDE.md", "claude rules")
    assert "claude rules" in build_context_section(repo, home=home)


def test_files_above_the_git_root_are_ignored(repo: Path, home: Path) -> None:
    write(repo.parent / "AGENTS.md", "OUTSIDE the repository")
    write(repo.parent / ".hermes.md", "OUTSIDE hermes")
    write(repo / "CLAUDE.md", "inside rules")
    section = build_context_section(repo / "services" / "api", home=home)
    assert "OUTSIDE" not in section
    assert "inside rules" in section
    root, dirs = project_directories(repo / "services" / "api")
    assert root == repo.resolve()
    assert dirs == [
        repo.resolve(),
        (repo / "services").resolve(),
        (repo / "services/api").resolve(),
    ]


def test_git_file_marks_a_root_too(tmp_path: Path, home: Path) -> None:
    """A worktree or submodule has a ``.git`` file, not a directory."""
    outer = tmp_path / "super"
    (outer / ".git").mkdir(parents=True)
    sub = outer / "vendor" / "lib"
    write(sub / ".git", "gitdir: ../../.git/modules/lib\n")
    write(outer / "AGENTS.md", "superproject rules")
    write(sub / "AGENTS.md", "submodule rules")
    assert find_git_root(sub) == sub.resolve()
    section = build_context_section(sub, home=home)
    assert "submodule rules" in section
    assert "superproject rules" not in section


def test_without_git_root_only_cwd(tmp_path: Path, home: Path) -> None:
    cwd = tmp_path / "plain" / "dir"
    cwd.mkdir(parents=True)
    assert find_git_root(cwd) is None  # precondition: no .git anywhere above tmp_path
    write(tmp_path / "plain" / "AGENTS.md", "parent rules")
    assert build_context_section(cwd, home=home) == ""
    write(cwd / "AGENTS.md", "cwd rules")
    assert "cwd rules" in build_context_section(cwd, home=home)
    assert "parent rules" not in build_context_section(cwd, home=home)


def test_cwd_reached_through_a_symlink_is_resolved(repo: Path, tmp_path: Path, home: Path) -> None:
    write(repo / "AGENTS.md", "root rules")
    link = tmp_path / "shortcut"
    link.symlink_to(repo / "services" / "api", target_is_directory=True)
    assert "root rules" in build_context_section(link, home=home)


def test_soul_from_home_first(repo: Path, home: Path) -> None:
    write(home / "SOUL.md", "You are calm and precise.")
    write(repo / "AGENTS.md", "project rules")
    section = build_context_section(repo, home=home)
    assert section.startswith("# Persona (SOUL.md)\n\nYou are calm and precise.\n\n# Project")
    assert "project rules" in section


def test_soul_only_from_home_never_from_the_project(repo: Path, home: Path) -> None:
    write(repo / "SOUL.md", "PROJECT soul")
    write(repo / "services" / "SOUL.md", "SERVICES soul")
    assert build_context_section(repo / "services", home=home) == ""


def test_home_defaults_to_hermes_home(
    repo: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(home / "SOUL.md", "soul from the environment")
    monkeypatch.setenv("HERMES_HOME", str(home))
    assert "soul from the environment" in build_context_section(repo)


def test_missing_home_is_fine(repo: Path, tmp_path: Path) -> None:
    write(repo / "AGENTS.md", "rules")
    assert "rules" in build_context_section(repo, home=tmp_path / "does-not-exist")


@pytest.mark.parametrize("bad", ["missing", "file"])
def test_bad_cwd_is_a_clear_error(tmp_path: Path, bad: str) -> None:
    target = tmp_path / "x"
    if bad == "file":
        write(target, "I am a file")
    with pytest.raises(ContextError, match="is not a directory"):
        build_context_section(target)
    with pytest.raises(ValueError, match="is not a directory"):
        build_context_section(target)


def test_nul_in_cwd_is_a_clear_error() -> None:
    with pytest.raises(ContextError, match="not a usable path"):
        build_context_section("bad\0path")
