"""config, completion, plugins install, Markdown export and the search/list filters,
each through the console script."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_memory_cli._install import install_argv, install_command, installer_kind
from hermes_memory_sessions.storage import SessionStore

BIN = Path(sys.executable).parent
DAY = 86400.0
T0 = 1_741_000_000.0  # 2025-03-03 around 11:06 UTC


# --------------------------------------------------------------------------- config
CONFIG = """\
# my Hermes config: comments stay
model:
  default: claude  # Hermes' own section
memory:
  memory_enabled: true   # keep this
  nudge_intervall: 3
"""


def test_config_set_get_unset_keep_comments(cli, home):
    path = home / "config.yaml"
    path.write_text(CONFIG)
    cli.ok("config", "set", "memory.nudge_interval", "5")
    cli.ok("config", "set", "sessions.follow_hermes", "yes")
    text = path.read_text()
    assert text.startswith(CONFIG)  # every line of the file kept, byte for byte
    assert "  nudge_interval: 5\n" in text and "sessions:\n  follow_hermes: true\n" in text
    assert cli.ok("config", "get", "memory.nudge_interval").out == "5\n"
    got = cli.ok("--json", "config", "get", "memory.user_char_limit").json()
    assert got == {"key": "memory.user_char_limit", "value": 1375, "source": "default"}
    cli.ok("config", "unset", "memory.nudge_interval")
    assert "nudge_interval: 5" not in path.read_text()
    assert path.read_text().startswith(CONFIG)
    assert "nothing changed" in cli.ok("config", "unset", "memory.nudge_interval").out


def test_config_validates_and_suggests(cli, home):
    (home / "config.yaml").write_text(CONFIG)
    before = (home / "config.yaml").read_text()
    bad = cli("config", "set", "memory.nudge_interval", "soon")
    bad.assert_one_line_error("memory.nudge_interval", "integer")
    assert bad.code == 2
    cli("config", "set", "sessions.backend", "mysql").assert_one_line_error("sqlite, postgres")
    cli("config", "set", "memory.nudge_interva", "5").assert_one_line_error(
        "did you mean memory.nudge_interval?"
    )
    cli("config", "get", "sesions.follow_hermes").assert_one_line_error(
        "did you mean sessions.follow_hermes?"
    )
    assert (home / "config.yaml").read_text() == before  # nothing written
    listed = cli.ok("--json", "config", "list", "memory").json()
    assert {"key": "memory.nudge_intervall", "did_you_mean": "memory.nudge_interval"} in (
        listed["unknown"]
    )
    assert "did you mean memory.nudge_interval?" in cli.ok("config", "list").err
    doctor = cli.ok("--json", "doctor").json()
    finding = next(c for c in doctor["checks"] if c["check"] == "config:keys")
    assert "did you mean memory.nudge_interval?" in finding["detail"]


def test_config_never_prints_a_secret(cli, home):
    cli.ok("config", "set", "postgres.dsn", "postgresql://u:hunter2@db/x")
    assert "hunter2" in (home / "config.yaml").read_text()
    for args in (("config", "get", "postgres.dsn"), ("config", "list", "postgres")):
        result = cli.ok(*args)
        assert "hunter2" not in result.out + result.err


def test_config_set_on_a_missing_home_creates_it_and_get_reads_defaults(cli, tmp_path):
    fresh = tmp_path / "fresh"
    assert cli.ok("--home", str(fresh), "config", "get", "memory.provider").out == '""\n'
    assert not fresh.exists()
    cli.ok("--home", str(fresh), "config", "set", "memory.provider", "mem0")
    assert (fresh / "config.yaml").read_text() == "memory:\n  provider: mem0\n"


# --------------------------------------------------------------------------- completion
def _bash_complete(script: Path, *words: str) -> list[str]:
    """Source the script in a real bash and complete ``words`` (the last one is typed)."""
    array = " ".join(f"'{w}'" for w in words)
    program = (
        f"source {script}\n"
        "complete -p hermes-memory\n"
        f"COMP_WORDS=({array}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))\n"
        "_hermes_memory\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    proc = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", program],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    lines = proc.stdout.splitlines()
    assert lines[0] == "complete -o default -F _hermes_memory hermes-memory"
    return lines[1:]


def test_bash_completion_in_a_real_bash(cli, tmp_path):
    script = tmp_path / "hm.bash"
    script.write_text(cli.ok("completion", "bash").out)
    assert _bash_complete(script, "hermes-memory", "ses") == ["sessions"]
    assert "export" in _bash_complete(script, "hermes-memory", "sessions", "")
    assert _bash_complete(script, "hermes-memory", "config", "") == ["get", "set", "unset", "list"]
    assert _bash_complete(script, "hermes-memory", "sessions", "export", "--format", "") == [
        "jsonl",
        "markdown",
    ]
    # an option's value is skipped while finding the command
    assert _bash_complete(
        script, "hermes-memory", "--home", "/x", "memory", "show", "--target", ""
    ) == ["memory", "user"]
    assert set(_bash_complete(script, "hermes-memory", "sessions", "search", "--s")) == {
        "--since",
        "--source",
    }
    assert _bash_complete(script, "hermes-memory", "completion", "") == ["bash", "zsh", "fish"]


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completion_in_a_real_fish(cli, tmp_path):
    script = tmp_path / "hm.fish"
    script.write_text(cli.ok("completion", "fish").out)

    def complete(line: str) -> list[str]:
        proc = subprocess.run(
            ["fish", "--no-config", "-c", f"source {script}; complete -C '{line}'"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return [row.split("\t")[0] for row in proc.stdout.splitlines()]

    assert complete("hermes-memory ses") == ["sessions"]
    assert complete("hermes-memory sessions export --format ") == ["jsonl", "markdown"]
    assert "unset" in complete("hermes-memory config ")


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completion_registers_in_a_real_zsh(cli, tmp_path):
    script = tmp_path / "_hermes-memory"
    script.write_text(cli.ok("completion", "zsh").out)
    proc = subprocess.run(
        ["zsh", "-f", "-c", f"source {script}; print -r -- $_comps[hermes-memory]"],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "HOME": str(tmp_path)},
        check=True,
    )
    assert "_hermes_memory" in proc.stdout


# --------------------------------------------------------------------------- plugins install
def test_installer_detection(tmp_path):
    pipx = tmp_path / "pipx"
    pipx.mkdir()
    (pipx / "pipx_metadata.json").write_text("{}")
    assert installer_kind(str(pipx)) == "pipx"
    assert install_argv("hermes-memory-mem0", prefix=str(pipx)) == [
        "pipx",
        "inject",
        "hermes-memory-cli",
        "hermes-memory-mem0",
    ]
    uv = tmp_path / "uv"
    uv.mkdir()
    (uv / "uv-receipt.toml").write_text(
        '[tool]\nrequirements = [{ name = "hermes-memory-cli" }, { name = "hermes-memory-facts" }]\n'
    )
    assert installer_kind(str(uv)) == "uv-tool"
    assert install_command("hermes-memory-sessions[vectors]", prefix=str(uv)) == (
        "uv tool install hermes-memory-cli --with hermes-memory-facts"
        " --with 'hermes-memory-sessions[vectors]'"
    )
    plain = tmp_path / "venv"
    plain.mkdir()
    assert installer_kind(str(plain)) == "pip"
    assert install_argv("x", prefix=str(plain)) == [str(plain / "bin" / "python"), "-m", "pip",
                                                    "install", "x"]  # fmt: skip


def test_plugins_install_dry_run(cli):
    out = cli.ok("plugins", "install", "mem0", "--dry-run").out.strip()
    assert out.endswith("install hermes-memory-mem0")
    data = cli.ok("--json", "plugins", "install", "vectors[onnx]", "--dry-run").json()
    assert data["distribution"] == "hermes-memory-vectors[onnx]"
    assert data["command"][-1] == "hermes-memory-vectors[onnx]"
    assert data["installer"] in {"pip", "uv-pip", "pipx", "uv-tool"}
    third = cli.ok("--json", "plugins", "install", "acme-memory", "--dry-run").json()
    assert third["distribution"] == "acme-memory"
    cli("plugins", "install").assert_one_line_error("needs a NAME")
    assert cli("plugins", "install", "--dry-run", "--", "-e.").code == 2  # never an option


# --------------------------------------------------------------------------- export / filters
@pytest.fixture
def archive(cli):
    with SessionStore(cli.archive) as store:
        store.create_session("s0", source="cli", started_at=T0, title="deploy plan")
        store.append_message("s0", "user", "How do we deploy kubernetes?", timestamp=T0)
        store.append_message(
            "s0",
            "assistant",
            "Let me look. ```not a fence```",
            tool_calls=[
                {"id": "c1", "function": {"name": "terminal", "arguments": '{"cmd": "ls"}'}}
            ],
            timestamp=T0 + 1,
        )
        store.append_message(
            "s0", "tool", "pod-1 Running", tool_name="terminal", tool_call_id="c1", timestamp=T0 + 2
        )
        store.create_session("s1", source="telegram", started_at=T0 + 2 * DAY)
        store.append_message("s1", "user", "kubernetes again", timestamp=T0 + 2 * DAY)
    return cli.archive


def test_export_markdown(cli, archive, tmp_path):
    text = cli.ok("sessions", "export", "--format", "markdown", "s0").out
    assert text.startswith("# deploy plan\n")
    assert "- **Source:** cli" in text and "## User · " in text and "## Assistant · " in text
    assert "<summary>Tool call: terminal</summary>" in text
    assert "<summary>Tool result: terminal</summary>" in text and "pod-1 Running" in text
    out = tmp_path / "md"
    cli.ok("sessions", "export", "--format", "markdown", "-o", str(out))
    assert sorted(p.name for p in out.iterdir()) == ["s0.md", "s1.md"]
    single = tmp_path / "one.md"
    cli.ok("sessions", "export", "--format", "markdown", "s1", "-o", str(single))
    assert single.read_text().startswith("# s1\n")
    # the default stays the re-importable JSON Lines export
    assert cli.ok("sessions", "export").out.startswith('{"type": ')


def test_search_and_list_filters(cli, archive):
    def ids(*args: str) -> list[str]:
        return sorted(
            {row.get("session_id") or row["id"] for row in cli.ok("--json", *args).json()}
        )

    assert ids("sessions", "list") == ["s0", "s1"]
    assert ids("sessions", "list", "--since", "2025-03-04") == ["s1"]
    assert ids("sessions", "list", "--until", "2025-03-04") == ["s0"]
    assert ids("sessions", "list", "--role", "tool") == ["s0"]
    assert ids("sessions", "search", "kubernetes") == ["s0", "s1"]
    assert ids("sessions", "search", "kubernetes", "--source", "telegram") == ["s1"]
    assert ids("sessions", "search", "kubernetes", "--since", "2025-03-04T00:00") == ["s1"]
    assert ids("sessions", "search", "pod", "--role", "tool", "--until", "2025-03-03") == ["s0"]
    cli("sessions", "list", "--since", "yesterday").assert_one_line_error("YYYY-MM-DD")
    cli(
        "sessions", "search", "x", "--since", "2025-03-05", "--until", "2025-03-01"
    ).assert_one_line_error("after --until")


@pytest.mark.parametrize(
    "command",
    [
        "hermes-memory sessions search kubernetes | head -1",
        "hermes-memory sessions show s0 | head -1",
        "hermes-memory sessions export --format markdown | head -1",
        "hermes-memory sessions list | head -1",
    ],
)
def test_a_reader_that_stops_early_is_success_under_pipefail(cli, archive, command):
    with SessionStore(cli.archive) as store:  # enough output to fill the pipe
        for n in range(300):
            store.append_message("s0", "user", f"kubernetes line {n} " + "x" * 400)
    proc = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command}"],
        capture_output=True,
        text=True,
        env={**cli.env, "PATH": f"{BIN}:{os.environ['PATH']}"},
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() and proc.stderr == ""


def test_every_command_is_in_the_cli_reference():
    """docs/reference/cli.md names every command the parser has (issue 23 found some missing)."""
    from hermes_memory_cli._commands.completion import tree

    text = (Path(__file__).resolve().parents[2] / "docs/reference/cli.md").read_text()
    missing = [
        path
        for path, level in tree().items()
        if path
        and not level.subs
        and f"`{path}" not in text
        and f"hermes-memory {path}" not in text
    ]
    assert missing == []


def _tiny_wheel(directory: Path, name: str) -> Path:
    """A minimal, valid wheel of a one-module distribution (no build backend needed)."""
    import base64
    import hashlib
    import zipfile

    module = name.replace("-", "_")
    files = {
        f"{module}.py": "VALUE = 42\n",
        f"{module}-0.1.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n",
        f"{module}-0.1.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = f"{module}-0.1.dist-info/RECORD"
    lines = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        lines.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    files[record] = "\n".join([*lines, f"{record},,"]) + "\n"
    wheel = directory / f"{module}-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
    return wheel


def test_plugins_install_really_installs_into_the_clis_environment(tmp_path):
    """A real, offline install (pip with --find-links through PIP_* variables) into a fresh
    venv that runs the CLI: the package lands in that venv, and nowhere else."""
    import site
    import sysconfig

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _tiny_wheel(wheels, "hm-dummy-plugin")
    venv = tmp_path / "venv"
    subprocess.run(
        [getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(venv)],
        check=True,
        timeout=120,
    )
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    ours = sysconfig.get_paths()["purelib"]
    # the CLI (and pip) come from this test environment; installs go to the new venv
    Path(purelib, "_hm_cli.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "PIP_"))},
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "HOME": str(tmp_path),
    }
    cli_run = [str(python), "-m", "hermes_memory_cli._cli", "plugins", "install", "hm-dummy-plugin"]
    dry = subprocess.run([*cli_run, "--dry-run"], capture_output=True, text=True, env=env)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.split()[:3] == [str(python), "-m", "pip"], dry.stdout
    done = subprocess.run(cli_run, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Installed hm-dummy-plugin" in done.stdout
    check = subprocess.run(
        [str(python), "-c", "import hm_dummy_plugin; print(hm_dummy_plugin.__file__)"],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    assert check.stdout.strip().startswith(purelib)
    assert not Path(ours, "hm_dummy_plugin.py").exists()
    assert site  # the .pth above relies on the site module
