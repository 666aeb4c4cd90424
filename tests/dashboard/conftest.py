"""Fixtures for the dashboard: a seeded home, the real server in a subprocess, a real browser.

The browser is Debian's Chromium (``/usr/bin/chromium``) driven by Playwright; `.ci/run`
installs it when missing (never ``playwright install``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from dashboard_helpers import CHROMIUM, CHROMIUM_ARGS, Server, seed_home, start_server, stop_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("dashboard")
    home = tmp / "home"
    seed_home(home)
    running = start_server(home, tmp)
    try:
        yield running
    finally:
        stop_server(running)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: ``$HERMES_MEMORY_DASHBOARD_SHOTS`` (e.g. docs/images/dashboard)
    or a temporary folder."""
    wanted = os.environ.get("HERMES_MEMORY_DASHBOARD_SHOTS")
    if wanted:
        path = Path(wanted)
        path.mkdir(parents=True, exist_ok=True)
        return path
    return tmp_path_factory.mktemp("shots")
