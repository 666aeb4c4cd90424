"""Finding providers: entry points in the ``hermes_memory`` group, each loaded on its own.

pluggy's own ``load_setuptools_entrypoints`` stops at the first plugin that fails to import.
Here every entry point is loaded in its own try/except: a failure is recorded (entry point,
distribution, version, error), logged once per process, and the others still load.

Selection by environment, comma-separated entry-point or provider names:
``HERMES_MEMORY_PLUGINS=a,b`` loads only those (plus the builtin tier, ``builtin`` and
``sessions``, which only the deny-list removes); ``HERMES_MEMORY_DISABLE_PLUGINS=a,b`` blocks them.

**Reserved names.** The provider names ``builtin`` and ``sessions`` are the local tiers:
`MemoryManager` calls them on the caller's thread, without a time bound and without the
recall filter. Only this project's own distributions (`RESERVED_PROVIDER_NAMES`) may register
them; a registration of either name from any other distribution is refused and recorded as a
load error naming that distribution.

**Exceptions from plugin code.** Importing a plugin, its ``register_memory_providers`` hook,
a provider factory and ``is_available`` may raise anything, ``SystemExit`` included: it is
recorded as that plugin's failure and never ends the host. ``KeyboardInterrupt`` is contained
the same way *unless* a real SIGINT (Ctrl-C) arrived while the plugin code ran on the main
thread: then it is re-raised, so a user can still stop a command that is importing plugins.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from importlib import metadata as importlib_metadata
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import pluggy

from hermes_memory_core._hookspecs import PROJECT_NAME, RegistrationSpec
from hermes_memory_core._provider import BUILTIN_TIER_NAMES, PROVIDER_HOOK_NAMES, MemoryProvider
from hermes_memory_core._worker import call_bounded

__all__ = [
    "ENTRY_POINT_GROUP",
    "PROVIDER_HOOK_NAMES",
    "RESERVED_PROVIDER_NAMES",
    "LazyFactory",
    "PluginLoadError",
    "PluginRegistry",
    "ProviderInfo",
    "ProviderRegistration",
    "get_registry",
    "list_providers",
    "overridden_hooks",
]

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = PROJECT_NAME
ALLOW_ENV = "HERMES_MEMORY_PLUGINS"
DENY_ENV = "HERMES_MEMORY_DISABLE_PLUGINS"

ProviderFactory = Callable[..., MemoryProvider]

#: Provider names only this project's own distributions may register (the local tiers),
#: mapped to the distributions allowed to (PEP 503-normalized names).
RESERVED_PROVIDER_NAMES: Mapping[str, frozenset[str]] = {
    "builtin": frozenset({"hermes-memory-builtin", "hermes-memory-postgres"}),
    "sessions": frozenset({"hermes-memory-sessions", "hermes-memory-postgres"}),
}

#: Seconds `PluginRegistry.describe` waits for one provider's factory and ``is_available``.
DESCRIBE_TIMEOUT = 5.0

_logged_failures: set[tuple[str, str]] = set()
_logged_lock = threading.Lock()


class LazyFactory:
    """A provider factory named by ``"package.module:Attribute"``, imported on first call.

    A plugin's entry-point module should stay light: pass ``register`` the dotted target of
    the provider class instead of the class, and its module (and the SDKs it imports) loads
    only when that provider is actually created::

        @hookimpl
        def register_memory_providers(register):
            register("my_memory.provider:MyProvider", name="mine")

    :raises ValueError: ``target`` is not of the form ``module:attribute``.
    """

    __slots__ = ("_lock", "_resolved", "target")

    def __init__(self, target: str) -> None:
        module, sep, attr = target.partition(":")
        if not sep or not module or not attr:
            raise ValueError(f"expected 'package.module:Attribute', got {target!r}")
        self.target = target
        self._resolved: Callable[..., Any] | None = None
        self._lock = threading.Lock()

    def resolve(self) -> Callable[..., Any]:
        """Import the target (once) and return it."""
        with self._lock:
            if self._resolved is None:
                module, _, attr = self.target.partition(":")
                value: Any = importlib.import_module(module)
                for part in attr.split("."):
                    value = getattr(value, part)
                if not callable(value):
                    raise TypeError(f"{self.target} is not callable")
                self._resolved = value
            return self._resolved

    def __call__(self, **options: Any) -> Any:
        return call_factory(self.resolve(), **options)

    def __repr__(self) -> str:
        return f"LazyFactory({self.target!r})"


@dataclass(frozen=True)
class ProviderRegistration:
    """One provider offered by a plugin."""

    name: str
    factory: ProviderFactory
    plugin: str
    distribution: str | None = None
    version: str | None = None

    @property
    def is_local_tier(self) -> bool:
        """True for a reserved name (``builtin``, ``sessions``) from one of our distributions.

        The registry refuses reserved names from any other distribution, so this is the
        identity `MemoryManager` trusts — never the provider's own ``name``.
        """
        allowed = RESERVED_PROVIDER_NAMES.get(self.name)
        return allowed is not None and normalize_dist(self.distribution) in allowed


@dataclass(frozen=True)
class PluginLoadError:
    """A plugin that could not be loaded, or whose registration was refused."""

    plugin: str
    distribution: str | None
    version: str | None
    error: str


@dataclass(frozen=True)
class ProviderInfo:
    """What ``hermes-memory plugins`` shows about one provider or one broken plugin."""

    name: str
    plugin: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...] = ()
    available: bool = False
    unavailable_reason: str = ""
    load_error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {
            "name": self.name,
            "plugin": self.plugin,
            "distribution": self.distribution,
            "version": self.version,
            "hooks": list(self.hooks),
            "available": self.available,
            "unavailable_reason": self.unavailable_reason,
            "load_error": self.load_error,
        }


@dataclass
class PluginRegistry:
    """Providers registered by plugins, and the plugins that failed.

    Build one with `PluginRegistry.from_entry_points()` (what the CLI and
    `MemoryManager.from_config` use) or register modules yourself with `register_plugin`.
    """

    providers: dict[str, ProviderRegistration] = field(default_factory=dict)
    errors: list[PluginLoadError] = field(default_factory=list)
    allow: set[str] | None = None
    deny: set[str] | None = None

    def __post_init__(self) -> None:
        self._pm = pluggy.PluginManager(PROJECT_NAME)
        self._pm.add_hookspecs(RegistrationSpec)

    # ----------------------------------------------------------------- loading
    @classmethod
    def from_entry_points(
        cls,
        group: str = ENTRY_POINT_GROUP,
        *,
        environ: Mapping[str, str] | None = None,
    ) -> PluginRegistry:
        """Load every entry point of ``group``, honouring the allow and deny lists."""
        env = os.environ if environ is None else environ
        allow = _name_set(env.get(ALLOW_ENV))
        deny = _name_set(env.get(DENY_ENV))
        registry = cls(allow=allow, deny=deny)
        for ep in _entry_points(group):
            if not _selected(ep.name, allow, deny):
                continue
            dist = getattr(ep, "dist", None)
            dist_name = dist.metadata["Name"] if dist is not None else None
            version = dist.version if dist is not None else None
            try:
                with contain_plugin_exits():
                    module = ep.load()
            except BaseException as exc:  # SystemExit too; a real Ctrl-C goes on
                reraise_host_interrupt(exc)
                registry._record_error(
                    ep.name, dist_name, version, f"import failed: {_describe(exc)}"
                )
                continue
            registry.register_plugin(module, name=ep.name, distribution=dist_name, version=version)
        return registry

    def register_plugin(
        self,
        plugin: ModuleType | object,
        *,
        name: str,
        distribution: str | None = None,
        version: str | None = None,
    ) -> None:
        """Register a plugin object (a module with `hookimpl` functions) and collect providers.

        A plugin whose hook implementations do not match the specs, or whose
        ``register_memory_providers`` raises, is recorded in `errors`; nothing raises.
        """
        try:
            with contain_plugin_exits():
                self._pm.register(plugin, name=name)
        except BaseException as exc:  # a module __getattr__ may raise anything
            reraise_host_interrupt(exc)
            self._record_error(name, distribution, version, f"invalid plugin: {_describe(exc)}")
            return
        caller = self._pm.subset_hook_caller(
            "register_memory_providers",
            remove_plugins=[p for p in self._pm.get_plugins() if p is not plugin],
        )

        plugin_name = name

        def register(factory: ProviderFactory | str, name: str | None = None) -> None:
            self._add_provider(
                factory, name, plugin_name=plugin_name, dist=distribution, ver=version
            )

        try:
            with contain_plugin_exits():
                caller(register=register)
        except BaseException as exc:  # SystemExit too; a real Ctrl-C goes on
            reraise_host_interrupt(exc)
            self._record_error(
                name, distribution, version, f"registration failed: {_describe(exc)}"
            )

    def _add_provider(
        self,
        factory: ProviderFactory | str,
        name: str | None,
        *,
        plugin_name: str,
        dist: str | None,
        ver: str | None,
    ) -> None:
        if isinstance(factory, str):
            try:
                factory = LazyFactory(factory)
            except ValueError as exc:
                self._record_error(plugin_name, dist, ver, f"provider {name!r}: {exc}")
                return
        provider_name = name or getattr(factory, "name", None)
        if not isinstance(provider_name, str) or not provider_name:
            self._record_error(plugin_name, dist, ver, "register() needs name='<provider name>'")
            return
        if not callable(cast(object, factory)):
            self._record_error(
                plugin_name, dist, ver, f"provider {provider_name!r}: factory is not callable"
            )
            return
        if not _selected(provider_name, self.allow, self.deny):
            return
        reserved_for = RESERVED_PROVIDER_NAMES.get(provider_name)
        if reserved_for is not None and normalize_dist(dist) not in reserved_for:
            self._record_error(
                plugin_name,
                dist,
                ver,
                f"provider name {provider_name!r} is reserved for "
                f"{' / '.join(sorted(reserved_for))}; "
                f"distribution {dist or '(unknown)'} may not register it",
            )
            return
        existing = self.providers.get(provider_name)
        if existing is not None:
            self._record_error(
                plugin_name,
                dist,
                ver,
                f"provider name {provider_name!r} is already registered by "
                f"{existing.distribution or existing.plugin}; "
                f"{dist or plugin_name} was not registered",
            )
            return
        self.providers[provider_name] = ProviderRegistration(
            provider_name, factory, plugin_name, dist, ver
        )

    def _record_error(self, plugin: str, dist: str | None, version: str | None, error: str) -> None:
        self.errors.append(PluginLoadError(plugin, dist, version, error))
        key = (plugin, error)
        with _logged_lock:
            if key in _logged_failures:
                return
            _logged_failures.add(key)
        logger.warning(
            "Could not load hermes-memory plugin %r (%s): %s", plugin, dist or "?", error
        )

    # ----------------------------------------------------------------- using
    def names(self) -> list[str]:
        """Registered provider names, in load order."""
        return list(self.providers)

    def create(
        self,
        name: str,
        *,
        hermes_home: Path | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> MemoryProvider:
        """Instantiate provider ``name``.

        :raises KeyError: no such provider is registered (the message lists what is).
        :raises TypeError: the factory did not return a `MemoryProvider`.
        """
        try:
            registration = self.providers[name]
        except KeyError:
            known = ", ".join(sorted(self.providers)) or "none"
            raise KeyError(
                f"no memory provider named {name!r} is installed (installed: {known})"
            ) from None
        provider = call_factory(registration.factory, hermes_home=hermes_home, config=config)
        if not isinstance(provider, MemoryProvider):
            raise TypeError(
                f"provider {name!r} from {registration.distribution or registration.plugin} "
                f"returned {type(provider).__name__}, not a MemoryProvider"
            )
        if provider.settings_class is not None:
            provider.configure(config)  # typed settings: validated here, once
        return provider

    def describe(
        self,
        *,
        hermes_home: Path | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> list[ProviderInfo]:
        """One `ProviderInfo` per provider (with availability) and per load error."""
        infos: list[ProviderInfo] = []
        for reg in self.providers.values():

            def probe(name: str = reg.name) -> tuple[bool, str, tuple[str, ...]]:
                provider = self.create(name, hermes_home=hermes_home, config=config)
                ok, why = availability(provider)
                return ok, why, overridden_hooks(provider)

            available, reason, error = False, "", None
            hooks: tuple[str, ...] = ()
            if reg.is_local_tier:  # our own code: run it here
                try:
                    with contain_plugin_exits():
                        available, reason, hooks = probe()
                except BaseException as exc:  # a real Ctrl-C goes on
                    reraise_host_interrupt(exc)
                    error = _describe(exc)
            else:
                outcome = call_bounded(probe, DESCRIBE_TIMEOUT, name=reg.name)
                if not outcome.finished:
                    error = f"did not answer within {DESCRIBE_TIMEOUT:g}s (hung in is_available?)"
                elif outcome.error is not None:
                    error = _describe(outcome.error)
                else:
                    available, reason, hooks = outcome.value
            infos.append(
                ProviderInfo(
                    name=reg.name,
                    plugin=reg.plugin,
                    distribution=reg.distribution,
                    version=reg.version,
                    hooks=hooks,
                    available=available,
                    unavailable_reason=reason,
                    load_error=error,
                )
            )
        for err in self.errors:
            infos.append(
                ProviderInfo(
                    name=err.plugin,
                    plugin=err.plugin,
                    distribution=err.distribution,
                    version=err.version,
                    load_error=err.error,
                )
            )
        return infos


def availability(provider: MemoryProvider) -> tuple[bool, str]:
    """``(available, reason)``: invalid typed settings first (one wording for every
    provider), then the provider's own `MemoryProvider.is_available`."""
    if error := provider.settings_error:
        return False, error
    if provider.is_available():
        return True, ""
    return False, str(provider.unavailable_reason() or "") or "not configured"


