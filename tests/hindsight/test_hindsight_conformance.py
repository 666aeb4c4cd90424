"""The core provider conformance suite (`hermes_memory_core.testing`) run on
HindsightProvider: with the real ``hindsight-client`` against a loopback fake server, against
a port nobody listens on, and with no configuration at all."""

from __future__ import annotations

from pathlib import Path

from hindsight_fake import FakeHindsight
from hindsight_helpers import FAST

from hermes_memory_core.kit.testing import conformance_suites
from hermes_memory_hindsight import HindsightProvider


def build(home: Path, url: str | None) -> HindsightProvider:
    config = {"hindsight": {**FAST, "api_url": url}} if url else {}
    return HindsightProvider(hermes_home=home, config=config, environ={})


TestHindsightReachable, TestHindsightRefused, TestHindsightUnconfigured = conformance_suites(
    build, FakeHindsight
)
