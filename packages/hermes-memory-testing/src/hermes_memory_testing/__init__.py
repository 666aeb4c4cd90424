"""Test support for hermes-memory provider authors.

The pytest plugin (loaded through the ``pytest11`` entry point when this distribution is
installed) adds the fixtures ``hermes_memory_home``, ``hermes_memory_manager`` and
``hermes_memory_no_network``; `ProviderConformance` is the contract suite every provider
should pass; `FakeService` and its helpers exercise a remote adapter against a real local
HTTP server. This ``__all__`` is the whole public surface.
"""

from hermes_memory_testing._plugin import ProviderConformance
from hermes_memory_testing._remote import (
    FakeService,
    Raw,
    RemoteFailures,
    Seen,
    SilentServer,
    conformance_suites,
    plugin_info,
    provider_factory,
    refused_url,
    run_cli,
)

__all__ = [
    "FakeService",
    "ProviderConformance",
    "Raw",
    "RemoteFailures",
    "Seen",
    "SilentServer",
    "conformance_suites",
    "plugin_info",
    "provider_factory",
    "refused_url",
    "run_cli",
]
