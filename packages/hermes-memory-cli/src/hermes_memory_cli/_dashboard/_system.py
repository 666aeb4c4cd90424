"""``/providers``, ``/archive`` (counts, embedding, Hermes import) and ``/settings``."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.responses import JSONResponse, Response

from hermes_memory_cli._context import CLIError
from hermes_memory_cli._dashboard._frame import Dashboard, Page, Redirect
from hermes_memory_cli._dashboard._jobs import Job
from hermes_memory_cli._dashboard._web import N_, Flash

__all__ = [
    "archive_page",
    "choose_provider",
    "embed",
    "import_hermes",
    "progress",
    "providers_page",
    "save_settings",
    "settings_page",
]

_SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "dsn", "auth", "credential")


def _mask(key: str, value: Any, secret: bool = False) -> str:
    """A setting as it may be shown: secrets as ``••••``, everything else scrubbed."""
    from hermes_memory_core import scrub_secrets

    if value is None or value == "":
        return ""
    if secret or any(word in key.lower() for word in _SECRET_WORDS):
        return "••••••••"
    return str(scrub_secrets(str(value)))


# ---------------------------------------------------------------------- providers
def providers_page(dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str]) -> Page:
    from hermes_memory_cli._commands.plugins import _external, _infos, _postgres_state
    from hermes_memory_core import BUILTIN_TIER_NAMES
    from hermes_memory_core.health import read_provider_status
    from hermes_memory_core.plugins import get_registry

    ctx = dash.context()
    ctx.require_home()
    active = _external(ctx)
    registry = get_registry()
    rows = []
    for info in _infos(ctx):
        health = read_provider_status(ctx.home, info.name)
        if health is not None:
            health = {k: _mask(k, v) if isinstance(v, str) else v for k, v in health.items()}
        rows.append(
            {
                "info": info,
                "local": info.name in BUILTIN_TIER_NAMES,
                "active": info.name == active,
                "health": health,
                "settings": _settings_of(registry, info.name, ctx.config.raw),
            }
        )
    rows.sort(key=lambda r: (not r["active"], not r["local"], r["info"].name))
    postgres = _postgres_state(ctx)
    if postgres and postgres.get("dsn"):
        postgres = {**postgres, "dsn": _mask("dsn", postgres["dsn"])}
    installed = {r["info"].name for r in rows}
    return Page(
        "providers.html",
        {
            "title": N_("Providers"),
            "rows": rows,
            "active": active,
            "missing_active": bool(active) and active not in installed,
            "postgres": postgres,
        },
    )


def _settings_of(registry: Any, name: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    """The provider's declared settings with the configured values (masked) and the verdict."""
    registration = registry.providers.get(name)
    factory: Any = getattr(registration, "factory", None)
    if factory is not None and hasattr(factory, "resolve"):  # "module:Class", imported late
        try:
            factory = factory.resolve()
        except Exception:  # the load error is shown from the provider list already
            factory = None
    settings_class = getattr(factory, "settings_class", None)
    found = raw.get(name)
    section: dict[str, Any] = found if isinstance(found, dict) else {}
    fields: list[dict[str, Any]] = []
    error = ""
    if settings_class is not None:
        from hermes_memory_core.kit import resolve_settings

        _settings, error = resolve_settings(settings_class, raw)
        for field in settings_class.schema():
            key = str(field.get("key", ""))
            secret = bool(field.get("secret"))
            fields.append(
                {
                    **field,
                    "value": _mask(key, section.get(key), secret),
                    "set": key in section,
                    "default": _mask(key, field.get("default"), secret),
                }
            )
    else:
        fields = [{"key": k, "value": _mask(k, v), "set": True} for k, v in section.items()]
    return {"fields": fields, "error": error, "declared": settings_class is not None}


def use_provider(dash: Dashboard, name: str) -> None:
    from hermes_memory_cli._configedit import ConfigEditError, set_memory_provider

    ctx = dash.context()
    try:
        set_memory_provider(ctx.config.path, name)
    except (ConfigEditError, OSError) as exc:
        raise CLIError(str(exc)) from None


