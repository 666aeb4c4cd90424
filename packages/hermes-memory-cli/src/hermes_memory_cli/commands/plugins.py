"""``hermes-memory plugins`` and ``hermes-memory provider status|use|off``."""

from __future__ import annotations

from typing import Any

from hermes_memory_cli._context import CLIError, Context
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
        raise CLIError("NAME and --dry-run go with 'plugins install'", code=2)
    infos = _infos(ctx)
    if ctx.json:
        ctx.emit_json([info.as_dict() for info in infos])
        return 0
    if not infos:
        ctx.say("No hermes-memory plugins are installed.")
        return 0
    width = max(len(info.name) for info in infos) + 2
    for info in infos:
        origin = f"{info.distribution or '?'} {info.version or ''}".strip()
        if info.load_error:
            status = f"LOAD ERROR: {info.load_error}"
        elif info.available:
            status = "available"
        else:
            status = f"not available: {info.unavailable_reason}"
        ctx.say(f"{info.name:<{width}}{origin}  {status}")
        if info.hooks:
            ctx.say(f"{'':<{width}}hooks: {', '.join(info.hooks)}", style="dim")
    return 0


def _external(ctx: Context) -> str:
    from hermes_memory_core.provider import BUILTIN_TIER_NAMES

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
                else f"no provider named {name!r} is installed; install it with: "
                f"{install_command(f'hermes-memory-{name}')}"
            ),
            distribution=info.distribution if info else None,
            version=info.version if info else None,
            health=read_provider_status(ctx.home, name),
        )
    if ctx.json:
        ctx.emit_json(report)
        return 0
    for tier, state in tiers.items():
        word = "on" if state["available"] else "missing" if not state["installed"] else "off"
        ctx.say(f"{tier:<9} {word}")
    if postgres is not None:
        ctx.say(f"postgres  {_postgres_line(postgres)}")
    if not name:
        ctx.say("external  none (memory.provider is not set; 'hermes-memory provider use NAME')")
        return 0
    if report["available"]:
        ctx.say(f"external  {name} ({report['distribution']} {report['version']}): available")
    else:
        ctx.say(f"external  {name}: NOT available: {report['unavailable_reason']}")
    health = report["health"]
    if health:
        detail = f" — {health.get('detail')}" if health.get("detail") else ""
        failures = health.get("failures") or 0
        ctx.say(
            f"health    {health.get('state')}{detail} (failures: {failures}, "
            f"updated {_ago(health.get('updated_at'))})"
        )
    else:
        ctx.say("health    no record yet (written by a running agent when something goes wrong)")
    return 0


def _postgres_state(ctx: Context) -> dict[str, Any] | None:
    """`hermes_memory_postgres.status.backend_status` when a tier is on PostgreSQL."""
    raw = ctx.config.raw
    if not any(
        isinstance(raw.get(t), dict) and raw[t].get("backend") == "postgres"
        for t in ("memory", "sessions")
    ):
        return None
    try:
        from hermes_memory_postgres.status import backend_status
    except ImportError:
        return {
            "error": "hermes-memory-postgres is not installed; "
            + install_command("hermes-memory-postgres")
        }
    return backend_status(raw, ctx.home)


def _postgres_line(state: dict[str, Any]) -> str:
    """One line: tiers, masked DSN, owner, connection, schema version, spool backlog."""
    if "tiers" not in state:
        return f"NOT available: {state['error']}"
    tiers = ", ".join(state["tiers"])
    where = f"{tiers} on {state['dsn'] or '(no DSN)'} (owner {state['owner']!r})"
    if state["reachable"]:
        have, want = state["schema_version"], state["expected_schema_version"]
        conn = f"connected, schema version {have}" + ("" if have == want else f" (release: {want})")
    else:
        conn = f"UNREACHABLE: {state['error']}"
    spool = f"spool: {state['spool_pending']:,} turn write(s) waiting"
    if state["spool_other_owners"]:
        spool += f", {state['spool_other_owners']:,} under another owner key"
    return f"{where}: {conn}; {spool}"


def _ago(ts: Any) -> str:
    import time

    try:
        seconds = max(0.0, time.time() - float(ts))
    except (TypeError, ValueError):
        return "at an unknown time"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return f"{int(seconds)} s ago"


def _write(ctx: Context, value: str) -> None:
    from hermes_memory_cli.configedit import ConfigEditError, set_memory_provider

    ctx.ensure_home()
    _ = ctx.config  # a malformed file is reported before anything is written
    try:
        set_memory_provider(ctx.config.path, value)
    except ConfigEditError as exc:
        raise CLIError(f"{ctx.config.path}: {exc}") from None
    except OSError as exc:
        raise CLIError(f"cannot write {ctx.config.path}: {exc}") from None


def provider_use(ctx: Context) -> int:
    """Select an installed provider; say what it still needs when it is not available."""
    from hermes_memory_core.plugins import get_registry
    from hermes_memory_core.provider import BUILTIN_TIER_NAMES

    name: str = ctx.args.name.strip()
    if name in BUILTIN_TIER_NAMES:
        raise CLIError(
            f"'{name}' is always on; choose an external provider, or 'provider off' for none"
        )
    registry = get_registry()
    infos = {info.name: info for info in _infos(ctx)}
    if name not in registry.providers:
        installed = [n for n in registry.names() if n not in BUILTIN_TIER_NAMES]
        broken = infos.get(name)
        if broken is not None and broken.load_error:
            raise CLIError(f"provider {name!r} failed to load: {broken.load_error}")
        raise CLIError(
            f"no provider named {name!r} is installed (installed: {', '.join(installed) or 'none'}"
            f"); install it with: {install_command(f'hermes-memory-{name}')}"
        )
    info = infos[name]
    if info.load_error:
        raise CLIError(f"provider {name!r} cannot be created: {info.load_error}")
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
    ctx.say(f"memory.provider set to {name!r} in {ctx.config.path}.")
    if info.available:
        ctx.say(f"{name} is available; new agent sessions will use it.")
    else:
        ctx.say(f"{name} is not available yet: {info.unavailable_reason}")
        ctx.say("Until that is fixed the agent runs with the builtin memory only.")
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
        ctx.say(f"External provider {previous!r} turned off in {ctx.config.path}.")
    else:
        ctx.say(f"No external provider was set; {ctx.config.path} now says so explicitly.")
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
