"""Long-term memory for LLM agents: core, curated store, session archive and the hermes-memory CLI.

This meta-package installs ``hermes-memory-core``, ``hermes-memory-builtin`` and
``hermes-memory-sessions`` and adds the ``hermes-memory`` command (`hermes_memory_cli.cli`).
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
