"""Global options, error handling and the command frame of the installed script."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_help_lists_every_command(cli):
    result = cli.ok("--help")
    for command in ("memory", "sessions", "plugins", "provider", "doctor", "demo", "mcp"):
        assert command in result.out


def test_version(cli):
    assert cli.ok("--version").out.startswith("hermes-memory ")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["frobnicate"], "invalid choice"),
        ([], "required"),
        (["sessions"], "required"),
        (["sessions", "list", "--limit", "abc"], "expected a whole number"),
        (["sessions", "list", "--limit", "-3"], "expected 0 or a positive number"),
        (["sessions", "search", "x", "--limit", "0"], "greater than 0"),
        (["sessions", "prune", "--older-than", "soon"], "expected a number of days"),
        (["sessions", "prune", "--older-than", "-1"], "expected 0 or more days"),
        (["sessions", "prune", "--older-than", "nan"], "expected 0 or more days"),
        (["memory", "show", "--target", "notes"], "invalid choice"),
    ],
)
def test_usage_errors_are_one_line_exit_2(cli, args, fragment):
    result = cli(*args)
    assert result.code == 2
    result.assert_one_line_error(fragment)
    assert len(result.err.strip().splitlines()) == 1


def test_hermes_home_is_honoured_and_home_option_wins(cli, tmp_path):
    cli.ok("memory", "add", "fact in env home")
    assert "fact in env home" in (cli.home / "memories" / "MEMORY.md").read_text()
    other = tmp_path / "other"
    cli.ok("--home", str(other), "memory", "add", "fact in other home")
    assert (other / "memories" / "MEMORY.md").read_text() == "fact in other home"
    # options are accepted after the command too
    shown = cli.ok("memory", "show", "--home", str(other), "--json").json()
    assert [e["entry"] for e in shown["memory"]["entries"]] == ["fact in other home"]


def test_profile_selects_profiles_subdirectory(cli):
    cli.ok("--profile", "work", "memory", "add", "--target", "user", "works at ACME")
    assert (cli.home / "profiles" / "work" / "memories" / "USER.md").read_text() == "works at ACME"
    assert not (cli.home / "memories" / "USER.md").exists()
    shown = cli.ok("--profile", "work", "--json", "memory", "show", "--target", "user").json()
    assert shown["user"]["entry_count"] == 1


def test_bad_profile_name_is_refused(cli):
    cli("--profile", "../escape", "memory", "show").assert_one_line_error("invalid profile name")


@pytest.mark.parametrize(
    "args",
    [
        ["memory", "show"],
        ["memory", "add", "x"],
        ["sessions", "list"],
        ["sessions", "stats"],
        ["plugins"],
        ["provider", "status"],
        ["provider", "use", "example"],
    ],
)
def test_corrupt_config_is_one_clear_line(cli, args):
    (cli.home / "config.yaml").write_text("memory:\n  provider: [unclosed\n")
    result = cli(*args)
    assert result.code == 1
    result.assert_one_line_error("config.yaml", "not valid YAML")


def test_wrong_type_in_config_names_the_key(cli):
    (cli.home / "config.yaml").write_text("memory:\n  memory_char_limit: lots\n")
    cli("memory", "show").assert_one_line_error("memory.memory_char_limit")


def test_debug_shows_traceback_on_failure(cli):
    (cli.home / "config.yaml").write_text("- just a list\n")
    plain = cli("memory", "show")
    plain.assert_one_line_error("top level must be a mapping")
    debug = cli("--debug", "memory", "show")
    assert debug.code == 1
    assert "Traceback" in debug.err


def test_mcp_group_without_the_package_says_how_to_install(cli, home):
    # Hide hermes_memory_mcp_server from the import system to see the stub the CLI falls back to.
    code = (
        "import sys; sys.modules['hermes_memory_mcp_server'] = None; "
        "from hermes_memory_cli.cli import main; sys.exit(main(['mcp', 'serve']))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=cli.env, timeout=60
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == ["hermes-memory: error: install hermes-memory-mcp-server"]


def test_mcp_group_is_contributed_when_installed(cli):
    pytest.importorskip("hermes_memory_mcp_server.cli")
    result = cli.ok("mcp", "serve", "--help")
    assert "--http" in result.out
