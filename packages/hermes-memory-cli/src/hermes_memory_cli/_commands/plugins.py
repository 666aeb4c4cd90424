"""``hermes-memory plugins`` and ``hermes-memory provider status|use|off``."""

from __future__ import annotations

from typing import Any

from hermes_memory_cli._context import CLIError, Context
from hermes_memory_cli._i18n import cli_gettext as _
from hermes_memory_cli._install import install_command


def _infos(ctx: Context) -> list[Any]:
    from hermes_memory_core.plugins import list_providers

    config = ctx.config
    return list_providers(hermes_home=config.home, config=config.raw)


def plugins(ctx: Context) -> int:
    """Installed providers (name, distribution, version, hooks, availability, load error).

    ``plugins`` and ``plugins list`` are the same. It describes the installation, so it
    also works before any home exists (the home's config.yaml is read when present).
    """
    if getattr(ctx.args, "action", None) == "install":
        return install(ctx)
    if getattr(ctx.args, "name", None) or getattr(ctx.args, "dry_run", False):
        raise CLIError(_("NAME and --dry-run go with 'plugins install'"), code=2)
    infos = _infos(ctx)
    if ctx.json:
        ctx.emit_json([info.as_dict() for info in infos])
        return 0
    if not infos:
        ctx.say(_("No hermes-memory plugins are installed."))
        return 0
    width = max(len(info.name) for info in infos) + 2
    for info in infos:
        origin = f"{info.distribution or '?'} {info.version or ''}".strip()
        if info.load_error:
            status = _("LOAD ERROR: {error}").format(error=info.load_error)
        elif info.available:
            status = _("available")
        else:
            status = _("not available: {reason}").format(reason=info.unavailable_reason)
        ctx.say(f"{info.name:<{width}}{origin}  {status}")
        if info.hooks:
            hooks = _("hooks: {hooks}").format(hooks=", ".join(info.hooks))
            ctx.say(f"{'':<{width}}{hooks}", style="dim")
    return 0


def _external(ctx: Context) -> str:
    from hermes_memory_core import BUILTIN_TIER_NAMES

    name = ctx.config.memory.provider
    return "" if name in BUILTIN_TIER_NAMES else name


def provider_status(ctx: Context) -> int:
    """The configured external provider, its availability and its last health record."""
    from hermes_memory_core.health import read_provider_status

    ctx.require_home()
    name = _external(ctx)
    infos = {info.name: info for info in _infos(ctx)}
    tiers = {
        tier: {
            "installed": tier in infos,
            "available": bool(infos[tier].available) if tier in infos else False,
        }
        for tier in ("builtin", "sessions")
    }
    report: dict[str, Any] = {
        "config": str(ctx.config.path),
        "provider": name or None,
        "tiers": tiers,
    }
    postgres = _postgres_state(ctx)
    if postgres is not None:
        report["postgres"] = postgres
    if name:
        info = infos.get(name)
        report.update(
            installed=info is not None and not info.load_error,
            available=bool(info and info.available),
            unavailable_reason=(
                (info.load_error or info.unavailable_reason)
                if info
                else _(
                    "no provider named {name!r} is installed; install it with: {command}"
                ).format(name=name, command=install_command(f"hermes-memory-{name}"))
            ),
            distribution=info.distribution if info else None,
            version=info.version if info else None,
            health=read_provider_status(ctx.home, name),
        )
    if ctx.json:
        ctx.emit_json(report)
        return 0
    for tier, state in tiers.items():
        word = (
            _("on") if state["available"] else _("missing") if not state["installed"] else _("off")
        )
        ctx.say(f"{tier:<9} {word}")
    if postgres is not None:
        ctx.say(f"postgres  {_postgres_line(postgres)}")
    if not name:
        none = _("none (memory.provider is not set; 'hermes-memory provider use NAME')")
        ctx.say(f"external  {none}")
        return 0
    if report["available"]:
        state_line = _("{name} ({distribution} {version}): available").format(
            name=name, distribution=report["distribution"], version=report["version"]
        )
    else:
        state_line = _("{name}: NOT available: {reason}").format(
            name=name, reason=report["unavailable_reason"]
        )
    ctx.say(f"external  {state_line}")
    health = report["health"]
    if health:
        detail = f" — {health.get('detail')}" if health.get("detail") else ""
        failures = health.get("failures") or 0
        line = _("{state}{detail} (failures: {failures}, updated {ago})").format(
            state=health.get("state"),
            detail=detail,
            failures=failures,
            ago=_ago(health.get("updated_at")),
        )
        ctx.say(f"health    {line}")
    else:
        none = _("no record yet (written by a running agent when something goes wrong)")
        ctx.say(f"health    {none}")
    return 0


