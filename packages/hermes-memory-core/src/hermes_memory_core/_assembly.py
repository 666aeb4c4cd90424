"""Assembly (internal): building a manager's providers from ``config.yaml`` and the registry.

Creating a provider is plugin code: a local tier's factory runs inline, an external one's
within ``hook_timeout`` on a helper thread. Whether a provider is local is decided here, from
its declared `MemoryProvider.tier` and its origin, never from its name.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from hermes_memory_core._provider import BUILTIN_TIER_NAMES, MemoryProvider
from hermes_memory_core._worker import call_bounded

if TYPE_CHECKING:
    from hermes_memory_core._manager import MemoryManager
    from hermes_memory_core.config import HermesConfig
    from hermes_memory_core.plugins import PluginRegistry

logger = logging.getLogger("hermes_memory_core.manager")

#: Import packages whose provider classes may be local tiers when added with `add_provider`.
LOCAL_TIER_PACKAGES: frozenset[str] = frozenset(
    {"hermes_memory_builtin", "hermes_memory_sessions", "hermes_memory_postgres"}
)


def trusted_local(provider: MemoryProvider, local: bool | None) -> bool:
    """Whether ``provider`` is called as a local tier.

    ``local=True`` is the caller's explicit trust. ``None`` trusts a class that declares
    ``tier = "local"`` only when it is defined in one of this project's packages
    (`LOCAL_TIER_PACKAGES`): a third party's declaration alone is not enough.
    """
    if local is not None:
        return local
    cls = type(provider)
    if cls.__module__.split(".")[0] not in LOCAL_TIER_PACKAGES:
        return False
    declared = any("tier" in k.__dict__ for k in cls.__mro__ if k is not MemoryProvider)
    return not declared or getattr(cls, "tier", "external") == "local"


def populate(manager: MemoryManager, registry: PluginRegistry, config: HermesConfig) -> None:
    """Add builtin + sessions + the configured external provider to ``manager``."""
    wanted = []
    if config.memory.memory_enabled or config.memory.user_profile_enabled:
        wanted.append("builtin")
    wanted.append("sessions")
    for name in wanted:
        if name not in registry.providers:
            logger.warning("memory tier %r is not installed; install hermes-memory-%s", name, name)
            continue
        add_from_registry(manager, registry, name, config)
    external = config.memory.provider
    if not external or external in BUILTIN_TIER_NAMES:
        return
    if external not in registry.providers:
        installed = ", ".join(n for n in registry.names() if n not in BUILTIN_TIER_NAMES)
        from hermes_memory_core.installer import install_command

        logger.warning(
            "memory.provider is %r but no such provider is installed (installed: %s); try: %s",
            external,
            installed or "none",
            install_command(f"hermes-memory-{external}"),
        )
        return
    add_from_registry(manager, registry, external, config)


def add_from_registry(
    manager: MemoryManager, registry: PluginRegistry, name: str, config: HermesConfig
) -> None:
    """Create provider ``name`` (bounded unless it is a local tier) and add it."""
    registration = registry.providers[name]
    local = registration.is_local_tier
    source = registration.distribution or registration.plugin

    def build() -> tuple[MemoryProvider, str, bool, str]:
        from hermes_memory_core.plugins import availability

        provider = registry.create(name, hermes_home=config.home, config=config.raw)
        available, reason = availability(provider)
        return provider, str(provider.name), available, reason

    if local:
        try:
            provider, own_name, available, reason = build()
        except (Exception, SystemExit) as exc:
            logger.warning("memory provider %r could not be created: %s", name, exc)
            return
    else:
        outcome = call_bounded(build, manager.hook_timeout, name=name)
        if not outcome.finished:
            logger.warning(
                "memory provider %r (%s) was not created within %.1fs "
                "(memory.hook_timeout); continuing without it",
                name,
                source,
                manager.hook_timeout,
            )
            return
        if outcome.error is not None:
            logger.warning(
                "memory provider %r (%s) could not be created: %s: %s",
                name,
                source,
                type(outcome.error).__name__,
                outcome.error,
            )
            return
        provider, own_name, available, reason = outcome.value
    if own_name != name:
        logger.warning(
            "memory provider registered as %r by %s calls itself %r; refused",
            name,
            source,
            own_name,
        )
        return
    if not available:
        logger.warning("memory provider %r is not available: %s", name, reason or "not configured")
        return
    manager.add_provider(provider, local=local)
