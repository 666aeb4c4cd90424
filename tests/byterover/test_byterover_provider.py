"""ByteroverProvider against a stand-in ``brv`` (tests/byterover/fake_brv.py) that speaks the
CLI's documented JSON output: tools, recall, queued curation, deadlines, a hanging CLI (the
process group is killed), a crashing one, garbage output, the CLI's own error answers, the API
key's path, the conformance suite and the console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from byterover_helpers import FAKE_COMMAND

from hermes_memory_byterover import ByteroverProvider
from hermes_memory_byterover._cli import BrvError, run_brv
from hermes_memory_core import MemoryManager, kit
from hermes_memory_core.health import read_provider_status
from hermes_memory_testing import ProviderConformance


def calls(home: Path) -> list[dict]:
    path = home / "byterover" / ".brv" / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0): look at its state
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


class TestByteroverConformance(ProviderConformance):
    @pytest.fixture
    def provider(self, hermes_home):
        return ByteroverProvider(
            hermes_home=hermes_home,
            config={"byterover": {"command": FAKE_COMMAND}},
            environ={"PATH": os.environ["PATH"]},
        )


class TestByteroverWithoutCli(ProviderConformance):
    @pytest.fixture
    def provider(self, hermes_home):
        return ByteroverProvider(
            hermes_home=hermes_home, config={}, environ={"PATH": str(hermes_home)}
        )


def test_missing_cli_is_explained(hermes_home):
    provider = ByteroverProvider(
        hermes_home=hermes_home, config={}, environ={"PATH": str(hermes_home)}
    )
    assert not provider.is_available()
    assert "npm install -g byterover-cli" in provider.unavailable_reason()
    provider.initialize("s", hermes_home=str(hermes_home))
    assert "not found" in json.loads(provider.handle_tool_call("brv_status", {}))["error"]
    assert provider.prefetch("anything") == ""


def test_invalid_settings_name_the_key(hermes_home):
    provider = ByteroverProvider(
        hermes_home=hermes_home, config={"byterover": {"timeout_query": "soon"}}, environ={}
    )
    reason = "configuration error: byterover.timeout_query must be a number, got 'soon'"
    assert provider.unavailable_reason() == reason
    assert {f["key"] for f in provider.get_config_schema()} >= {"command", "api_key"}


def test_curate_then_query_and_status_through_tools(make_provider, hermes_home):
    provider = make_provider()
    curated = json.loads(
        provider.handle_tool_call(
            "brv_curate", {"content": "Auth uses JWT with 24h expiry; 部署用 docker"}
        )
    )
    assert curated == {"status": "completed", "message": "Context curated successfully"}
    answer = json.loads(
        provider.handle_tool_call("brv_query", {"query": "How long do JWT tokens last?"})
    )
    assert "24h expiry" in answer["result"]
    assert (
        "部署用 docker"
        in json.loads(provider.handle_tool_call("brv_query", {"query": "怎么部署"}))["result"]
    )
    status = json.loads(provider.handle_tool_call("brv_status", {}))["status"]
    assert status["contextTree"]["entries"] == 1
    assert Path(status["projectRoot"]) == hermes_home / "byterover"
    argvs = [c["argv"] for c in calls(hermes_home)]
    assert argvs[0][:2] == ["curate", "Auth uses JWT with 24h expiry; 部署用 docker"]
    assert all(a[-2:] == ["--format", "json"] for a in argvs)


def test_bad_tool_arguments(make_provider):
    provider = make_provider()
    assert "'query' is required" in json.loads(provider.handle_tool_call("brv_query", {}))["error"]
    assert (
        "'content' is required"
        in json.loads(provider.handle_tool_call("brv_curate", {"content": " "}))["error"]
    )
    assert "Unknown tool" in json.loads(provider.handle_tool_call("brv_other", {}))["error"]


def test_prefetch_returns_the_answer_under_a_header(make_provider):
    provider = make_provider()
    provider.handle_tool_call(
        "brv_curate", {"content": "Rate limit is 100 req/min per user via Redis"}
    )
    recall = provider.prefetch("what is the rate limit?")
    assert recall.startswith("## ByteRover\n") and "100 req/min" in recall
    assert provider.recall_status() is not None


def test_turns_and_curated_writes_are_curated_detached_in_order(make_provider, hermes_home):
    provider = make_provider()
    provider.sync_turn("We moved the staging cluster to eu-west-1 yesterday", "Noted.")
    provider.sync_turn("ok", "fine")  # too short
    provider.on_memory_write("add", "user", "Prefers concise answers")
    provider.on_memory_write("remove", "user", "Old entry")
    provider.on_session_end([])
    curates = [c["argv"] for c in calls(hermes_home) if c["argv"][0] == "curate"]
    assert [a[1] for a in curates] == [
        "User: We moved the staging cluster to eu-west-1 yesterday\nAssistant: Noted.",
        "User profile: Prefers concise answers",
    ]
    assert all("--detach" in a for a in curates)


def test_subagents_do_not_curate(make_provider, hermes_home):
    provider = make_provider(agent_context="subagent")
    provider.sync_turn("We moved the staging cluster to eu-west-1 yesterday", "Noted.")
    provider.on_session_end([])
    assert [c for c in calls(hermes_home) if c["argv"][0] == "curate"] == []


def test_query_deadline_is_the_smaller_bound(make_provider):
    assert make_provider(init=False).query_deadline() == 8.0
    assert (
        make_provider(init=False, config={"memory": {"prefetch_timeout": 3}}).query_deadline()
        == 3.0
    )
    assert (
        make_provider(
            init=False, settings={"timeout_query": 2}, config={"memory": {"prefetch_timeout": 30}}
        ).query_deadline()
        == 2.0
    )


def test_hanging_cli_is_killed_with_its_process_group(make_provider, hermes_home):
    provider = make_provider("hang", settings={"timeout_query": 1.0})
    assert provider.prefetch("anything at all?") == ""
    pids = [int(p) for p in (hermes_home / "byterover" / ".brv" / "hang.pids").read_text().split()]
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids), "the CLI or its child outlived the deadline"
    status = read_provider_status(hermes_home, "byterover")
    assert status["state"] == "degraded" and "did not answer within 1 s" in status["detail"]
    assert status["last_error_kind"] == "timeout"


def test_repeated_failures_open_the_breaker_and_stop_calling(make_provider, hermes_home):
    provider = make_provider("crash")
    for _ in range(3):
        assert provider.prefetch("what broke?") == ""
    before = len(calls(hermes_home))
    error = json.loads(provider.handle_tool_call("brv_query", {"query": "still there?"}))["error"]
    assert "temporarily unavailable" in error
    assert len(calls(hermes_home)) == before  # not run while the breaker is open
    assert read_provider_status(hermes_home, "byterover")["state"] == "circuit_open"


def test_crash_garbage_and_error_answers_become_tool_errors(make_provider):
    crash = json.loads(make_provider("crash").handle_tool_call("brv_query", {"query": "q?"}))[
        "error"
    ]
    assert "exited with status 3" in crash and "TypeError" in crash
    garbage = json.loads(make_provider("garbage").handle_tool_call("brv_status", {}))["error"]
    assert "no JSON answer" in garbage
    offline = json.loads(
        make_provider("offline").handle_tool_call("brv_curate", {"content": "x y z"})
    )["error"]
    assert "Unable to connect to ByteRover servers" in offline


def test_run_brv_classifies_the_cli_answers(tmp_path):
    cmd = [sys.executable, str(Path(__file__).with_name("fake_brv.py"))]
    env = {"PATH": os.environ["PATH"], "FAKE_BRV_MODE": "offline"}
    with pytest.raises(BrvError) as info:
        run_brv(cmd, ["query", "x"], cwd=tmp_path, timeout=30, env=env)
    assert info.value.kind is kit.FailureKind.CONNECTION
    with pytest.raises(BrvError) as info:
        run_brv(cmd, ["curate"], cwd=tmp_path, timeout=30, env={**env, "FAKE_BRV_MODE": "ok"})
    assert info.value.kind is kit.FailureKind.INVALID  # "... is required": the request, not the CLI


def test_unsent_curations_are_spooled_and_replayed(make_provider, hermes_home):
    down = make_provider("offline")
    down.sync_turn("The billing service owns the invoices table now", "ok")
    down.on_session_end([])
    down.shutdown()
    assert list(hermes_home.glob("byterover_pending.*.json"))
    up = make_provider("ok")
    up.on_session_end([])
    contents = [c["argv"][1] for c in calls(hermes_home) if c["argv"][0] == "curate"]
    assert contents[-1].startswith("User: The billing service owns the invoices table now")
    assert not list(hermes_home.glob("byterover_pending.*"))


def test_api_key_goes_in_the_environment_only(make_provider, hermes_home, caplog):
    provider = make_provider("ok", settings={"api_key": "brv-secret-123"})
    provider.handle_tool_call("brv_status", {})
    call = calls(hermes_home)[-1]
    assert call["api_key_set"] is True and "brv-secret-123" not in json.dumps(call["argv"])
    assert "brv-secret-123" not in caplog.text
    assert "brv-secret-123" not in json.dumps(provider.get_config_schema())
    keyless = make_provider("ok", extra_env={})
    keyless.handle_tool_call("brv_status", {})
    assert calls(hermes_home)[-1]["api_key_set"] is False


def test_through_the_manager_from_config(hermes_home, monkeypatch):
    monkeypatch.setenv("FAKE_BRV_MODE", "ok")
    (hermes_home / "config.yaml").write_text(
        f"memory:\n  provider: byterover\nbyterover:\n  command: '{FAKE_COMMAND}'\n",
        encoding="utf-8",
    )
    manager = MemoryManager.from_config(hermes_home)
    manager.initialize_all("s1")
    result = json.loads(
        manager.handle_tool_call("brv_curate", {"content": "Deploys run through ArgoCD"})
    )
    assert result["status"] == "completed"
    assert "ArgoCD" in manager.prefetch_all("how do deploys run?")
    manager.shutdown_all()


def test_console_script_lists_availability(tmp_path):
    script = shutil.which("hermes-memory", path=str(Path(sys.executable).parent))
    assert script is not None
    env = {k: v for k, v in os.environ.items() if k not in ("HERMES_HOME", "BRV_COMMAND")}
    env["PATH"] = str(Path(sys.executable).parent)  # no brv on it

    def run():
        return json.loads(
            subprocess.run(
                [script, "--home", str(tmp_path), "--json", "plugins"],
                capture_output=True,
                text=True,
                timeout=120,
                env=env,
                check=True,
            ).stdout
        )

    info = {p["name"]: p for p in run()}["byterover"]
    assert info["distribution"] == "hermes-memory-byterover"
    assert info["available"] is False and "byterover-cli" in info["unavailable_reason"]
    (tmp_path / "config.yaml").write_text(
        f"byterover:\n  command: '{FAKE_COMMAND}'\n", encoding="utf-8"
    )
    assert {p["name"]: p for p in run()}["byterover"]["available"] is True
