"""The core provider conformance suite, run against BuiltinMemoryProvider."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory_builtin import BuiltinMemoryProvider
from hermes_memory_testing import ProviderConformance


class TestBuiltinConformance(ProviderConformance):
    @pytest.fixture
    def provider(self, hermes_home: Path) -> BuiltinMemoryProvider:
        return BuiltinMemoryProvider(hermes_home=hermes_home, config={})
