"""The core provider conformance suite (`hermes_memory_core.testing`) run on
SupermemoryProvider: with the real ``supermemory`` SDK against a loopback fake server,
against a port nobody listens on, and with no configuration at all."""

from __future__ import annotations

from pathlib import Path

from supermemory_fake import FakeSupermemory
from supermemory_helpers import FAST

from hermes_memory_core.kit.testing import conformance_suites
from hermes_memory_supermemory import SupermemoryProvider


def build(home: Path, url: str | None) -> SupermemoryProvider:
    config = {"supermemory": {**FAST, "base_url": url}} if url else {}
    return SupermemoryProvider(hermes_home=home, config=config, environ={})


TestSupermemoryReachable, TestSupermemoryRefused, TestSupermemoryUnconfigured = conformance_suites(
    build, FakeSupermemory
)