def call_factory(factory: Callable[..., Any], **options: Any) -> Any:
    """Call ``factory`` with those of ``options`` its signature accepts."""
    return factory(**accepted_kwargs(factory, options))


def accepted_kwargs(func: Callable[..., Any], options: Mapping[str, Any]) -> dict[str, Any]:
    """The subset of ``options`` that ``func`` can take as keyword arguments."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return dict(options)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return dict(options)
    usable = {
        n
        for n, p in params.items()
        if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    }
    return {k: v for k, v in options.items() if k in usable}


def overridden_hooks(provider: MemoryProvider) -> tuple[str, ...]:
    """Lifecycle hooks that ``provider``'s class defines itself rather than inheriting no-ops."""
    cls = type(provider)
    return tuple(
        name
        for name in PROVIDER_HOOK_NAMES
        if getattr(cls, name, None) is not getattr(MemoryProvider, name, None)
    )


_default_registry: PluginRegistry | None = None
_default_lock = threading.Lock()


def get_registry(*, refresh: bool = False) -> PluginRegistry:
    """The process-wide registry loaded from entry points (loaded once, cached)."""
    global _default_registry
    with _default_lock:
        if _default_registry is None or refresh:
            _default_registry = PluginRegistry.from_entry_points()
        return _default_registry