# ---------------------------------------------------------------------- archive
def _hermes_db(dash: Dashboard, store: Any) -> dict[str, Any] | None:
    """Hermes' ``state.db`` in the home, and what earlier imports took from it."""
    from hermes_memory_sessions.storage import inspect_database

    path = dash.home / "state.db"
    if not path.is_file():
        return None
    kind = inspect_database(path).kind
    watermark = 0
    if store is not None and hasattr(store, "import_state"):
        watermark, _sessions = store.import_state(str(path.resolve()))
    return {
        "path": str(path),
        "kind": kind,
        "size": path.stat().st_size,
        "imported_up_to": watermark,
    }


def archive_page(dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str]) -> Page:
    from hermes_memory_cli._commands.sessions import _size, _vector_stats
    from hermes_memory_sessions.vectors import configured_embedder_section

    ctx = dash.context()
    values: dict[str, Any] = {
        "title": N_("Archive"),
        "path": str(ctx.db_path),
        "exists": False,
        "size": _size,
        "embedder": configured_embedder_section(ctx.config) is not None,
        "embedder_name": ctx.config.sessions.embedder.get("embedder") or "",
        "jobs": {kind: dash.jobs.get(kind) for kind in ("embed", "import")},
    }
    with dash.archive() as store:
        if store is not None:
            stats = store.stats()
            vectors = _vector_stats(ctx, store)
            total = int((vectors or {}).get("total") or 0)
            embedded = int((vectors or {}).get("embedded") or 0)
            values.update(
                exists=True,
                stats=stats,
                index=store.index_sizes(),
                vectors=vectors,
                coverage=round(100 * embedded / total) if total else 0,
                left=max(0, total - embedded),
            )
        values["hermes"] = _hermes_db(dash, store)
    return Page("archive.html", values)


def progress(dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str]) -> Response:
    """The background jobs as JSON, polled by the archive page's progress bars."""
    jobs = {kind: dash.jobs.get(kind) for kind in ("embed", "import")}
    return JSONResponse({k: j.as_dict() if j else None for k, j in jobs.items()})


def embed(
    dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str], form: Mapping[str, str]
) -> Redirect:
    """Start embedding what is not embedded yet (as ``hermes-memory sessions embed``)."""
    from hermes_memory_core.config import ConfigError
    from hermes_memory_sessions.vectors import build_embedder, configured_embedder_section

    ctx = dash.context()
    section = configured_embedder_section(ctx.config)
    if section is None:
        return Redirect(
            "/archive",
            [
                Flash(
                    "error",
                    N_(
                        "No embedder is configured: set sessions.embedder on the settings "
                        "page first."
                    ),
                )
            ],
        )

    def work(job: Job) -> dict[str, Any]:
        from hermes_memory_sessions.vectors import build_fast_embedder, configured_fast_section

        try:
            embedder = build_embedder(section, strict=True)
        except ConfigError as exc:
            raise RuntimeError(str(exc)) from None
        fast_section = configured_fast_section(ctx.config)
        fast = build_fast_embedder(fast_section, section) if fast_section else None
        with dash.context().session_store(create=False) as opened:
            store: Any = opened
            if store is None or not hasattr(store, "_attach_embedder"):
                raise RuntimeError("vectors are kept by the SQLite archive only")
            if fast is None:
                store._attach_embedder(embedder, background=False)
            else:  # the fast tier over everything first, then the quality model
                store._attach_embedder(embedder, background=False, fast=fast)
            before = store.vector_coverage()
            searched = {t["tier"]: int(t["searched"]) for t in before.get("tiers") or []}
            job.total = (
                2 * int(before["total"])
                - int(before["embedded"])
                - searched.get("fast", int(before["total"]))
            )

            def step(n: int) -> None:
                job.done += n

            store.embed_pending(None, batch_size=32, progress=step)
            after = store.vector_coverage()
        dash.reopen_archive()
        return {"embedded": job.done, "coverage": f"{after['embedded']}/{after['total']}"}

    started = dash.jobs.start("embed", work)
    text = N_("Embedding started.") if started else N_("Embedding is already running.")
    return Redirect("/archive", [Flash("ok", text)])


def import_hermes(
    dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str], form: Mapping[str, str]
) -> Redirect:
    """Start importing what is new in the home's Hermes ``state.db`` (read-only)."""
    from hermes_memory_sessions.importers import import_hermes_db

    path = dash.home / "state.db"
    if not path.is_file():
        return Redirect("/archive", [Flash("error", N_("No Hermes state.db in this home."))])

    def work(job: Job) -> dict[str, Any]:
        def step(done: int, total: int) -> None:
            job.done, job.total = done, total

        with dash.context().session_store(create=True) as store:
            assert store is not None  # create=True always opens one
            report = import_hermes_db(path, store, progress=step)
        dash.reopen_archive()
        return {"summary": report.summary()}

    started = dash.jobs.start("import", work)
    text = N_("Import started.") if started else N_("An import is already running.")
    return Redirect("/archive", [Flash("ok", text)])


