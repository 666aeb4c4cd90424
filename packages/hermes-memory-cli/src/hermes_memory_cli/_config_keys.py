"""Every ``config.yaml`` key hermes-memory reads, typed: what ``config`` and ``doctor`` check.

Built from the schemas that already exist rather than a second list: the ``memory:`` keys
and their checks come from `hermes_memory_core.config` (`MemoryConfig` defaults,
`MEMORY_KEY_PARSERS`), the ``sessions:`` and ``postgres:`` keys from the same module, and each
installed provider's section from its typed settings (`hermes_memory_core.kit.Settings`
fields) when it declares them. Other top-level sections belong to Hermes Agent and are left
alone; a top-level key that looks like a misspelt section of ours is reported.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hermes_memory_cli._i18n import cli_gettext as _
from hermes_memory_core.kit import as_bool, as_float, as_int

__all__ = ["KeySpec", "UnknownKey", "known_keys", "suggest", "unknown_keys"]

#: Sections whose every key is ours (an unknown key there is a mistake).
CORE_SECTIONS = ("memory", "sessions", "postgres")


@dataclass(frozen=True)
class KeySpec:
    """One key: ``section.key``, its type (``bool``, ``int``, ``float``, ``str``), default,
    a one-line description, whether it is secret, and the check of a value."""

    name: str
    type: type
    default: Any
    description: str
    check: Callable[[Any], Any]
    secret: bool = False

    @property
    def section(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def key(self) -> str:
        return self.name.split(".", 1)[1]

    @property
    def type_name(self) -> str:
        return {bool: "boolean", int: "integer", float: "number"}.get(self.type, "text")

    def parse_text(self, text: str) -> Any:
        """A value typed on the command line, converted to this key's type and checked.

        :raises ValueError: with a message naming what is expected.
        """
        value: Any = text
        if self.type is bool:
            value = as_bool(text)
        elif self.type is int:
            value = as_int(text)
        elif self.type is float:
            value = as_float(text)
        return self.check(value)


def _text(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(_("must be text"))
    return str(value)


def _ranged(low: float, high: float, kind: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        number = kind(value)
        if not low <= number <= high:
            raise ValueError(
                _("must be from {low} to {high}").format(low=f"{low:g}", high=f"{high:g}")
            )
        return number

    return check


def _choice(*allowed: str) -> Callable[[Any], Any]:
    def check(value: Any) -> str:
        if not isinstance(value, str) or value.strip().lower() not in allowed:
            raise ValueError(_("must be one of {choices}").format(choices=", ".join(allowed)))
        return value.strip().lower()

    return check


def _core_keys() -> list[KeySpec]:
    from hermes_memory_core.config import (
        MEMORY_KEY_PARSERS,
        MEMORY_TOLERATED_KEYS,
        MemoryConfig,
    )

    defaults = MemoryConfig()
    specs = [
        KeySpec(
            f"memory.{f.name}",
            type(getattr(defaults, f.name)),
            getattr(defaults, f.name),
            "see docs/reference/configuration.md",
            MEMORY_KEY_PARSERS[f.name],
        )
        for f in dataclasses.fields(MemoryConfig)
        if f.name in MEMORY_KEY_PARSERS
    ]
    specs += [
        KeySpec(f"memory.{k}", str, None, "a Hermes Agent key (ignored here)", _text)
        for k in sorted(MEMORY_TOLERATED_KEYS)
    ]
    specs += [
        KeySpec("sessions.db_path", str, "hermes-memory/sessions.db", "the archive file", _text),
        KeySpec(
            "sessions.backend", str, "sqlite", "sqlite or postgres", _choice("sqlite", "postgres")
        ),
        KeySpec(
            "sessions.follow_hermes",
            bool,
            False,
            "keep importing what is new in <home>/state.db (read-only)",
            as_bool,
        ),
        KeySpec("sessions.embedder", str, None, "hybrid recall: an embedder name", _text),
        KeySpec("sessions.embedder_model", str, None, "the embedder's model", _text),
        KeySpec("sessions.embedder_url", str, None, "openai: the server base URL", _text),
        KeySpec(
            "sessions.embedder_batch_size", int, None, "texts per call", _ranged(1, 4096, as_int)
        ),
        KeySpec("sessions.embedder_threads", int, None, "CPU threads", _ranged(1, 256, as_int)),
        KeySpec(
            "sessions.embedder_timeout",
            float,
            10.0,
            "openai: seconds per request",
            _ranged(0.001, 600, as_float),
        ),
        KeySpec(
            "sessions.embedder_api_key_env",
            str,
            "HERMES_MEMORY_EMBEDDER_API_KEY",
            "openai: the variable holding the key",
            _text,
        ),
        KeySpec("postgres.dsn", str, None, "PostgreSQL DSN", _text, secret=True),
        KeySpec("postgres.owner", str, None, "the tenant key of this home", _text),
    ]
    return specs


def _provider_keys() -> list[KeySpec]:
    """The typed settings of installed providers (those that declare a `Settings` class)."""
    from hermes_memory_core.plugins import get_registry

    specs: list[KeySpec] = []
    seen: set[str] = set()
    for registration in get_registry().providers.values():
        factory: Any = registration.factory
        if hasattr(factory, "resolve"):  # a LazyFactory: import the provider class now
            try:
                factory = factory.resolve()
            except Exception:  # noqa: S112 - a broken plugin: `plugins` and `doctor` report it
                continue
        settings = getattr(factory, "settings_class", None)
        section = getattr(settings, "section", "") if settings is not None else ""
        if settings is None or not section or section in seen or section in CORE_SECTIONS:
            continue
        seen.add(section)
        for field in settings.fields():
            if field.type is dict:
                continue  # mappings are edited by hand

            def check(value: Any, _field: Any = field, _section: str = section) -> Any:
                try:
                    return _field.parse(value, _section)
                except ValueError as exc:  # SettingsError names the key already
                    raise ValueError(str(exc).split(f"{_section}.{_field.key} ", 1)[-1]) from None

            specs.append(
                KeySpec(
                    f"{section}.{field.key}",
                    field.type,
                    field.default,
                    field.description,
                    check,
                    secret=field.secret,
                )
            )
    return specs


def known_keys(*, providers: bool = True) -> dict[str, KeySpec]:
    """Every key by ``section.key`` (providers' sections too unless ``providers=False``)."""
    specs = _core_keys() + (_provider_keys() if providers else [])
    return {spec.name: spec for spec in specs}


def suggest(name: str, candidates: list[str]) -> str | None:
    """The closest of ``candidates`` to ``name`` (difflib), or None."""
    found = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    if found:
        return found[0]
    # a right key in the wrong section: sessions.nudge_interval -> memory.nudge_interval
    tail = name.rsplit(".", 1)[-1]
    same = [c for c in candidates if c.rsplit(".", 1)[-1] == tail]
    return same[0] if same else None


@dataclass(frozen=True)
class UnknownKey:
    """A key of ``config.yaml`` nothing reads, with the closest known key."""

    name: str
    suggestion: str | None

    def describe(self) -> str:
        if self.suggestion:
            return _("unknown key {key} (did you mean {other}?)").format(
                key=self.name, other=self.suggestion
            )
        return _("unknown key {key}").format(key=self.name)


def unknown_keys(raw: Mapping[str, Any], keys: Mapping[str, KeySpec]) -> list[UnknownKey]:
    """Keys in our sections (and provider sections with typed settings) that nothing reads,
    and top-level keys that look like a misspelt section of ours."""
    from hermes_memory_core.config import SESSIONS_EMBEDDER_KEYS

    sections = sorted({spec.section for spec in keys.values()})
    names = sorted(keys)
    found: list[UnknownKey] = []
    for top, value in raw.items():
        top = str(top)
        if top not in sections:
            close = difflib.get_close_matches(top, list(CORE_SECTIONS), n=1, cutoff=0.75)
            if close and top not in CORE_SECTIONS:
                found.append(UnknownKey(top, close[0]))
            continue
        if not isinstance(value, Mapping):
            continue
        for key in value:
            name = f"{top}.{key}"
            if name in keys or (top == "sessions" and key in SESSIONS_EMBEDDER_KEYS):
                continue
            found.append(UnknownKey(name, suggest(name, names)))
    return found
