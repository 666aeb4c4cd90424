"""The ``compression:`` section of ``<home>/config.yaml`` (Hermes' keys).

```yaml
compression:
  enabled: true       # automatic compression on/off (`ContextCompressor.should_compress`)
  threshold: 0.50     # compress when the prompt reaches this share of the context window
  target_ratio: 0.20  # recent messages kept: this share of threshold × window tokens
  protect_last_n: 20  # at least this many recent messages are never compressed
  timeout: 120        # seconds the summariser may take (ours; Hermes sets it elsewhere)
```

Hermes' other keys in this section (``threshold_tokens``, ``tail_mode``, ``in_place``, …)
are accepted and ignored; any other key logs a warning; a value of the wrong type raises
`hermes_memory_core.ConfigError` naming the key.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_memory_core.config import ConfigError, load_config
from hermes_memory_core.kit import as_bool, as_float, as_non_negative_int, as_positive_float

__all__ = ["CompressionSettings", "read_compression_settings"]

logger = logging.getLogger(__name__)

#: Hermes keys of the section that this library does not use.
_TOLERATED = frozenset(
    {
        "threshold_tokens",
        "model_thresholds",
        "tail_mode",
        "min_tail_user_messages",
        "tail_assistant_max_chars",
        "in_place",
        "protect_first_n",
        "summary_model",
        "summary_provider",
    }
)


@dataclass(frozen=True)
class CompressionSettings:
    """The values of the ``compression:`` section (defaults as Hermes')."""

    enabled: bool = True
    threshold: float = 0.5
    target_ratio: float = 0.2
    protect_last_n: int = 20
    timeout: float = 120.0


def _ratio(value: Any) -> float:
    number = as_float(value)
    if not 0 < number <= 1:
        raise ValueError("must be a number above 0 and at most 1")
    return number


def _seconds(value: Any) -> float:
    return as_positive_float(value, unit="seconds")


_PARSERS = {
    "enabled": as_bool,
    "threshold": _ratio,
    "target_ratio": _ratio,
    "protect_last_n": as_non_negative_int,
    "timeout": _seconds,
}


def parse_compression_section(section: Any, path: Path | str) -> CompressionSettings:
    """`CompressionSettings` from the raw ``compression:`` value of the file at ``path``."""
    if section is None:
        return CompressionSettings()
    if not isinstance(section, Mapping):
        raise ConfigError(f"{path}: 'compression' must be a mapping, got {type(section).__name__}")
    values: dict[str, Any] = {}
    for key, value in section.items():
        parse = _PARSERS.get(str(key))
        if parse is None:
            if key not in _TOLERATED:
                logger.warning("%s: unknown key compression.%s is ignored", path, key)
            continue
        if value is None:
            continue
        try:
            values[str(key)] = parse(value)
        except ValueError as exc:
            raise ConfigError(f"{path}: compression.{key} {exc}, got {value!r}") from None
    return CompressionSettings(**values)


def read_compression_settings(home: str | os.PathLike[str] | None) -> CompressionSettings:
    """The ``compression:`` section of ``<home>/config.yaml`` (defaults when absent).

    :raises hermes_memory_core.ConfigError: the file is malformed or a key has a wrong type.
    """
    config = load_config(home)
    return parse_compression_section(config.raw.get("compression"), config.path)
