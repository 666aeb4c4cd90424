"""``hermes-memory plugins`` and ``provider status`` through the installed console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from retaindb_fake import KEY, FakeRetainDB

from hermes_memory_retaindb import RetainDBProvider

SCRIPT = Path(sys.executable).with_name("hermes-memory")


def run(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("RETAINDB_")}
    return subprocess.run(
        [str(SCRIPT), "--home", str(home), *args], env={**clean, **env},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_plugins_lists_retaindb_with_its_availability(hermes_home: Path) -> None:
    without = run(hermes_home, "--json", "plugins")
    assert without.returncode == 0, without.stderr
    [info] = [p for p in json.loads(without.stdout) if p["name"] == "retaindb"]
    assert info["distribution"] == "hermes-memory-retaindb" and info["load_error"] is None
    assert info["available"] is False and "RETAINDB_API_KEY" in info["unavailable_reason"]
    with_key = run(hermes_home, "--json", "plugins", RETAINDB_API_KEY="k")
    [info] = [p for p in json.loads(with_key.stdout) if p["name"] == "retaindb"]
    assert info["available"] is True and info["unavailable_reason"] == ""


def test_provider_status_shows_the_health_record(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text("memory:\n  provider: retaindb\n", encoding="utf-8")
    with FakeRetainDB(key="not-ours") as fake:  # every call refused: 401
        config = {"retaindb": {"api_key": KEY, "base_url": fake.url}}
        provider = RetainDBProvider(hermes_home=hermes_home, config=config, environ={})
        provider.initialize("s1", hermes_home=str(hermes_home))
        provider.handle_tool_call("retaindb_profile", {})
        provider.shutdown()
    answer = run(hermes_home, "--json", "provider", "status", RETAINDB_API_KEY=KEY)
    status = json.loads(answer.stdout)
    assert status["provider"] == "retaindb" and status["available"] is True
    assert status["health"]["state"] == "circuit_open"
    assert status["health"]["last_error_kind"] == "auth"
    assert KEY not in answer.stdout
