"""Settings declared once: each `Field` says its key, type, default, environment variable
and description; `load_section` reads the provider's ``config.yaml`` section with them and
`config_schema` describes them for ``get_config_schema``.

Precedence, per key: the ``config.yaml`` section > the environment variable > the default.
A value of the wrong type raises the adapter's error class with a message naming the key
(``honcho.timeout must be a number, got 'soon'``); an unknown key is returned so that the
adapter can warn about it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_memory_core.coerce import as_bool, as_float, as_int

__all__ = ["Field", "LoadedSection", "SettingsError", "config_schema", "load_section"]

_SCHEMA_TYPES = {str: "text", int: "integer", float: "number", bool: "boolean", dict: "object"}


class SettingsError(ValueError):
    """A setting cannot be used; the message names the key."""


@dataclass(frozen=True)
class Field:
    """One documented setting.

    :param key: the key inside the provider's ``config.yaml`` section.
    :param type: ``str``, ``int``, ``float``, ``bool`` or ``dict``.
    :param default: used when neither the file nor the environment sets it.
    :param description: one sentence for setup tools and the docs.
    :param env: the environment variable that may set it.
    :param secret: never shown back (API keys).
    :param choices: the allowed values of a string setting.
    :param minimum: the smallest allowed number.
    """

    key: str
    type: type
    default: Any
    description: str
    env: str | None = None
    secret: bool = False
    choices: tuple[str, ...] = ()
    minimum: float | None = None

    def schema(self) -> dict[str, Any]:
        """This field in the ``get_config_schema`` vocabulary."""
        out: dict[str, Any] = {
            "key": self.key,
            "description": self.description,
            "type": _SCHEMA_TYPES[self.type],
            "secret": self.secret,
            "required": False,
        }
        if self.default is not None and self.default != "":
            out["default"] = self.default
        if self.env:
            out["env_var"] = self.env
        if self.choices:
            out["choices"] = list(self.choices)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        return out

    def parse(self, value: Any, where: str) -> Any:
        """``value`` converted to this field's type.

        :raises SettingsError: naming ``where.key``.
        """
        name = f"{where}.{self.key}"
        try:
            if self.type is bool:
                return as_bool(value)
            if self.type is int:
                number: Any = as_int(value)
            elif self.type is float:
                number = as_float(value)
            elif self.type is dict:
                if not isinstance(value, Mapping):
                    raise ValueError(f"must be a mapping, got {type(value).__name__}")
                return dict(value)
            else:
                if isinstance(value, bool) or not isinstance(value, str | int | float):
                    raise ValueError(f"must be a string, got {value!r}")
                text = str(value).strip()
                if self.choices and text and text.lower() not in self.choices:
                    raise ValueError(f"must be one of {', '.join(self.choices)}, got {text!r}")
                return text.lower() if self.choices else text
        except ValueError as exc:
            message = str(exc)
            if "got" not in message:
                message = f"{message}, got {value!r}"
            raise SettingsError(f"{name} {message}") from None
        if self.minimum is not None and number < self.minimum:
            raise SettingsError(f"{name} must be at least {self.minimum:g}, got {value!r}")
        return number


@dataclass(frozen=True)
class LoadedSection:
    """What `load_section` found: typed values, which were set explicitly, unknown keys."""

    values: dict[str, Any]
    explicit: frozenset[str]
    unknown: tuple[str, ...]


def load_section(
    fields: Sequence[Field],
    section: Mapping[str, Any] | None,
    *,
    where: str,
    environ: Mapping[str, str] | None = None,
    error: type[ValueError] = SettingsError,
) -> LoadedSection:
    """Resolve every field from ``section`` (the provider's part of ``config.yaml``), then
    the environment, then the default.

    :param where: the section's name in messages (``"honcho"``).
    :param error: the exception class raised (the adapter's own ``ValueError`` subclass).
    :raises error: a value of the wrong type or out of range; the message names the key.
    """
    env = os.environ if environ is None else environ
    raw = dict(section or {})
    known = {f.key for f in fields}
    values: dict[str, Any] = {}
    explicit: set[str] = set()
    for field in fields:
        value: Any = raw.get(field.key)
        if value is None and field.env and str(env.get(field.env, "")).strip():
            value = env[field.env]
        if value is None:
            values[field.key] = field.default
            continue
        try:
            values[field.key] = field.parse(value, where)
        except SettingsError as exc:
            raise error(str(exc)) from None
        explicit.add(field.key)
    unknown = tuple(sorted(str(k) for k in raw if k not in known))
    return LoadedSection(values, frozenset(explicit), unknown)


def config_schema(fields: Sequence[Field]) -> list[dict[str, Any]]:
    """Every field in the ``get_config_schema`` vocabulary."""
    return [f.schema() for f in fields]