def _postgres_state(ctx: Context) -> dict[str, Any] | None:
    """`hermes_memory_postgres.backend_status` when a tier is on PostgreSQL."""
    raw = ctx.config.raw
    if not any(
        isinstance(raw.get(t), dict) and raw[t].get("backend") == "postgres"
        for t in ("memory", "sessions")
    ):
        return None
    try:
        from hermes_memory_postgres import backend_status
    except ImportError:
        return {
            "error": _("hermes-memory-postgres is not installed; {command}").format(
                command=install_command("hermes-memory-postgres")
            )
        }
    return backend_status(raw, ctx.home)


def _postgres_line(state: dict[str, Any]) -> str:
    """One line: tiers, masked DSN, owner, connection, schema version, spool backlog."""
    if "tiers" not in state:
        return _("NOT available: {reason}").format(reason=state["error"])
    where = _("{tiers} on {dsn} (owner {owner!r})").format(
        tiers=", ".join(state["tiers"]),
        dsn=state["dsn"] or _("(no DSN)"),
        owner=state["owner"],
    )
    if state["reachable"]:
        have, want = state["schema_version"], state["expected_schema_version"]
        conn = _("connected, schema version {version}").format(version=have) + (
            "" if have == want else " " + _("(release: {version})").format(version=want)
        )
    else:
        conn = _("UNREACHABLE: {reason}").format(reason=state["error"])
    spool = _("spool: {count:,} turn write(s) waiting").format(count=state["spool_pending"])
    if state["spool_other_owners"]:
        spool += _(", {count:,} under another owner key").format(count=state["spool_other_owners"])
    return f"{where}: {conn}; {spool}"


