"""Hermes' ``honcho.json``: where it is read from, how it ranks against ``config.yaml`` and
the environment, and what a broken file looks like to the user (never a traceback, never the
API key).

Real files in temporary homes (``$HOME`` is a temporary directory in every test of this
folder, see conftest), the real provider, the real SDK over ``httpx.MockTransport`` into
`FakeHoncho`, and the real ``hermes-memory`` console script for ``provider status`` and
``doctor``.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from honcho_fake import FakeHoncho

from hermes_memory_honcho import HonchoProvider

SECRET = "hch-v3-s3cr3t-do-not-print"


@pytest.fixture
def user(tmp_path: Path) -> Path:
    path = tmp_path / "user"
    (path / ".honcho").mkdir(parents=True)
    return path


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def provider(
    home: Path, user: Path, section: dict[str, Any] | None = None, **env: str
) -> HonchoProvider:
    config = {"honcho": section} if section is not None else {}
    return HonchoProvider(hermes_home=home, config=config, environ={"HOME": str(user), **env})


# ---------------------------------------------------------------------- precedence
def test_precedence_yaml_then_host_block_then_root_then_env(home: Path, user: Path) -> None:
    write(
        home / "honcho.json",
        {
            "workspace": "root-ws",
            "peerName": "root-peer",
            "aiPeer": "root-ai",
            "contextTokens": 111,
            "hosts": {"hermes": {"peerName": "host-peer", "aiPeer": "host-ai"}},
        },
    )
    p = provider(
        home,
        user,
        {"ai_peer": "yaml-ai"},
        HONCHO_BASE_URL="http://127.0.0.1:9",
        HONCHO_WORKSPACE_ID="env-ws",
        HONCHO_TIMEOUT="3",
        HONCHO_PEER_NAME="env-peer",
    )
    cfg = p.config
    assert cfg is not None
    assert cfg.ai_peer == "yaml-ai"  # config.yaml beats the file
    assert cfg.peer_name == "host-peer"  # the host block beats the root and the environment
    assert cfg.workspace == "root-ws"  # the root beats the environment
    assert cfg.context_tokens == 111
    assert cfg.timeout == 3.0  # the environment fills what neither file sets
    assert cfg.base_url == "http://127.0.0.1:9"
    assert cfg.dialectic_max_chars == 600  # default


def test_hermes_home_file_is_used_and_the_user_file_ignored(home: Path, user: Path) -> None:
    write(home / "honcho.json", {"baseUrl": "http://127.0.0.1:1"})
    write(user / ".honcho" / "config.json", {"baseUrl": "http://127.0.0.1:2", "peerName": "u"})
    cfg = provider(home, user).config
    assert cfg is not None and cfg.base_url == "http://127.0.0.1:1" and cfg.peer_name == ""


def test_user_file_is_used_without_a_hermes_home_file(home: Path, user: Path) -> None:
    write(user / ".honcho" / "config.json", {"apiKey": SECRET, "workspace": "mine"})
    p = provider(home, user)
    assert p.config is not None and p.config.api_key == SECRET and p.config.workspace == "mine"
    assert p.is_available() and p.unavailable_reason() == ""


def test_no_home_directory_means_no_user_file(home: Path, user: Path) -> None:
    write(user / ".honcho" / "config.json", {"apiKey": SECRET})
    p = HonchoProvider(hermes_home=home, config={}, environ={})
    assert p.config is not None and p.config.api_key == ""
    assert "No Honcho credentials" in p.unavailable_reason()


def test_host_block_chosen_by_env_and_workspace_defaults_to_the_host(
    home: Path, user: Path
) -> None:
    write(
        home / "honcho.json",
        {
            "baseUrl": "http://127.0.0.1:8000",
            "hosts": {"hermes": {"peerName": "a"}, "work_laptop": {"peerName": "b"}},
        },
    )
    cfg = provider(home, user, HERMES_HONCHO_HOST="work_laptop").config
    assert cfg is not None and cfg.peer_name == "b" and cfg.workspace == "work_laptop"
    cfg = provider(home, user).config
    assert cfg is not None and cfg.peer_name == "a" and cfg.workspace == "hermes"
    # an explicit workspace anywhere (here: the environment) wins over the host name
    cfg = provider(home, user, HERMES_HONCHO_HOST="work_laptop", HONCHO_WORKSPACE_ID="w").config
    assert cfg is not None and cfg.workspace == "w"


def test_spellings_endpoint_base_url_and_request_timeout(home: Path, user: Path) -> None:
    write(
        home / "honcho.json", {"endpoint": {"baseUrl": "http://10.1.1.1/v3"}, "requestTimeout": 4}
    )
    cfg = provider(home, user).config
    assert cfg is not None and cfg.resolved_base_url == "http://10.1.1.1" and cfg.timeout == 4.0
    write(
        home / "honcho.json",
        {
            "endpoint": {"baseUrl": "http://10.1.1.1"},
            "baseUrl": "http://10.2.2.2",
            "requestTimeout": 4,
            "timeout": 6,
        },
    )
    cfg = provider(home, user).config
    assert cfg is not None and cfg.base_url == "http://10.2.2.2" and cfg.timeout == 6.0


def test_hermes_only_keys_are_quiet_unknown_keys_warn_by_name(
    home: Path, user: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    write(
        home / "honcho.json",
        {
            "apiKey": SECRET,
            "sessionStrategy": "per-repo",
            "writeFrequency": "async",
            "dialecticDepth": 2,
            "colour": SECRET,
        },
    )
    p = provider(home, user)
    assert p.config is not None and p.is_available()
    assert "colour is not a known Honcho setting" in caplog.text
    assert "sessionStrategy" not in caplog.text and "writeFrequency" not in caplog.text
    assert SECRET not in caplog.text


def test_the_file_drives_a_real_session(home: Path, user: Path, fake: FakeHoncho) -> None:
    """Workspace and peers from honcho.json reach the server; the key from the file is sent
    as the bearer token and appears in no log line."""
    write(
        home / "honcho.json",
        {
            "apiKey": SECRET,
            "hosts": {
                "hermes": {
                    "workspace": "from-json",
                    "peerName": "kim",
                    "aiPeer": "asst",
                    "recallMode": "tools",
                }
            },
        },
    )
    p = HonchoProvider(
        hermes_home=home,
        config={"honcho": {"base_url": "http://honcho.test", "max_retries": 0}},
        transport=fake.transport(),
        environ={"HOME": str(user)},
    )
    p.initialize("s1", hermes_home=str(home))
    p.sync_turn("你好", "hello")
    p.on_session_end([])
    p.shutdown()
    posts = fake.calls("POST", r"/sessions/s1/messages$")
    assert posts and posts[0].path.startswith("/v3/workspaces/from-json/")
    assert [m["peer_id"] for m in posts[0].body["messages"]] == ["kim", "asst"]
    assert posts[0].headers["authorization"] == f"Bearer {SECRET}"


# ---------------------------------------------------------------------- broken files
def _fifo(path: Path) -> None:
    os.mkfifo(path)


BROKEN: list[tuple[str, Any, str]] = [
    ("malformed", '{"apiKey": "' + SECRET + '",', "is not valid JSON"),
    ("array root", [SECRET], "must hold a JSON object, got an array"),
    ("hosts not an object", {"hosts": ["hermes"]}, "'hosts' must be an object"),
    ("host block not an object", {"hosts": {"hermes": "x"}}, "'hosts.hermes' must be an object"),
    ("endpoint not an object", {"endpoint": "http://x"}, "'endpoint' must be an object"),
    ("api key a number", {"apiKey": 12345}, "apiKey must be a string, got a number"),
    ("api key a list", {"apiKey": [SECRET]}, "apiKey must be a string, got an array"),
    ("host api key", {"hosts": {"hermes": {"apiKey": {"k": SECRET}}}}, "hosts.hermes.apiKey"),
    ("timeout a word", {"timeout": "soon"}, "timeout must be a number"),
    ("timeout zero", {"timeout": 0}, "timeout must be greater than 0"),
    ("peer not a string", {"peerName": 7}, "peerName must be a string, got a number"),
    ("bad recall mode", {"recallMode": "always"}, "recallMode must be one of"),
    ("bad workspace id", {"workspace": "my ws"}, "workspace 'my ws' must match"),
    ("not utf-8", b'{"apiKey": "\xff"}', "is not UTF-8"),
    ("too large", " " * (1024 * 1024 + 10) + "{}", "larger than 1 MiB"),
]


@pytest.mark.parametrize(("case", "content", "needle"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_file_is_a_clear_reason(
    home: Path, user: Path, case: str, content: Any, needle: str
) -> None:
    path = home / "honcho.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        write(path, content)
    p = provider(home, user, HONCHO_API_KEY="env-key")
    reason = p.unavailable_reason()
    assert reason.startswith("configuration error: "), reason
    assert needle in reason and str(path) in reason
    assert SECRET not in reason
    assert not p.is_available() and p.config is None
    p.initialize("s1", hermes_home=str(home))  # inert, no exception
    assert not p.active
    assert "error" in json.loads(p.handle_tool_call("honcho_search", {"query": "x"}))


def test_broken_hermes_home_file_does_not_fall_back_to_the_user_file(
    home: Path, user: Path
) -> None:
    write(home / "honcho.json", "{nope")
    write(user / ".honcho" / "config.json", {"baseUrl": "http://127.0.0.1:1"})
    assert "is not valid JSON" in provider(home, user).unavailable_reason()


@pytest.mark.parametrize("kind", ["outside", "dangling", "inside", "directory", "fifo"])
def test_special_files(home: Path, user: Path, tmp_path: Path, kind: str) -> None:
    path = home / "honcho.json"
    home.mkdir(parents=True, exist_ok=True)
    if kind == "outside":
        target = write(tmp_path / "elsewhere" / "honcho.json", {"apiKey": SECRET})
        path.symlink_to(target)
    elif kind == "dangling":
        path.symlink_to(tmp_path / "missing.json")
    elif kind == "inside":
        path.symlink_to(write(home / "shared" / "h.json", {"baseUrl": "http://127.0.0.1:3"}))
    elif kind == "directory":
        path.mkdir()
    else:
        _fifo(path)  # opened without blocking, refused as not a regular file
    p = provider(home, user)
    reason = p.unavailable_reason()
    if kind == "inside":
        assert reason == "" and p.config is not None and p.config.base_url == "http://127.0.0.1:3"
        return
    expected = {
        "outside": "outside",
        "dangling": "symbolic link to a missing file",
        "directory": "not a regular file",
        "fifo": "not a regular file",
    }[kind]
    assert expected in reason and str(path) in reason
    assert SECRET not in reason


def test_user_file_may_link_inside_the_home_directory_only(
    home: Path, user: Path, tmp_path: Path
) -> None:
    dotfiles = write(user / "dotfiles" / "honcho.json", {"baseUrl": "http://127.0.0.1:4"})
    (user / ".honcho" / "config.json").symlink_to(dotfiles)
    cfg = provider(home, user).config
    assert cfg is not None and cfg.base_url == "http://127.0.0.1:4"
    (user / ".honcho" / "config.json").unlink()
    (user / ".honcho" / "config.json").symlink_to(write(tmp_path / "x.json", {}))
    assert "outside" in provider(home, user).unavailable_reason()


@pytest.mark.skipif(os.name == "nt" or os.geteuid() == 0, reason="root reads anything")
def test_unreadable_file(home: Path, user: Path) -> None:
    path = write(home / "honcho.json", {})
    path.chmod(0)
    try:
        assert "cannot read" in provider(home, user).unavailable_reason()
    finally:
        path.chmod(0o600)


# ---------------------------------------------------------------------- the console script
def console(home: Path, user: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("hermes-memory")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HONCHO_", "HERMES_"))}
    env["HOME"] = str(user)
    return subprocess.run(
        [str(script), "--home", str(home), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


def test_provider_status_and_doctor_show_the_file_problem(home: Path, user: Path) -> None:
    write(home / "config.yaml", "memory:\n  provider: honcho\n")
    write(home / "honcho.json", {"apiKey": [SECRET], "baseUrl": "http://127.0.0.1:9"})
    status = console(home, user, "--json", "provider", "status")
    assert "Traceback" not in status.stderr, status.stderr
    report = json.loads(status.stdout)
    assert report["available"] is False
    assert "honcho.json apiKey must be a string" in report["unavailable_reason"]
    doctor = console(home, user, "doctor")
    assert "Traceback" not in doctor.stderr, doctor.stderr
    assert "honcho.json apiKey must be a string" in doctor.stdout
    assert SECRET not in status.stdout + status.stderr + doctor.stdout + doctor.stderr


def test_provider_status_reads_the_user_file(home: Path, user: Path) -> None:
    write(home / "config.yaml", "memory:\n  provider: honcho\n")
    write(user / ".honcho" / "config.json", {"apiKey": SECRET})
    status = console(home, user, "--json", "provider", "status")
    report = json.loads(status.stdout)
    assert report["available"] is True, report
    assert SECRET not in status.stdout + status.stderr
