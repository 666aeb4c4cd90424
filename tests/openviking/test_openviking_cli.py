"""``hermes-memory plugins`` and ``provider status`` through the installed console script."""

from __future__ import annotations

import json
from pathlib import Path

from openviking_fake import KEY, FakeOpenViking

from hermes_memory_openviking import OpenVikingProvider
from hermes_memory_testing import plugin_info, run_cli


def test_plugins_lists_openviking_with_its_availability(hermes_home: Path) -> None:
    info = plugin_info(hermes_home, "openviking", clean="OPENVIKING_")
    assert info["distribution"] == "hermes-memory-openviking" and info["load_error"] is None
    assert info["available"] is False and "OPENVIKING_URL" in info["unavailable_reason"]
    info = plugin_info(
        hermes_home, "openviking", clean="OPENVIKING_", OPENVIKING_URL="http://127.0.0.1:1933"
    )
    assert info["available"] is True and info["unavailable_reason"] == ""
    info = plugin_info(
        hermes_home, "openviking", clean="OPENVIKING_", OPENVIKING_URL="ftp://example.org"
    )
    assert info["available"] is False and "http(s) URL" in info["unavailable_reason"]


def test_provider_status_shows_the_health_record(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text("memory:\n  provider: openviking\n", encoding="utf-8")
    with FakeOpenViking(key="not-ours") as fake:  # every call refused: 401
        config = {"openviking": {"api_key": KEY, "url": fake.url}}
        provider = OpenVikingProvider(hermes_home=hermes_home, config=config, environ={})
        provider.initialize("s1", hermes_home=str(hermes_home))
        provider.handle_tool_call("viking_search", {"query": "x"})
        provider.shutdown()
        url = fake.url
    answer = run_cli(
        hermes_home,
        "--json",
        "provider",
        "status",
        clean="OPENVIKING_",
        OPENVIKING_URL=url,
        OPENVIKING_API_KEY=KEY,
    )
    status = json.loads(answer.stdout)
    assert status["provider"] == "openviking" and status["available"] is True
    assert status["health"]["state"] == "circuit_open"
    assert status["health"]["last_error_kind"] == "auth"
    assert KEY not in answer.stdout
