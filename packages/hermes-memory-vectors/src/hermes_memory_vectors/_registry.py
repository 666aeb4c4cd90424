"""Embedders offered by installed distributions: the ``hermes_memory.embedders`` entry points.

A third-party package adds an embedder with an entry point naming a factory::

    [project.entry-points."hermes_memory.embedders"]
    my-embedder = "my_package.embedding:make_embedder"

``make_embedder`` is called with keyword arguments it accepts among ``settings``
(`EmbedderSettings`), ``config`` (the raw ``sessions:`` mapping) and ``environ`` (the
environment), and returns an object following the `Embedder` protocol. An entry point that
names a module uses that module's ``make_embedder``. Users select it with
``sessions.embedder: my-embedder``.

Like core's provider loader, every entry point is loaded on its own: one that fails to import
is recorded in `EmbedderRegistry.errors` (and logged once) and the others still load. The
names ``default``, ``static``, ``onnx``, ``fastembed`` and ``openai`` belong to this package;
another distribution registering one of them is refused and recorded.
"""

from __future__ import annotations

import difflib
import inspect
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata as importlib_metadata
from types import ModuleType
from typing import Any

from hermes_memory_core.plugins import (
    accepted_kwargs,
    contain_plugin_exits,
    normalize_dist,
    reraise_host_interrupt,
)
from hermes_memory_vectors._base import (
    Embedder,
    EmbedderConfigError,
    EmbedderError,
    EmbedderUnavailable,
)
from hermes_memory_vectors._config import BUILTIN_EMBEDDERS, EmbedderSettings

__all__ = [
    "EMBEDDER_ENTRY_POINT_GROUP",
    "EmbedderLoadError",
    "EmbedderRegistration",
    "EmbedderRegistry",
    "create_embedder",
    "embedder_from_config",
    "get_embedder_registry",
]

logger = logging.getLogger(__name__)

EMBEDDER_ENTRY_POINT_GROUP = "hermes_memory.embedders"
OWN_DISTRIBUTION = "hermes-memory-vectors"

EmbedderFactory = Callable[..., Embedder]

_logged: set[tuple[str, str]] = set()
_logged_lock = threading.Lock()


@dataclass(frozen=True)
class EmbedderRegistration:
    """One embedder factory and where it came from."""

    name: str
    factory: EmbedderFactory
    distribution: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class EmbedderLoadError:
    """An entry point that could not be loaded, or whose registration was refused."""

    name: str
    distribution: str | None
    version: str | None
    error: str


