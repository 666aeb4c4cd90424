"""``hermes-memory plugins`` and ``provider status|use|off`` (config.yaml edits keep comments)."""

from __future__ import annotations

import pytest
import yaml

from hermes_memory_cli._configedit import ConfigEditError, with_memory_provider
from hermes_memory_cli._install import install_command
from hermes_memory_core.health import write_provider_status

USER_CONFIG = """\
# Hermes configuration — hand written, keep my comments!
model:
  default: gpt-4o   # main model
memory:
  # curated memory
  memory_enabled: true
  provider: honcho    # switched last week
  user_char_limit: 1375
toolsets: [web, terminal]
"""


def test_plugins_lists_installed_providers(cli):
    infos = {p["name"]: p for p in cli.ok("--json", "plugins").json()}
    assert infos["builtin"]["distribution"] == "hermes-memory-builtin"
    assert infos["sessions"]["distribution"] == "hermes-memory-sessions"
    assert infos["builtin"]["available"] is True
    assert "handle_tool_call" in infos["builtin"]["hooks"]
    for info in infos.values():
        assert set(info) == {
            "name",
            "plugin",
            "distribution",
            "version",
            "hooks",
            "available",
            "unavailable_reason",
            "load_error",
        }
    human = cli.ok("plugins").out
    assert "hermes-memory-builtin" in human and "hooks:" in human


def test_plugins_list_is_an_alias(cli):
    assert cli.ok("plugins", "list").out == cli.ok("plugins").out
    assert cli.ok("--json", "plugins", "list").json() == cli.ok("--json", "plugins").json()


def test_plugins_works_before_any_home_exists(cli, tmp_path):
    nowhere = tmp_path / "none"
    assert cli.ok("--home", str(nowhere), "--json", "plugins").json()
    assert not nowhere.exists()


def test_install_hint_matches_how_the_cli_was_installed(tmp_path):
    pipx = tmp_path / "pipx" / "venvs" / "hermes-memory-cli"
    pipx.mkdir(parents=True)
    (pipx / "pipx_metadata.json").write_text("{}")
    assert (
        install_command("hermes-memory-mem0", prefix=str(pipx))
        == "pipx inject hermes-memory-cli hermes-memory-mem0"
    )
    uv_tool = tmp_path / "uv" / "tools" / "hermes-memory-cli"
    uv_tool.mkdir(parents=True)
    (uv_tool / "uv-receipt.toml").write_text(
        '[tool]\nrequirements = [{ name = "hermes-memory-cli" }, { name = "hermes-memory-honcho" }]\n'
    )
    # the --with packages already there are repeated: uv would drop them otherwise
    assert (
        install_command("hermes-memory-mem0", prefix=str(uv_tool))
        == "uv tool install hermes-memory-cli --with hermes-memory-honcho --with hermes-memory-mem0"
    )
    plain = tmp_path / "venv"
    plain.mkdir()
    assert install_command("hermes-memory-mem0", prefix=str(plain)).endswith(
        "-m pip install hermes-memory-mem0"
    )
    assert install_command("x; rm -rf ~", prefix=str(plain)).endswith("'x; rm -rf ~'")


def test_plugins_respects_the_deny_list(cli):
    names = {
        p["name"]
        for p in cli.ok(
            "--json", "plugins", env={"HERMES_MEMORY_DISABLE_PLUGINS": "example"}
        ).json()
    }
    assert "example" not in names and "builtin" in names


def test_provider_use_keeps_comments_and_other_keys(cli):
    pytest.importorskip("hermes_memory_example")
    config = cli.home / "config.yaml"
    config.write_text(USER_CONFIG)
    result = cli.ok("provider", "use", "example")
    assert "memory.provider set to 'example'" in result.out
    assert config.read_text() == USER_CONFIG.replace("provider: honcho", "provider: example")
    status = cli.ok("--json", "provider", "status").json()
    assert status["provider"] == "example" and status["available"] is True
    cli.ok("provider", "off")
    assert config.read_text() == USER_CONFIG.replace("provider: honcho", 'provider: ""')
    assert cli.ok("--json", "provider", "status").json()["provider"] is None


