"""The ``facts:`` settings, declared once as `FactsSettings`.

Core validates the section of ``config.yaml`` with it and hands the result to the provider
as ``FactsProvider.settings``; the file wins over the environment (``HERMES_FACTS_DB``), the
environment over the default.
"""

from __future__ import annotations

from dataclasses import dataclass

from hermes_memory_core.kit import Settings, setting

__all__ = ["FactsSettings"]


@dataclass(frozen=True)
class FactsSettings(Settings):
    """The ``facts:`` section."""

    section = "facts"

    db_path: str = setting(
        "",
        "SQLite file of the facts (default <home>/memory_facts.db; a relative path is taken "
        "from the home directory).",
        env="HERMES_FACTS_DB",
    )
    auto_extract: bool = setting(
        False,
        "At session end, store the preferences and decisions the user stated (rule-based, "
        "no model).",
    )
    default_trust: float = setting(0.5, "Trust of a new fact (0 to 1).", minimum=0)
    min_trust: float = setting(0.3, "Facts below this trust are not recalled.", minimum=0)
    half_life_days: float = setting(
        0.0,
        "Recall scores halve every this many days since a fact's last update (0: no decay).",
        minimum=0,
    )
    hrr: bool = setting(True, "Compositional (HRR) queries when NumPy is installed.")
    hrr_dim: int = setting(1024, "Dimension of the HRR vectors.", minimum=64)
    hrr_weight: float = setting(0.3, "Weight of HRR similarity in search.", minimum=0)
    prefetch_limit: int = setting(5, "Facts recalled before each turn.", minimum=0)
    mirror_writes: bool = setting(True, "Mirror curated-memory add/replace/remove.")
