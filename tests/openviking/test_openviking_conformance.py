"""The core conformance suite on OpenVikingProvider: reachable, refused, unconfigured."""

from __future__ import annotations

from pathlib import Path

from openviking_fake import FakeOpenViking
from openviking_helpers import settings_for

from hermes_memory_core.kit.testing import conformance_suites
from hermes_memory_openviking import OpenVikingProvider


def build(home: Path, url: str | None) -> OpenVikingProvider:
    config = {"openviking": settings_for(url)} if url else {}
    return OpenVikingProvider(hermes_home=home, config=config, environ={})


TestOpenVikingReachable, TestOpenVikingUnreachable, TestOpenVikingUnconfigured = conformance_suites(
    build, FakeOpenViking
)