def test_provider_use_creates_a_config_when_missing(cli):
    pytest.importorskip("hermes_memory_example")
    cli.ok("provider", "use", "example")
    config = cli.home / "config.yaml"
    assert yaml.safe_load(config.read_text()) == {"memory": {"provider": "example"}}
    assert config.stat().st_mode & 0o077 == 0


def test_provider_use_explains_what_is_missing(cli):
    pytest.importorskip("hermes_memory_mem0")
    result = cli.ok("provider", "use", "mem0")
    assert "not available yet" in result.out and "MEM0_API_KEY" in result.out
    status = cli.ok("--json", "provider", "status").json()
    assert status["available"] is False and "MEM0_API_KEY" in status["unavailable_reason"]


def test_provider_use_refuses_unknown_and_builtin_names(cli):
    config = cli.home / "config.yaml"
    config.write_text(USER_CONFIG)
    cli("provider", "use", "nosuch").assert_one_line_error(
        "no provider named 'nosuch' is installed",
        f"install it with: {install_command('hermes-memory-nosuch')}",
    )
    cli("provider", "use", "builtin").assert_one_line_error("always on")
    assert config.read_text() == USER_CONFIG


def test_provider_use_refuses_layouts_it_cannot_edit_safely(cli):
    pytest.importorskip("hermes_memory_example")
    config = cli.home / "config.yaml"
    config.write_text("memory: {provider: honcho}\n")
    cli("provider", "use", "example").assert_one_line_error("by hand")
    assert config.read_text() == "memory: {provider: honcho}\n"


def test_provider_status_shows_health(cli):
    pytest.importorskip("hermes_memory_example")
    (cli.home / "config.yaml").write_text("memory:\n  provider: example\n")
    assert "no record yet" in cli.ok("provider", "status").out
    write_provider_status(
        cli.home, "example", state="circuit_open", detail="server answered 401", failures=5
    )
    human = cli.ok("provider", "status").out
    assert "circuit_open — server answered 401 (failures: 5" in human
    health = cli.ok("--json", "provider", "status").json()["health"]
    assert health["state"] == "circuit_open" and health["failures"] == 5


def test_provider_status_for_a_provider_that_is_not_installed(cli):
    (cli.home / "config.yaml").write_text("memory:\n  provider: ghost\n")
    status = cli.ok("--json", "provider", "status").json()
    assert (
        status["installed"] is False
        and install_command("hermes-memory-ghost") in status["unavailable_reason"]
    )


# ------------------------------------------------------------------ the line edit itself
@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("", "memory:\n  provider: x\n"),
        ("model: a\n", "model: a\nmemory:\n  provider: x\n"),
        ("model: a", "model: a\nmemory:\n  provider: x\n"),
        (
            "memory:\n    memory_enabled: true\n",
            "memory:\n    provider: x\n    memory_enabled: true\n",
        ),
        ("memory:\n  provider:\n", "memory:\n  provider: x\n"),
        ("memory:\n  provider: 'old' # c\n", "memory:\n  provider: x # c\n"),
        ("memory:\r\n  provider: old\r\nother: 1\r\n", "memory:\r\n  provider: x\r\nother: 1\r\n"),
        (
            "memory: # mine\n  nested:\n    provider: keep\n",
            "memory: # mine\n  provider: x\n  nested:\n    provider: keep\n",
        ),
        (
            "memory:\n\n  # comment\n  user_char_limit: 5\nsessions:\n  db_path: a.db\n",
            "memory:\n  provider: x\n\n  # comment\n  user_char_limit: 5\nsessions:\n  db_path: a.db\n",
        ),
    ],
)
def test_with_memory_provider(before, after):
    assert with_memory_provider(before, "x") == after


def test_with_memory_provider_quotes_odd_values():
    text = with_memory_provider("memory:\n  provider: a\n", "")
    assert yaml.safe_load(text) == {"memory": {"provider": ""}}
    text = with_memory_provider("memory:\n  provider: a\n", "yes")
    assert yaml.safe_load(text) == {"memory": {"provider": "yes"}}


@pytest.mark.parametrize(
    "before",
    ["memory: {provider: a}\n", "memory: null\n", 'memory:\n  provider: "a#b"\n  provider2: [\n'],
)
def test_with_memory_provider_refuses_what_it_cannot_do_safely(before):
    with pytest.raises(ConfigEditError):
        with_memory_provider(before, "x")