@dataclass
class EmbedderRegistry:
    """Embedder factories by name, and the entry points that failed."""

    embedders: dict[str, EmbedderRegistration] = field(default_factory=dict)
    errors: list[EmbedderLoadError] = field(default_factory=list)

    @classmethod
    def from_entry_points(cls, group: str = EMBEDDER_ENTRY_POINT_GROUP) -> EmbedderRegistry:
        """Load every entry point of ``group``, each in its own try/except."""
        registry = cls()
        seen: set[tuple[str, str]] = set()
        for ep in importlib_metadata.entry_points(group=group):
            if (ep.name, ep.value) in seen:  # one distribution on sys.path twice
                continue
            seen.add((ep.name, ep.value))
            dist = getattr(ep, "dist", None)
            dist_name = dist.metadata["Name"] if dist is not None else None
            version = dist.version if dist is not None else None
            try:
                with contain_plugin_exits():
                    loaded = ep.load()
            except BaseException as exc:  # SystemExit too; a real Ctrl-C goes on
                reraise_host_interrupt(exc)
                registry._error(ep.name, dist_name, version, f"import failed: {_describe(exc)}")
                continue
            registry.register(ep.name, loaded, distribution=dist_name, version=version)
        return registry

    def register(
        self,
        name: str,
        factory: EmbedderFactory | ModuleType,
        *,
        distribution: str | None = None,
        version: str | None = None,
    ) -> bool:
        """Add a factory (or a module with ``make_embedder``); refusals go to `errors`.

        :returns: whether it was registered.
        """
        if isinstance(factory, ModuleType):
            factory = getattr(factory, "make_embedder", None)  # type: ignore[assignment]
        if not callable(factory):
            self._error(
                name,
                distribution,
                version,
                "entry point is neither callable nor a module with make_embedder()",
            )
            return False
        if name in BUILTIN_EMBEDDERS and normalize_dist(distribution) != OWN_DISTRIBUTION:
            self._error(
                name,
                distribution,
                version,
                f"embedder name {name!r} is reserved for {OWN_DISTRIBUTION}; "
                f"{distribution or '(unknown distribution)'} may not register it",
            )
            return False
        existing = self.embedders.get(name)
        if existing is not None:
            self._error(
                name,
                distribution,
                version,
                f"embedder name {name!r} is already registered by "
                f"{existing.distribution or '(unknown)'}",
            )
            return False
        self.embedders[name] = EmbedderRegistration(name, factory, distribution, version)
        return True

    def names(self) -> list[str]:
        """Registered names, in load order."""
        return list(self.embedders)

    def create(
        self,
        name: str,
        settings: EmbedderSettings,
        *,
        config: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Embedder:
        """Call the factory registered as ``name``.

        :raises EmbedderConfigError: no such embedder (the message lists the installed ones
            and the load errors), or the factory said the configuration is wrong.
        :raises EmbedderUnavailable: the factory failed or returned something that is not
            an embedder.
        """
        registration = self.embedders.get(name)
        if registration is None:
            names = sorted(set(self.embedders) | set(BUILTIN_EMBEDDERS))
            broken = [e for e in self.errors if e.name == name]
            why = f" (its entry point failed: {broken[0].error})" if broken else ""
            close = difflib.get_close_matches(name, names, n=1)
            hint = f" (did you mean {close[0]}?)" if close and not broken else ""
            raise EmbedderConfigError(
                f"{settings.key('embedder')}: no embedder named {name!r} is installed{why}{hint}"
                f"; installed: {', '.join(names)}"
            )
        options: dict[str, Any] = {"settings": settings, "config": dict(config or {})}
        if environ is not None:
            options["environ"] = environ
        origin = registration.distribution or "(unknown distribution)"
        try:
            with contain_plugin_exits():
                embedder = registration.factory(**accepted_kwargs(registration.factory, options))
        except EmbedderError:
            raise
        except BaseException as exc:  # plugin code: SystemExit too; a real Ctrl-C goes on
            reraise_host_interrupt(exc)
            raise EmbedderUnavailable(
                f"embedder {name!r} from {origin} failed to start: {_describe(exc)}"
            ) from exc
        if not looks_like_embedder(embedder):
            raise EmbedderUnavailable(
                f"embedder {name!r} from {origin} returned {type(embedder).__name__}, "
                "which lacks name / dim / embed_documents / embed_query"
            )
        return embedder

    def _error(self, name: str, dist: str | None, version: str | None, error: str) -> None:
        self.errors.append(EmbedderLoadError(name, dist, version, error))
        with _logged_lock:
            if (name, error) in _logged:
                return
            _logged.add((name, error))
        logger.warning("Could not load embedder %r (%s): %s", name, dist or "?", error)


def looks_like_embedder(obj: object) -> bool:
    """Whether ``obj`` has the four members of `Embedder`, checked without calling them.

    (``isinstance(obj, Embedder)`` would read ``dim``, which may ask a server.)
    """
    for member in ("name", "dim", "embed_documents", "embed_query"):
        try:
            inspect.getattr_static(obj, member)
        except AttributeError:
            return False
    return callable(getattr(obj, "embed_documents", None)) and callable(
        getattr(obj, "embed_query", None)
    )


_registry: EmbedderRegistry | None = None
_registry_lock = threading.Lock()


def get_embedder_registry(*, refresh: bool = False) -> EmbedderRegistry:
    """The process-wide registry loaded from entry points (loaded once, cached)."""
    global _registry
    with _registry_lock:
        if _registry is None or refresh:
            _registry = EmbedderRegistry.from_entry_points()
        return _registry


def create_embedder(
    name: str,
    settings: EmbedderSettings,
    *,
    config: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    registry: EmbedderRegistry | None = None,
) -> Embedder:
    """Build embedder ``name``: built-ins directly (no entry-point scan), others from
    ``registry`` (default: `get_embedder_registry`)."""
    from hermes_memory_vectors import _builtin

    if name == "default":
        return _builtin.make_default(settings)
    if name == "static":
        return _builtin.make_static(settings)
    if name == "onnx":
        return _builtin.make_onnx(settings)
    if name == "fastembed":
        return _builtin.make_fastembed(settings)
    if name == "openai":
        return _builtin.make_openai(settings, environ)
    return (registry or get_embedder_registry()).create(
        name, settings, config=config, environ=environ
    )


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def embedder_from_config(
    section: Mapping[str, Any] | None,
    *,
    section_name: str = "sessions",
    environ: Mapping[str, str] | None = None,
) -> Embedder | None:
    """The embedder a configuration section asks for, or ``None`` when ``embedder`` is unset.

    ``section`` is the ``sessions:`` mapping of ``config.yaml`` (other keys in it are
    ignored). Built-in names are built directly; any other name is looked up among the
    ``hermes_memory.embedders`` entry points.

    :raises EmbedderConfigError: a bad value, a missing required key, or an unknown
        embedder name (the message names the key and lists what is installed).
    :raises EmbedderUnavailable: the embedder is configured right but cannot run here
        (library or model missing, third-party factory failed).
    """
    settings = EmbedderSettings.from_section(section, section_name=section_name)
    if settings.embedder is None:
        for name in ("model", "url", "batch_size", "threads", "timeout"):
            if getattr(settings, name) is not None:
                logger.warning(
                    "%s is set but %s is not: no embedder is used",
                    settings.key(name),
                    settings.key("embedder"),
                )
                break
        return None
    return create_embedder(settings.embedder, settings, config=dict(section or {}), environ=environ)