def list_providers(
    *,
    hermes_home: Path | None = None,
    config: Mapping[str, Any] | None = None,
    refresh: bool = False,
) -> list[ProviderInfo]:
    """Everything discovered: installed providers with availability, and load errors."""
    return get_registry(refresh=refresh).describe(hermes_home=hermes_home, config=config)


def _entry_points(group: str) -> Iterable[importlib_metadata.EntryPoint]:
    seen: set[tuple[str, str]] = set()
    for ep in importlib_metadata.entry_points(group=group):
        key = (ep.name, ep.value)
        if key not in seen:  # the same dist on sys.path twice shows its entry points twice
            seen.add(key)
            yield ep


def _name_set(value: str | None) -> set[str] | None:
    if value is None:
        return None
    return {part.strip() for part in value.split(",") if part.strip()}


def _selected(name: str, allow: set[str] | None, deny: set[str] | None) -> bool:
    if deny and name in deny:
        return False
    # The allow-list picks among optional plugins; the builtin tier stays unless denied.
    return allow is None or name in allow or name in BUILTIN_TIER_NAMES


def normalize_dist(name: str | None) -> str:
    """``name`` in PEP 503 form: ``Hermes_Memory.Builtin`` → ``hermes-memory-builtin``."""
    return re.sub(r"[-_.]+", "-", name).lower() if name else ""


