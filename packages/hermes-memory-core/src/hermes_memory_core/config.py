"""Reading ``<home>/config.yaml``: the Hermes ``memory:`` keys plus our ``sessions:`` section.

Hermes' own config file holds many other sections (model, toolsets, …); those are kept in
`HermesConfig.raw` untouched. Inside the sections we own, an unknown key logs a warning and a
value of the wrong type raises `ConfigError` naming the key.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_memory_core._coerce import (
    as_bool,
    as_non_negative_int,
    as_positive_float,
    as_positive_int,
)

__all__ = [
    "ConfigError",
    "HermesConfig",
    "MemoryConfig",
    "PostgresConfig",
    "SessionsConfig",
    "load_config",
    "parse_config",
    "resolve_home",
    "sessions_db_path",
]

logger = logging.getLogger(__name__)


class ConfigError(ValueError):
    """``config.yaml`` cannot be used as it is; the message names the file and the key."""


@dataclass(frozen=True)
class MemoryConfig:
    """The ``memory:`` section (Hermes keys plus our time bounds).

    The four ``*_timeout`` keys bound, in seconds, how long `MemoryManager` waits for the
    external provider (the local tiers are never time-bounded): ``prefetch_timeout`` for
    recall, ``hook_timeout`` for the quick hooks (``initialize``, ``system_prompt_block``,
    ``on_turn_start``, ``on_memory_write``, ``on_pre_compress``, ``on_session_switch``,
    ``on_delegation``), ``tool_timeout`` for its tools, and ``shutdown_timeout`` for draining
    queued syncs and for ``on_session_end`` / ``shutdown``. ``recall_max_chars`` and
    ``recall_max_lines`` cap the external provider's recall before it is scanned.
    ``nudge_interval`` (user turns, 0 = off), ``review_timeout`` (seconds) and
    ``review_max_turns`` (model calls) drive the background memory review
    (`hermes_memory_review`); ``write_approval`` stages every ``memory`` tool write.
    """

    memory_enabled: bool = True
    user_profile_enabled: bool = True
    memory_char_limit: int = 2200
    user_char_limit: int = 1375
    nudge_interval: int = 10
    provider: str = ""
    prefetch_timeout: float = 8.0
    hook_timeout: float = 5.0
    tool_timeout: float = 30.0
    shutdown_timeout: float = 5.0
    recall_max_chars: int = 8000
    recall_max_lines: int = 200
    write_approval: bool = False
    review_timeout: float = 120.0
    review_max_turns: int = 8
    backend: str = "files"


@dataclass(frozen=True)
class SessionsConfig:
    """The ``sessions:`` section: where the archive lives (see `sessions_db_path`)."""

    db_path: Path
    backend: str = "sqlite"
    #: The ``embedder*`` keys as written (``embedder``, ``embedder_model``, ``embedder_url``,
    #: ``embedder_batch_size``, ``embedder_threads``, ``embedder_timeout``,
    #: ``embedder_api_key_env``); empty: lexical search only. Checked and turned into an
    #: embedder by ``hermes_memory_vectors.embedder_from_config`` when the archive opens.
    embedder: Mapping[str, Any] = field(default_factory=dict, hash=False)
    #: Keep the archive following ``<home>/state.db`` (Hermes Agent's own database): an
    #: incremental, read-only import when the sessions provider starts and before CLI reads.
    #: Off by default: the first import copies a whole history (disk, time), so it is a
    #: choice the user makes; until then read commands and ``doctor`` say how to do it.
    follow_hermes: bool = False


#: Environment variable holding the PostgreSQL DSN when ``postgres.dsn`` is not set.
PG_DSN_ENV = "HERMES_MEMORY_PG_DSN"


@dataclass(frozen=True)
class PostgresConfig:
    """The ``postgres:`` section, shared by both tiers when a backend is ``postgres``:
    ``dsn`` (else `PG_DSN_ENV`; keep the password out of the file: libpq also reads
    ``PGPASSWORD`` and ``~/.pgpass``) and ``owner``, the tenant key whose rows this home sees
    (required when a backend is ``postgres``)."""

    dsn: str | None = None
    owner: str | None = None

    def __repr__(self) -> str:  # never print a password
        return f"PostgresConfig(dsn={'<set>' if self.dsn else None}, owner={self.owner!r})"


@dataclass(frozen=True)
class HermesConfig:
    """A parsed ``config.yaml`` for one home directory."""

    home: Path
    memory: MemoryConfig
    sessions: SessionsConfig
    raw: dict[str, Any] = field(default_factory=dict)
    postgres: PostgresConfig = field(default_factory=PostgresConfig)

    @property
    def path(self) -> Path:
        """The file this configuration was read from (it may not exist)."""
        return self.home / "config.yaml"


def resolve_home(home: str | os.PathLike[str] | None = None, *, profile: str | None = None) -> Path:
    """The home directory: ``home``, else ``$HERMES_HOME``, else ``~/.hermes``.

    With ``profile`` the result is ``<root>/profiles/<profile>`` (Hermes' profile layout).
    Resolved at call time so a changed ``HERMES_HOME`` is honoured.
    """
    root = Path(home) if home is not None else Path(os.environ.get("HERMES_HOME") or "~/.hermes")
    root = root.expanduser()
    if profile:
        if "/" in profile or "\\" in profile or profile in {".", ".."}:
            raise ConfigError(f"invalid profile name {profile!r}: use a plain name")
        root = root / "profiles" / profile
    return root


def load_config(home: str | os.PathLike[str] | None = None) -> HermesConfig:
    """Read ``<home>/config.yaml``; a missing file gives the defaults.

    :raises ConfigError: unreadable or malformed YAML, or a known key of the wrong type.
    """
    home_path = resolve_home(home)
    path = home_path / "config.yaml"
    raw: Any = {}
    if path.exists():
        import yaml  # imported here: PyYAML is costly and a home without config needs none

        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read {path}: {exc}") from exc
        try:
            raw = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path} is not valid YAML: {_one_line(exc)}") from exc
    return parse_config(raw, home_path)


def parse_config(raw: Any, home: str | os.PathLike[str]) -> HermesConfig:
    """Check an already-parsed ``config.yaml`` mapping as `load_config` does (used to
    validate a change before it is written).

    :raises ConfigError: a known key of the wrong type, or a top level that is no mapping.
    """
    home_path = Path(home).expanduser()
    path = home_path / "config.yaml"
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the top level must be a mapping, got {type(raw).__name__}")
    memory = _parse_memory(_section(raw, "memory", path), path)
    sessions = _parse_sessions(_section(raw, "sessions", path), path, home_path)
    postgres = _parse_postgres(
        _section(raw, "postgres", path),
        path,
        needed=memory.backend == "postgres" or sessions.backend == "postgres",
    )
    return HermesConfig(
        home=home_path, memory=memory, sessions=sessions, raw=raw, postgres=postgres
    )


def _section(raw: Mapping[str, Any], name: str, path: Path) -> Mapping[str, Any]:
    value = raw.get(name)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{path}: '{name}' must be a mapping, got {type(value).__name__}")
    return value


def _choice(*allowed: str) -> Any:
    def parse(value: Any) -> str:
        if not isinstance(value, str) or value.strip().lower() not in allowed:
            raise ValueError("must be one of " + ", ".join(repr(a) for a in allowed))
        return value.strip().lower()

    return parse


def _as_seconds(value: Any) -> float:
    return as_positive_float(value, unit="seconds")


def _as_name(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("must be a provider name (a string)")
    return value.strip()


def _parse_memory(section: Mapping[str, Any], path: Path) -> MemoryConfig:
    defaults = MemoryConfig()
    known = MEMORY_KEY_PARSERS
    tolerated = MEMORY_TOLERATED_KEYS
    values: dict[str, Any] = {}
    for key, value in section.items():
        if key in known:
            if value is None:
                continue
            try:
                values[key] = known[key](value)
            except ValueError as exc:
                raise ConfigError(f"{path}: memory.{key} {exc}, got {value!r}") from None
        elif key not in tolerated:
            logger.warning(
                "%s: unknown key memory.%s is ignored%s", path, key, _did_you_mean(key, known)
            )
    return MemoryConfig(**{**vars(defaults), **values})


#: ``memory:`` keys and the check each value passes (what `load_config` applies).
MEMORY_KEY_PARSERS: dict[str, Any] = {
    "memory_enabled": as_bool,
    "user_profile_enabled": as_bool,
    "memory_char_limit": as_positive_int,
    "user_char_limit": as_positive_int,
    "nudge_interval": as_non_negative_int,
    "provider": _as_name,
    "prefetch_timeout": _as_seconds,
    "hook_timeout": _as_seconds,
    "tool_timeout": _as_seconds,
    "shutdown_timeout": _as_seconds,
    "recall_max_chars": as_positive_int,
    "recall_max_lines": as_positive_int,
    "write_approval": as_bool,
    "review_timeout": _as_seconds,
    "review_max_turns": as_positive_int,
    "backend": _choice("files", "postgres"),
}
#: Keys Hermes itself uses in ``memory:`` that we accept and ignore.
MEMORY_TOLERATED_KEYS = frozenset({"flush_min_turns", "memory_mode"})


#: The session archive's file, relative to the home, unless ``sessions.db_path`` says otherwise.
#: A file of our own: ``<home>/state.db`` is Hermes Agent's database and is never our archive.
DEFAULT_SESSIONS_DB = Path("hermes-memory") / "sessions.db"


def sessions_db_path(home: str | os.PathLike[str], configured: str | None = None) -> Path:
    """Where the session archive lives: ``configured`` (``sessions.db_path``; ``~`` expanded,
    relative to ``home`` unless absolute), else ``<home>/hermes-memory/sessions.db``.

    The one place this is decided (config loading, the sessions provider and the CLI use it).
    """
    home_path = Path(home).expanduser()
    if configured is None or not str(configured).strip():
        return home_path / DEFAULT_SESSIONS_DB
    candidate = Path(configured).expanduser()
    return candidate if candidate.is_absolute() else home_path / candidate


def _parse_sessions(section: Mapping[str, Any], path: Path, home: Path) -> SessionsConfig:
    db_path = sessions_db_path(home)
    backend = "sqlite"
    embedder: dict[str, Any] = {}
    follow = False
    for key, value in section.items():
        if key in SESSIONS_EMBEDDER_KEYS:
            embedder[key] = value
        elif key == "follow_hermes":
            if value is None:
                continue
            try:
                follow = as_bool(value)
            except ValueError as exc:
                raise ConfigError(f"{path}: sessions.follow_hermes {exc}, got {value!r}") from None
        elif key == "backend":
            if value is None:
                continue
            try:
                backend = _choice("sqlite", "postgres")(value)
            except ValueError as exc:
                raise ConfigError(f"{path}: sessions.backend {exc}, got {value!r}") from None
        elif key == "db_path":
            if value is None:
                continue
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"{path}: sessions.db_path must be a path string, got {value!r}")
            db_path = sessions_db_path(home, value)
        else:
            logger.warning(
                "%s: unknown key sessions.%s is ignored%s",
                path,
                key,
                _did_you_mean(
                    key, {"db_path", "backend", "follow_hermes", *SESSIONS_EMBEDDER_KEYS}
                ),
            )
    return SessionsConfig(db_path=db_path, backend=backend, embedder=embedder, follow_hermes=follow)


#: ``sessions:`` keys read by the embedder (hermes-memory-vectors), handed over as written.
SESSIONS_EMBEDDER_KEYS = frozenset(
    {
        "embedder",
        "embedder_model",
        "embedder_url",
        "embedder_batch_size",
        "embedder_threads",
        "embedder_timeout",
        "embedder_api_key_env",
        "embedder_api_key",  # refused by the embedder with a clear message (keys: env only)
        "fast_embedder",  # the fast tier (hermes_memory_sessions.vectors._tiers)
    }
)


def _parse_postgres(section: Mapping[str, Any], path: Path, *, needed: bool) -> PostgresConfig:
    values: dict[str, str] = {}
    for key, value in section.items():
        if key in ("dsn", "owner"):
            if value is None:
                continue
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"{path}: postgres.{key} must be a non-empty string")
            values[key] = value.strip()
        else:
            logger.warning(
                "%s: unknown key postgres.%s is ignored%s",
                path,
                key,
                _did_you_mean(key, {"dsn", "owner"}),
            )
    dsn = values.get("dsn") or os.environ.get(PG_DSN_ENV, "").strip() or None
    owner = values.get("owner")
    if needed and dsn is None:
        raise ConfigError(
            f"{path}: a backend is 'postgres' but no DSN is set (postgres.dsn or {PG_DSN_ENV})"
        )
    if needed and owner is None:
        raise ConfigError(
            f"{path}: a backend is 'postgres' but postgres.owner (the tenant key whose rows"
            " this home reads and writes) is not set"
        )
    return PostgresConfig(dsn=dsn, owner=owner)


def _did_you_mean(key: Any, known: Any) -> str:
    """`` (did you mean X?)`` for the closest known key (difflib), or ``""``."""
    import difflib

    close = difflib.get_close_matches(str(key), sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())