# ---------------------------------------------------------------------- settings
@dataclass(frozen=True)
class Setting:
    """One editable key: where it lives, its kind and what it means."""

    section: str
    key: str
    kind: str  # bool, int, float, text, choice
    meaning: str
    choices: tuple[str, ...] = ()


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "memory",
        "memory_enabled",
        "bool",
        N_("Keep agent notes in MEMORY.md and let the agent write them."),
    ),
    Setting(
        "memory",
        "user_profile_enabled",
        "bool",
        N_("Keep the user profile in USER.md and let the agent write it."),
    ),
    Setting(
        "memory",
        "memory_char_limit",
        "int",
        N_("Most characters MEMORY.md may hold (default 2,200)."),
    ),
    Setting(
        "memory", "user_char_limit", "int", N_("Most characters USER.md may hold (default 1,375).")
    ),
    Setting(
        "memory",
        "nudge_interval",
        "int",
        N_("User turns without a memory write before a background review (0 = off)."),
    ),
    Setting(
        "memory",
        "write_approval",
        "bool",
        N_("Hold every memory write of the agent until you approve it on the Pending page."),
    ),
    Setting(
        "memory",
        "prefetch_timeout",
        "float",
        N_("Seconds to wait for the external provider's recall each turn."),
    ),
    Setting(
        "memory",
        "hook_timeout",
        "float",
        N_("Seconds the external provider's quick hooks may take."),
    ),
    Setting(
        "memory", "tool_timeout", "float", N_("Seconds the external provider's tools may take.")
    ),
    Setting(
        "memory",
        "shutdown_timeout",
        "float",
        N_("Seconds to drain queued syncs when a session ends."),
    ),
    Setting(
        "memory", "recall_max_chars", "int", N_("Most characters of external recall kept per turn.")
    ),
    Setting(
        "memory", "recall_max_lines", "int", N_("Most lines of external recall kept per turn.")
    ),
    Setting(
        "memory", "review_timeout", "float", N_("Seconds a background memory review may take.")
    ),
    Setting(
        "memory", "review_max_turns", "int", N_("Most model calls in one background memory review.")
    ),
    Setting(
        "memory",
        "backend",
        "choice",
        N_("Where curated memory is kept: files (default) or postgres."),
        ("files", "postgres"),
    ),
    Setting(
        "sessions",
        "backend",
        "choice",
        N_("Where the session archive is kept: sqlite (default) or postgres."),
        ("sqlite", "postgres"),
    ),
    Setting(
        "sessions",
        "db_path",
        "text",
        N_(
            "The archive file (default: hermes-memory/sessions.db in the home; never "
            "Hermes' state.db)."
        ),
    ),
    Setting(
        "sessions",
        "follow_hermes",
        "bool",
        N_(
            "Keep the archive following this home's Hermes state.db (read-only, "
            "incremental; off by default)."
        ),
    ),
    Setting(
        "sessions",
        "embedder",
        "text",
        N_("Embedder for hybrid search (e.g. default); empty: lexical search only."),
    ),
    Setting(
        "sessions", "embedder_model", "text", N_("The embedder's model name, when it takes one.")
    ),
    Setting(
        "sessions",
        "embedder_url",
        "text",
        N_("Address of an OpenAI-compatible embeddings server (embedder: openai)."),
    ),
    Setting(
        "sessions",
        "embedder_api_key_env",
        "text",
        N_("Name of the environment variable holding that server's API key (never the key)."),
    ),
    Setting("sessions", "embedder_batch_size", "int", N_("Messages per embedder call.")),
    Setting("sessions", "embedder_threads", "int", N_("Threads a local embedder may use.")),
    Setting("sessions", "embedder_timeout", "float", N_("Seconds one embedder call may take.")),
)


def _current(raw: Mapping[str, Any], setting: Setting) -> Any:
    section = raw.get(setting.section)
    return section.get(setting.key) if isinstance(section, Mapping) else None