def _ago(ts: Any) -> str:
    import time

    try:
        seconds = max(0.0, time.time() - float(ts))
    except (TypeError, ValueError):
        return _("at an unknown time")
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return _("{count} {unit} ago").format(count=int(seconds // size), unit=unit)
    return _("{count} {unit} ago").format(count=int(seconds), unit="s")


def _write(ctx: Context, value: str) -> None:
    from hermes_memory_cli._configedit import ConfigEditError, set_memory_provider

    ctx.ensure_home()
    config = ctx.config  # a malformed file is reported before anything is written
    try:
        set_memory_provider(config.path, value)
    except ConfigEditError as exc:
        raise CLIError(f"{config.path}: {exc}") from None
    except OSError as exc:
        raise CLIError(
            _("cannot write {path}: {error}").format(path=config.path, error=exc)
        ) from None


def provider_use(ctx: Context) -> int:
    """Select an installed provider; say what it still needs when it is not available."""
    from hermes_memory_core import BUILTIN_TIER_NAMES
    from hermes_memory_core.plugins import get_registry

    name: str = ctx.args.name.strip()
    if name in BUILTIN_TIER_NAMES:
        raise CLIError(
            _(
                "'{name}' is always on; choose an external provider, or 'provider off' for none"
            ).format(name=name)
        )
    registry = get_registry()
    infos = {info.name: info for info in _infos(ctx)}
    if name not in registry.providers:
        installed = [n for n in registry.names() if n not in BUILTIN_TIER_NAMES]
        broken = infos.get(name)
        if broken is not None and broken.load_error:
            raise CLIError(
                _("provider {name!r} failed to load: {error}").format(
                    name=name, error=broken.load_error
                )
            )
        raise CLIError(
            _(
                "no provider named {name!r} is installed (installed: {installed}); "
                "install it with: {command}"
            ).format(
                name=name,
                installed=", ".join(installed) or _("none"),
                command=install_command(f"hermes-memory-{name}"),
            )
        )
    info = infos[name]
    if info.load_error:
        raise CLIError(
            _("provider {name!r} cannot be created: {error}").format(
                name=name, error=info.load_error
            )
        )
    _write(ctx, name)
    if ctx.json:
        ctx.emit_json(
            {
                "provider": name,
                "config": str(ctx.config.path),
                "available": info.available,
                "unavailable_reason": info.unavailable_reason,
            }
        )
        return 0
    ctx.say(_("memory.provider set to {name!r} in {path}.").format(name=name, path=ctx.config.path))
    if info.available:
        ctx.say(_("{name} is available; new agent sessions will use it.").format(name=name))
    else:
        ctx.say(
            _("{name} is not available yet: {reason}").format(
                name=name, reason=info.unavailable_reason
            )
        )
        ctx.say(_("Until that is fixed the agent runs with the builtin memory only."))
    return 0


def provider_off(ctx: Context) -> int:
    """Clear ``memory.provider``: builtin memory and the session archive only."""
    previous = _external(ctx)
    _write(ctx, "")
    if ctx.json:
        ctx.emit_json(
            {"provider": None, "previous": previous or None, "config": str(ctx.config.path)}
        )
    elif previous:
        ctx.say(
            _("External provider {name!r} turned off in {path}.").format(
                name=previous, path=ctx.config.path
            )
        )
    else:
        ctx.say(
            _("No external provider was set; {path} now says so explicitly.").format(
                path=ctx.config.path
            )
        )
    return 0


#: Short names of the plugins and optional packages published from this repository.
FIRST_PARTY = (
    "byterover",
    "context",
    "example",
    "facts",
    "hindsight",
    "honcho",
    "mcp-server",
    "mem0",
    "openviking",
    "postgres",
    "retaindb",
    "supermemory",
    "vectors",
)


def distribution_for(name: str) -> str:
    """``mem0`` -> ``hermes-memory-mem0``; anything else (a distribution, a requirement
    with extras or a version) as given."""
    import re

    text = name.strip()
    base = re.split(r"[\[=<>!~; ]", text, maxsplit=1)[0].lower().replace("_", "-")
    if base in FIRST_PARTY:
        return "hermes-memory-" + text
    return text


def install(ctx: Context) -> int:
    """``plugins install NAME [--dry-run]``: with the installer the CLI was installed with."""
    import shlex
    import subprocess

    from hermes_memory_cli._i18n import cli_gettext as _
    from hermes_memory_cli._install import install_argv, installer_kind

    name = getattr(ctx.args, "name", None)
    if not name or not name.strip():
        raise CLIError(_("plugins install needs a NAME (e.g. mem0)"), code=2)
    if name.strip().startswith("-"):
        raise CLIError(_("{name!r} is not a package name").format(name=name), code=2)
    dist = distribution_for(name)
    argv = install_argv(dist)
    kind = installer_kind()
    if ctx.args.dry_run:
        if ctx.json:
            ctx.emit_json({"distribution": dist, "installer": kind, "command": argv})
        else:
            ctx.plain(shlex.join(argv))
        return 0
    ctx.note(_("Running: {command}").format(command=shlex.join(argv)))
    try:
        done = subprocess.run(argv, check=False)  # a list: no shell
    except FileNotFoundError:
        raise CLIError(
            _("{tool} is not on PATH; run it yourself: {command}").format(
                tool=argv[0], command=shlex.join(argv)
            )
        ) from None
    if done.returncode != 0:
        raise CLIError(
            _("the installer failed (exit status {code}): {command}").format(
                code=done.returncode, command=shlex.join(argv)
            )
        )
    if ctx.json:
        ctx.emit_json({"distribution": dist, "installer": kind, "installed": True})
    else:
        ctx.say(
            _(
                "Installed {dist}. 'hermes-memory plugins' lists it; select a provider with"
                " 'hermes-memory provider use NAME'."
            ).format(dist=dist)
        )
    return 0
