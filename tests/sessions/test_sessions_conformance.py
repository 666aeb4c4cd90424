"""The core provider conformance suite, run against SessionArchiveProvider."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory_sessions import SessionArchiveProvider
from hermes_memory_testing import ProviderConformance


class TestSessionsConformance(ProviderConformance):
    @pytest.fixture
    def provider(self, hermes_home: Path) -> SessionArchiveProvider:
        return SessionArchiveProvider(hermes_home=hermes_home, config={})
