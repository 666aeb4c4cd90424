"""The ``byterover:`` settings, declared once as `ByteroverSettings`.

Core validates the section of ``config.yaml`` with it and hands the result to the provider
as ``ByteroverProvider.settings``; the file wins over the environment (``BRV_COMMAND``,
``BRV_API_KEY``), the environment over the default.
"""

from __future__ import annotations

from dataclasses import dataclass

from hermes_memory_core.kit import Settings, setting

__all__ = ["ByteroverSettings"]


@dataclass(frozen=True)
class ByteroverSettings(Settings):
    """The ``byterover:`` section."""

    section = "byterover"

    command: str = setting(
        "brv", "The ByteRover CLI (a name on PATH or a path).", env="BRV_COMMAND"
    )
    api_key: str = setting(
        "",
        "ByteRover API key for cloud sync (optional; passed to the CLI in its environment).",
        env="BRV_API_KEY",
        secret=True,
    )
    timeout_query: float = setting(
        10.0,
        "Seconds a query may take (prefetch also stops at memory.prefetch_timeout).",
        minimum=0.1,
    )
    timeout_curate: float = setting(60.0, "Seconds a curate or status call may take.", minimum=0.1)
    sync_turns: bool = setting(True, "Curate each finished turn (queued, in order).")
    min_turn_chars: int = setting(20, "Shorter user messages are not curated.", minimum=0)
    breaker_threshold: int = setting(3, "Consecutive failures that pause calls.", minimum=1)
    breaker_cooldown: float = setting(60.0, "Seconds calls stay paused.", minimum=0)