@contextmanager
def contain_plugin_exits() -> Iterator[None]:
    """Around plugin code on the caller's thread: tell a real Ctrl-C from a plugin's raise.

    Catching ``BaseException`` around plugin code is the caller's job (and to call
    `reraise_host_interrupt` first); this context makes sure that a real SIGINT delivered
    while the block ran ends as a ``KeyboardInterrupt`` subclass the caller lets through —
    even when the plugin swallowed or converted it. On the main thread,
    while the block runs, SIGINT goes through a small wrapper that notes its arrival and
    then calls the previous handler. Elsewhere (worker threads, or SIGINT ignored) no
    signal can raise there, so nothing is installed.
    """
    watch = _SigintWatch()
    watch.install()
    try:
        yield
    except BaseException as exc:
        if watch.fired and not isinstance(exc, _RealInterrupt):
            raise _RealInterrupt from exc
        raise
    finally:
        watch.restore()
    if watch.fired:  # the plugin swallowed the user's Ctrl-C: the host still stops
        raise _RealInterrupt


def reraise_host_interrupt(exc: BaseException) -> None:
    """Re-raise ``exc`` if it is a real Ctrl-C noted by `contain_plugin_exits`."""
    if isinstance(exc, _RealInterrupt):
        raise exc


class _RealInterrupt(KeyboardInterrupt):
    """A KeyboardInterrupt that came from a real SIGINT (never contained)."""


class _SigintWatch:
    def __init__(self) -> None:
        self.fired = False
        self._previous: Any = None

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        import signal  # only plugin loading needs it

        try:
            previous = signal.getsignal(signal.SIGINT)
        except (ValueError, OSError):  # pragma: no cover - exotic embedders
            return
        if not callable(previous):  # SIG_IGN / SIG_DFL: no Python exception from SIGINT
            return

        def noting(signum: int, frame: Any) -> Any:
            self.fired = True
            return previous(signum, frame)

        try:
            signal.signal(signal.SIGINT, noting)
        except (ValueError, OSError):  # pragma: no cover
            return
        self._previous = previous

    def restore(self) -> None:
        if self._previous is None:
            return
        import signal

        with suppress(ValueError, OSError):
            signal.signal(signal.SIGINT, self._previous)
        self._previous = None


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
