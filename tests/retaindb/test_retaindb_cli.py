"""``hermes-memory plugins`` and ``provider status`` through the installed console script."""

from __future__ import annotations

import json
from pathlib import Path

from retaindb_fake import KEY, FakeRetainDB

from hermes_memory_retaindb import RetainDBProvider
from hermes_memory_testing import plugin_info, run_cli


def test_plugins_lists_retaindb_with_its_availability(hermes_home: Path) -> None:
    info = plugin_info(hermes_home, "retaindb", clean="RETAINDB_")
    assert info["distribution"] == "hermes-memory-retaindb" and info["load_error"] is None
    assert info["available"] is False and "RETAINDB_API_KEY" in info["unavailable_reason"]
    info = plugin_info(hermes_home, "retaindb", clean="RETAINDB_", RETAINDB_API_KEY="k")
    assert info["available"] is True and info["unavailable_reason"] == ""


def test_provider_status_shows_the_health_record(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text("memory:\n  provider: retaindb\n", encoding="utf-8")
    with FakeRetainDB(key="not-ours") as fake:  # every call refused: 401
        config = {"retaindb": {"api_key": KEY, "base_url": fake.url}}
        provider = RetainDBProvider(hermes_home=hermes_home, config=config, environ={})
        provider.initialize("s1", hermes_home=str(hermes_home))
        provider.handle_tool_call("retaindb_profile", {})
        provider.shutdown()
    answer = run_cli(
        hermes_home, "--json", "provider", "status", clean="RETAINDB_", RETAINDB_API_KEY=KEY
    )
    status = json.loads(answer.stdout)
    assert status["provider"] == "retaindb" and status["available"] is True
    assert status["health"]["state"] == "circuit_open"
    assert status["health"]["last_error_kind"] == "auth"
    assert KEY not in answer.stdout
