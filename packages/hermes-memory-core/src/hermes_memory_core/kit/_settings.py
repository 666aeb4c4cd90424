"""Settings declared once, as a typed class.

A provider describes its ``config.yaml`` section with a `Settings` subclass: a frozen
dataclass whose attributes are declared with `setting` (default, description, environment
variable, secret, choices, minimum). Core reads ``config.yaml`` once, validates the section
with that class and hands the provider the typed, immutable result as
``MemoryProvider.settings`` before ``is_available``/``initialize``::

    @dataclass(frozen=True)
    class NotesSettings(kit.Settings):
        section = "notes"
        url: str = kit.setting("", "Base URL of the service.", env="NOTES_URL")
        timeout: float = kit.setting(5.0, "Seconds per request.", minimum=0.1)

    class NotesProvider(kit.RemoteProvider):
        settings_class = NotesSettings
        settings: NotesSettings  # for the type checker only

Precedence, per key: the ``config.yaml`` section > the environment variable > the default.
A value of the wrong type is refused with a message naming the key
(``notes.timeout must be a number, got 'soon'``); unknown keys are logged once and kept in
`Settings.unknown`. `Settings.fields()` describes each setting as a `Field`.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from hermes_memory_core._coerce import as_bool, as_float, as_int

__all__ = [
    "Field",
    "RemoteRecallSettings",
    "RemoteSettings",
    "RemoteWriteSettings",
    "Settings",
    "SettingsError",
    "resolve_settings",
    "setting",
]

logger = logging.getLogger("hermes_memory_core.settings")

_T = TypeVar("_T")
_S = TypeVar("_S", bound="Settings")
_META = "hermes_memory_setting"

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
            if self.secret:  # never echo a secret, even a mistyped one
                kind = type(value).__name__
                message = f"{message.split(', got ')[0]}, got a {kind} (not shown: secret)"
            elif "got" not in message:
                message = f"{message}, got {value!r}"
            raise SettingsError(f"{name} {message}") from None
        if self.minimum is not None and number < self.minimum:
            raise SettingsError(f"{name} must be at least {self.minimum:g}, got {value!r}")
        return number


@dataclass(frozen=True)
class _LoadedSection:
    """What `_load_section` found: typed values, which were set explicitly, unknown keys."""

    values: dict[str, Any]
    explicit: frozenset[str]
    unknown: tuple[str, ...]


def _load_section(
    fields: Sequence[Field],
    section: Mapping[str, Any] | None,
    *,
    where: str,
    environ: Mapping[str, str] | None = None,
    error: type[ValueError] = SettingsError,
    adjust: Callable[[str, Any], Any] | None = None,
) -> _LoadedSection:
    """Resolve every field from ``section`` (the provider's part of ``config.yaml``), then
    the environment, then the default.

    :param where: the section's name in messages (``"honcho"``).
    :param error: the exception class raised (the adapter's own ``ValueError`` subclass).
    :param adjust: ``adjust(key, value)`` rewrites a value as written (file or environment)
        before it is checked: spelling aliases such as ``self-hosted`` for ``selfhosted``.
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
        if adjust is not None:
            value = adjust(field.key, value)
        try:
            values[field.key] = field.parse(value, where)
        except SettingsError as exc:
            raise error(str(exc)) from None
        explicit.add(field.key)
    unknown = tuple(sorted(str(k) for k in raw if k not in known))
    return _LoadedSection(values, frozenset(explicit), unknown)


def _config_schema(fields: Sequence[Field]) -> list[dict[str, Any]]:
    """Every field in the ``get_config_schema`` vocabulary."""
    return [f.schema() for f in fields]


# --------------------------------------------------------------------------- typed settings
@dataclass(frozen=True)
class _Declared:
    description: str
    env: str | None
    secret: bool
    choices: tuple[str, ...]
    minimum: float | None


def setting(
    default: _T,
    description: str,
    *,
    env: str | None = None,
    secret: bool = False,
    choices: tuple[str, ...] = (),
    minimum: float | None = None,
) -> _T:
    """Declare one attribute of a `Settings` class (use it as the attribute's default).

    :param default: the value when neither ``config.yaml`` nor the environment sets it
        (a ``dict`` default is copied for every instance).
    :param description: one sentence for ``get_config_schema``, setup tools and the docs.
    :param env: the environment variable that may set it.
    :param secret: never shown back (left out of ``repr``; marked in the schema).
    :param choices: the allowed values of a text setting (compared lower-cased).
    :param minimum: the smallest allowed number.

    The attribute's annotation gives the type: ``str``, ``int``, ``float``, ``bool``,
    ``dict[...]``, or one of them ``| None`` (then ``None`` means "not set").
    """
    meta = {_META: _Declared(description, env, secret, tuple(choices), minimum)}
    if isinstance(default, dict):
        value = dict(default)
        made = dataclasses.field(
            default_factory=lambda: dict(value), repr=not secret, metadata=meta
        )
        return typing.cast(_T, made)
    return dataclasses.field(default=default, repr=not secret, metadata=meta)


_SIMPLE = (str, int, float, bool, dict)


def _field_type(cls: type, name: str, hint: Any) -> type:
    """``str`` for ``str`` and ``str | None``; ``dict`` for ``dict[str, Any]``; etc."""
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) or (
        typing.get_origin(hint) is typing.Union) else (hint,)  # fmt: skip
    options = tuple(o for o in options if o is not type(None))
    if len(options) == 1:
        base = typing.get_origin(options[0]) or options[0]
        if base in _SIMPLE:
            return typing.cast(type, base)
    raise TypeError(
        f"{cls.__name__}.{name}: a setting is str, int, float, bool or dict (optionally"
        f" '| None'), not {hint!r}"
    )


@dataclass(frozen=True)
class Settings:
    """Base class of a provider's typed settings (see the module docstring).

    Subclass it with ``@dataclass(frozen=True)``, set `section` to the provider's key in
    ``config.yaml`` and declare every attribute with `setting`. Override `prepare` to
    normalise values before they are checked (aliases, derived defaults), `check` for rules
    that involve more than one key, and `missing` for what keeps the provider from running
    (an API key not set…). Instances are immutable; build them with `load` or
    `from_config`, or directly with keyword arguments in tests.
    """

    #: The provider's key in ``config.yaml`` (``"notes"`` reads the ``notes:`` section).
    section: ClassVar[str] = ""
    #: When set (``"NOTES_"``), a setting declared without ``env`` is also read from
    #: ``<prefix><KEY>`` (``NOTES_TIMEOUT``).
    env_prefix: ClassVar[str] = ""

    #: Keys of the section that no setting declares (logged once, otherwise ignored).
    unknown: tuple[str, ...] = dataclasses.field(default=(), kw_only=True, compare=False)
    #: Keys set by ``config.yaml`` or the environment rather than left at their default.
    explicit: frozenset[str] = dataclasses.field(
        default=frozenset(), kw_only=True, compare=False, repr=False
    )

    # ----------------------------------------------------------------- declaration
    @classmethod
    def fields(cls) -> tuple[Field, ...]:
        """The declared settings as `Field` objects, in declaration order."""
        cached = cls.__dict__.get("_hermes_fields")
        if cached is not None:
            return typing.cast(tuple[Field, ...], cached)
        hints = typing.get_type_hints(cls)
        out = []
        for f in dataclasses.fields(cls):
            declared = f.metadata.get(_META)
            if declared is None:
                continue
            default = f.default_factory() if f.default_factory is not dataclasses.MISSING else (
                None if f.default is dataclasses.MISSING else f.default)  # fmt: skip
            env = declared.env or (cls.env_prefix + f.name.upper() if cls.env_prefix else None)
            out.append(
                Field(f.name, _field_type(cls, f.name, hints[f.name]), default,
                      declared.description, env=env, secret=declared.secret,
                      choices=declared.choices, minimum=declared.minimum)
            )  # fmt: skip
        result = tuple(out)
        type.__setattr__(cls, "_hermes_fields", result)
        return result

    @classmethod
    def schema(cls) -> list[dict[str, Any]]:
        """Every setting in the ``get_config_schema`` vocabulary."""
        return _config_schema(cls.fields())

    # ----------------------------------------------------------------- loading
    @classmethod
    def load(
        cls: type[_S],
        section: Mapping[str, Any] | None,
        *,
        environ: Mapping[str, str] | None = None,
    ) -> _S:
        """Resolve every setting from ``section``, then the environment, then the default.

        :raises SettingsError: a value of the wrong type, out of range, or refused by
            `check`; the message names the key.
        """
        where = cls.section or cls.__name__
        loaded = _load_section(
            cls.fields(), section, where=where, environ=environ, adjust=cls.adjust
        )
        values = cls.prepare(dict(loaded.values), loaded.explicit)
        instance = cls(**values, unknown=loaded.unknown, explicit=loaded.explicit)
        instance.check()
        return instance

    @classmethod
    def from_config(
        cls: type[_S],
        config: Mapping[str, Any] | None,
        *,
        environ: Mapping[str, str] | None = None,
    ) -> _S:
        """`load` the `section` of ``config`` (the whole parsed ``config.yaml``).

        :raises SettingsError: the section is not a mapping, or `load` refused a value.
        """
        section = (config or {}).get(cls.section) if isinstance(config, Mapping) else None
        if section is not None and not isinstance(section, Mapping):
            raise SettingsError(
                f"{cls.section} must be a mapping of settings, got {type(section).__name__}"
            )
        return cls.load(section, environ=environ)

    @classmethod
    def defaults(cls: type[_S]) -> _S:
        """An instance with every default (no environment, no checks)."""
        return cls()

    # ----------------------------------------------------------------- hooks
    @classmethod
    def adjust(cls, key: str, value: Any) -> Any:
        """Rewrite one value as written (``config.yaml`` or environment) before it is
        checked, e.g. a spelling alias (default: unchanged)."""
        return value

    @classmethod
    def prepare(cls, values: dict[str, Any], explicit: frozenset[str]) -> dict[str, Any]:
        """Normalise parsed values before the instance is built (default: unchanged).

        :param explicit: the keys set by ``config.yaml`` or the environment.
        :raises SettingsError: a value that cannot be used.
        """
        return values

    def check(self) -> None:
        """Refuse combinations of values that cannot work (default: none).

        :raises SettingsError: naming the key, e.g. ``notes.url must be an http(s) URL``.
        """

    def missing(self) -> str:
        """What keeps the provider from running, in one sentence a user can act on
        (``""``: nothing). Never touches the network."""
        return ""


@dataclass(frozen=True)
class RemoteSettings(Settings):
    """The settings every remote adapter has: the request bound and the knobs of its
    `hermes_memory_core.kit.Guard` and `hermes_memory_core.kit.PendingWrites`. Redeclare
    one in a subclass to change its default or description."""

    timeout: float = setting(10.0, "Seconds one request may take.", minimum=0.1)
    retries: int = setting(
        1, "Extra attempts after a timeout, a refused connection, a 429 or a 5xx.", minimum=0
    )
    breaker_threshold: int = setting(3, "Consecutive failures that pause calls.", minimum=1)
    breaker_cooldown: float = setting(60.0, "Seconds calls stay paused.", minimum=0)
    max_pending: int = setting(256, "Writes kept while the service is unreachable.", minimum=1)


@dataclass(frozen=True)
class RemoteRecallSettings(RemoteSettings):
    """`RemoteSettings` plus the bounds of recall fetched off the turn
    (`hermes_memory_core.kit.BackgroundRecall`): how long a turn waits, how long the block
    may be."""

    prefetch_wait: float = setting(
        3.0,
        "Seconds a turn waits for its recall; a late answer is used by the next turn that"
        " asks the same.",
        minimum=0,
    )
    recall_max_chars: int = setting(2000, "Longest recall block injected into a turn.", minimum=200)


@dataclass(frozen=True)
class RemoteWriteSettings(RemoteSettings):
    """`RemoteSettings` plus the two bounds of `kit.RemoteProvider`'s write policy, for an
    adapter that lets the user set them (return them from ``_flush_timeout`` and
    ``_shutdown_timeout``)."""

    flush_timeout: float = setting(
        10.0, "Seconds the session end waits for queued writes.", minimum=0
    )
    shutdown_timeout: float = setting(
        5.0, "Seconds shutdown sends queued writes before spooling the rest.", minimum=0
    )


def resolve_settings(
    settings_class: type[_S],
    config: Mapping[str, Any] | None,
    *,
    environ: Mapping[str, str] | None = None,
) -> tuple[_S, str]:
    """The one validation path core uses: ``(settings, "")`` when the section is valid,
    else ``(settings_class.defaults(), message)`` where ``message`` is the uniform
    ``"configuration error: <section>.<key> ..."`` shown by ``unavailable_reason``,
    ``provider status`` and ``doctor``. Unknown keys are logged once per process.
    """
    try:
        settings = settings_class.from_config(config, environ=environ)
    except SettingsError as exc:
        return settings_class.defaults(), settings_error_message(str(exc))
    except ValueError as exc:  # a `prepare`/`check` that raised a plain ValueError
        return settings_class.defaults(), settings_error_message(str(exc))
    for key in settings.unknown:
        marker = (settings_class.section, key)
        if marker not in _warned:
            _warned.add(marker)
            shown = key if key.isprintable() else ascii(key)  # no forged log lines
            logger.warning("config.yaml: unknown key %s.%s is ignored", marker[0], shown)
    return settings, ""


def settings_error_message(detail: str) -> str:
    """The one wording of an invalid-settings reason."""
    return f"configuration error: {' '.join(detail.split())}"


_warned: set[tuple[str, str]] = set()
