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
    from importlib.metadata import version

    out = cli.ok("--version").out
    assert out.startswith(f"hermes-memory {version('hermes-memory-cli')} (core ")
    assert f"sessions {version('hermes-memory-sessions')}" in out


@pytest.mark.parametrize(
    ("args", "heading"),
    [([], "COMMAND"), (["sessions"], "ACTION"), (["memory"], "ACTION")],
)
def test_missing_command_prints_help_and_is_a_usage_error(cli, args, heading):
    result = cli(*args)
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("usage: hermes-memory")
    assert "positional arguments" in result.err
    result.assert_one_line_error(f"choose a {heading} from the list above")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["frobnicate"], "invalid choice"),
        (["sessions", "list", "--limit", "abc"], "expected a whole number"),
        (["sessions", "list", "--limit", "-3"], "expected a number from 1 to 100,000"),
        (["sessions", "list", "--limit", "0"], "expected a number from 1 to 100,000"),
        (["sessions", "list", "--limit", str(10**9)], "expected a number from 1 to 100,000"),
        (["sessions", "search", "x", "--limit", "0"], "expected a number from 1 to 1,000"),
        (["sessions", "search", "x", "--limit", "-1"], "expected a number from 1 to 1,000"),
        (["sessions", "search", "x", "--limit", str(10**9)], "from 1 to 1,000"),
        (["sessions", "show", "x", "--window", str(10**9)], "from 0 to 1,000"),
        (["sessions", "search", "x", "--role", "bogus"], "unknown role bogus"),
        (["sessions", "search", "x", "--role", "user,admin"], "unknown role admin"),
        (["plugins", "lst"], "invalid choice"),
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


@pytest.mark.parametrize(
    "args",
    [
        ["memory", "show"],
        ["sessions", "list"],
        ["sessions", "search", "x"],
        ["sessions", "stats"],
        ["sessions", "show", "abc"],
        ["sessions", "export"],
        ["provider", "status"],
        ["doctor"],
        ["memory", "remove", "--yes", "x"],
    ],
)
def test_read_commands_on_a_mistyped_home_create_nothing(cli, tmp_path, args):
    typo = tmp_path / "hermse"
    result = cli("--home", str(typo), *args)
    assert result.code == 1
    assert not typo.exists()
    if args != ["doctor"]:
        result.assert_one_line_error(f"the Hermes home {typo} does not exist (from --home)")
    else:
        assert "does not exist" in result.out
    via_env = cli(*args, env={"HERMES_HOME": str(typo)})
    assert via_env.code == 1 and not typo.exists()


def test_mistyped_profile_names_the_existing_ones(cli):
    cli.ok("--profile", "work", "memory", "add", "fact")
    result = cli("--profile", "wrok", "memory", "show")
    result.assert_one_line_error("profile 'wrok' does not exist", "existing profiles: work")
    assert not (cli.home / "profiles" / "wrok").exists()


def test_first_write_says_it_created_the_home(cli, tmp_path):
    new = tmp_path / "brand-new"
    first = cli.ok("--home", str(new), "memory", "add", "first fact")
    assert f"Created the Hermes home {new}" in first.err
    assert (new / "memories" / "MEMORY.md").read_text() == "first fact"
    assert oct(new.stat().st_mode & 0o777) == "0o700"
    second = cli.ok("--home", str(new), "memory", "add", "second fact")
    assert "Created" not in second.err
    profile = cli.ok("--profile", "fresh", "provider", "off")
    assert f"Created the Hermes home {cli.home / 'profiles' / 'fresh'}" in profile.err


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
        "from hermes_memory_cli._cli import main; sys.exit(main(['mcp', 'serve']))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=cli.env, timeout=60
    )
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("hermes-memory: error: install hermes-memory-mcp-server: ")
    assert lines[0].endswith(" hermes-memory-mcp-server")


def test_mcp_group_is_contributed_when_installed(cli):
    pytest.importorskip("hermes_memory_mcp_server._cli")
    result = cli.ok("mcp", "serve", "--help")
    assert "--http" in result.out
