"""The command that installs a plugin into *this* installation of the CLI.

Kept for the CLI's own imports; the logic lives in `hermes_memory_core.installer` so that
every package (the embedder hint in the sessions tier, for one) gives the same advice.
"""

from __future__ import annotations

from hermes_memory_core.installer import CLI_DIST, install_argv, install_command, installer_kind

__all__ = ["CLI_DIST", "install_argv", "install_command", "installer_kind"]
