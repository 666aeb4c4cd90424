"""The core conformance suite on RetainDBProvider: reachable, refused, unconfigured."""

from __future__ import annotations

from pathlib import Path

from retaindb_fake import FakeRetainDB
from retaindb_helpers import settings_for

from hermes_memory_core.kit.testing import conformance_suites
from hermes_memory_retaindb import RetainDBProvider


def build(home: Path, url: str | None) -> RetainDBProvider:
    config = {"retaindb": settings_for(url)} if url else {}
    return RetainDBProvider(hermes_home=home, config=config, environ={})


TestRetainDBReachable, TestRetainDBUnreachable, TestRetainDBUnconfigured = conformance_suites(
    build, FakeRetainDB
)
