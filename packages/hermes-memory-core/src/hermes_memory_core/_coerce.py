"""Turn configuration values (from YAML or environment variables) into typed settings.

Every function takes one raw value and returns it converted, or raises `ValueError` whose
message is a fragment meant to follow the setting's name, e.g. ``"must be an integer"``::

    try:
        limit = as_positive_int(raw)
    except ValueError as exc:
        raise ConfigError(f"memory.memory_char_limit {exc}, got {raw!r}") from None

Values from YAML arrive as ``bool``/``int``/``float``/``str``; values from the environment
always arrive as ``str``. Both spellings are accepted wherever they make sense (``"yes"`` and
``True``, ``"20_000"`` and ``20000``). ``bool`` is never taken for a number.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "FALSE_WORDS",
    "TRUE_WORDS",
    "as_bool",
    "as_float",
    "as_int",
    "as_non_negative_float",
    "as_non_negative_int",
    "as_positive_float",
    "as_positive_int",
]

#: Strings (compared stripped and lower-cased) read as true by `as_bool`.
TRUE_WORDS = frozenset({"1", "true", "yes", "on", "y"})
#: Strings (compared stripped and lower-cased) read as false by `as_bool`; includes ``""``.
FALSE_WORDS = frozenset({"0", "false", "no", "off", "n", ""})


def as_bool(value: Any) -> bool:
    """A ``bool``; an ``int`` (non-zero is true); or one of `TRUE_WORDS` / `FALSE_WORDS`.

    :raises ValueError: ``"must be true or false"`` for anything else (floats, ``"maybe"``).
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    raise ValueError("must be true or false")


def as_int(value: Any) -> int:
    """An ``int``; a whole ``float`` (``3.0``); or a string of digits (``"20_000"`` works).

    :raises ValueError: ``"must be an integer"`` for ``bool``, ``1.5``, ``"lots"``, ``None``….
    """
    if isinstance(value, bool):
        raise ValueError("must be an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip().replace("_", ""))
        except ValueError:
            pass
    raise ValueError("must be an integer")


def as_positive_int(value: Any) -> int:
    """`as_int`, and greater than zero.

    :raises ValueError: ``"must be an integer"`` or ``"must be a positive integer"``.
    """
    number = as_int(value)
    if number <= 0:
        raise ValueError("must be a positive integer")
    return number


def as_non_negative_int(value: Any) -> int:
    """`as_int`, and zero or more.

    :raises ValueError: ``"must be an integer"`` or ``"must be zero or a positive integer"``.
    """
    number = as_int(value)
    if number < 0:
        raise ValueError("must be zero or a positive integer")
    return number


def _number_words(unit: str) -> str:
    return f"a number of {unit}" if unit else "a number"


def as_float(value: Any, *, unit: str = "") -> float:
    """An ``int``, ``float`` or numeric string as ``float`` (``nan``/``inf`` pass through).

    :param unit: named in the message, e.g. ``unit="seconds"`` gives
        ``"must be a number of seconds"``.
    :raises ValueError: ``"must be a number"`` for ``bool``, ``"soon"``, ``None``, lists….
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"must be {_number_words(unit)}")
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"must be {_number_words(unit)}") from None


def as_positive_float(value: Any, *, unit: str = "") -> float:
    """`as_float`, greater than zero and finite.

    :raises ValueError: ``"must be a number"`` or ``"must be a positive number"`` (each with
        ``of <unit>`` when ``unit`` is given).
    """
    number = as_float(value, unit=unit)
    if not number > 0 or math.isinf(number):
        raise ValueError(f"must be a positive {_number_words(unit)[2:]}")
    return number


def as_non_negative_float(value: Any, *, unit: str = "") -> float:
    """`as_float`, and zero or more (``nan`` is refused, ``inf`` accepted).

    :raises ValueError: ``"must be a number"`` or ``"must be a non-negative number"`` (each with
        ``of <unit>`` when ``unit`` is given).
    """
    number = as_float(value, unit=unit)
    if not number >= 0:
        raise ValueError(f"must be a non-negative {_number_words(unit)[2:]}")
    return number
