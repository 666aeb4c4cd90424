"""Long-term memory for LLM agents: core, curated store, session archive and the hermes-memory CLI.

This meta-package installs ``hermes-memory-core``, ``hermes-memory-builtin`` and
``hermes-memory-sessions`` and adds the ``hermes-memory`` command. Its modules are private
(``_``-prefixed): the command line is the interface, and other distributions add command
groups through the ``hermes_memory.cli`` entry-point group.
"""

from importlib.metadata import version as _dist_version

__all__ = ["__version__"]

# The version lives in pyproject.toml only; installed metadata is its one copy.
__version__ = _dist_version("hermes-memory-cli")