def settings_page(dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str]) -> Page:
    from hermes_memory_core.config import MemoryConfig

    ctx = dash.context()
    defaults = vars(MemoryConfig())
    rows = []
    for setting in SETTINGS:
        value = _current(ctx.config.raw, setting)
        default = defaults.get(setting.key) if setting.section == "memory" else None
        rows.append(
            {
                "s": setting,
                "value": value,
                "default": default,
                "name": f"{setting.section}.{setting.key}",
            }
        )
    return Page(
        "settings.html", {"title": N_("Settings"), "rows": rows, "path": str(ctx.config.path)}
    )


def _parse(setting: Setting, text: str) -> Any:
    """The form's text as the value to write (``None``: remove the key, use the default)."""
    text = text.strip()
    if setting.kind == "bool":
        return {"true": True, "false": False}.get(text)
    if not text:
        return None
    if setting.kind == "int":
        try:
            return int(text.replace(",", "").replace("_", ""))
        except ValueError:
            return text  # left to core's validation, which names the key
    if setting.kind == "float":
        try:
            return float(text)
        except ValueError:
            return text
    return text


def save_settings(
    dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str], form: Mapping[str, str]
) -> Redirect:
    """Validate the whole file with core's own parser on a copy, then edit it in place."""
    from hermes_memory_cli._dashboard._config_edit import ConfigEditError, with_values
    from hermes_memory_core.config import ConfigError, load_config
    from hermes_memory_core.kit import atomic_write_text
    from hermes_memory_sessions.vectors import build_embedder, configured_embedder_section

    ctx = dash.context()
    raw = ctx.config.raw
    changes: dict[tuple[str, str], Any] = {}
    for setting in SETTINGS:
        name = f"{setting.section}.{setting.key}"
        if name not in form:
            continue
        value = _parse(setting, form[name])
        if value != _current(raw, setting):
            changes[(setting.section, setting.key)] = value
    if not changes:
        return Redirect("/settings", [Flash("ok", N_("No change to save."))])
    path = ctx.config.path
    try:
        text = path.read_text(encoding="utf-8-sig") if path.exists() else ""
        new_text = with_values(text, changes)
    except (OSError, UnicodeDecodeError, ConfigEditError) as exc:
        return Redirect(
            "/settings", [Flash("error", N_("Not saved: %(detail)s"), {"detail": str(exc)})]
        )
    scratch = Path(tempfile.mkdtemp(prefix="hm-dashboard-"))
    try:
        (scratch / "config.yaml").write_text(new_text, encoding="utf-8")
        candidate = load_config(scratch)
        if any(section == "sessions" and key.startswith("embedder") for section, key in changes):
            # The embedder keys are checked by building the embedder, as the archive will.
            build_embedder(configured_embedder_section(candidate), strict=True)
    except ConfigError as exc:
        detail = str(exc).replace(str(scratch / "config.yaml"), "config.yaml")
        return Redirect(
            "/settings", [Flash("error", N_("Not saved: %(detail)s"), {"detail": detail})]
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    atomic_write_text(path, new_text, tmp_prefix=".tmp_config_", mode=mode)
    dash.reopen_archive()
    names = ", ".join(f"{s}.{k}" for s, k in changes)
    return Redirect(
        "/settings",
        [
            Flash(
                "ok",
                N_("Saved %(keys)s in %(file)s; comments and other keys are kept."),
                {"keys": names, "file": str(path)},
            )
        ],
    )


def choose_provider(
    dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str], form: Mapping[str, str]
) -> Redirect:
    """Set ``memory.provider`` (as ``hermes-memory provider use|off``; comments kept)."""
    from hermes_memory_cli._commands.plugins import _infos
    from hermes_memory_core import BUILTIN_TIER_NAMES

    name = (form.get("name") or "").strip()
    if name:
        infos = {i.name: i for i in _infos(dash.context())}
        info = infos.get(name)
        if name in BUILTIN_TIER_NAMES or info is None or info.load_error:
            return Redirect(
                "/providers",
                [
                    Flash(
                        "error",
                        N_("%(name)s is not an installed external provider."),
                        {"name": name},
                    )
                ],
            )
    use_provider(dash, name)
    if name:
        return Redirect(
            "/providers",
            [
                Flash(
                    "ok",
                    N_("memory.provider is now %(name)s; new agent sessions use it."),
                    {"name": name},
                )
            ],
        )
    return Redirect(
        "/providers",
        [Flash("ok", N_("External provider turned off: builtin memory and the archive only."))],
    )
