"""``hermes-memory doctor``: one line per check, with how to fix each problem.

Checks, in order: the home directory (exists, is ours, not open to others), config.yaml,
the memory files (readable UTF-8, private, within budget, no flagged entries), the session
archive (opens read-only, private), SQLite (FTS5, trigram tokenizer), lock and leftover
temp files, and the configured provider. Nothing is modified. Exit status 1 when a check
fails (warnings alone exit 0).
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hermes_memory_cli._context import Context
from hermes_memory_cli._i18n import N_, shown
from hermes_memory_cli._install import install_command
from hermes_memory_core.config import sessions_db_path

_LEFTOVER_AGE_S = 3600
_MARK = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL", "info": "info"}


@dataclass
class Check:
    """One finding: ``status`` is ``ok``, ``info``, ``warn`` or ``fail``."""

    check: str
    status: str
    detail: str
    fix: str = ""


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _private_file(name: str, path: Path) -> Check:
    mode = _mode(path)
    if mode & 0o077:
        return Check(
            name,
            "warn",
            N_(
                "{path} is readable or writable by others (mode {mode})",
                path=path,
                mode=f"{mode:o}",
            ),
            f"chmod 600 {path}",
        )
    return Check(name, "ok", N_("{path} (mode {mode})", path=path, mode=f"{mode:o}"))


def check_home(home: Path) -> list[Check]:
    """The home directory exists, is a directory, belongs to us and is not open to others."""
    if not home.exists():
        return [
            Check(
                "home",
                "fail",
                N_("{home} does not exist (nothing was created)", home=home),
                N_(
                    "check --home, --profile and $HERMES_HOME; a new home is created by its "
                    "first write, e.g. hermes-memory memory add TEXT"
                ),
            )
        ]
    if not home.is_dir():
        return [
            Check(
                "home",
                "fail",
                N_("{home} is not a directory", home=home),
                N_("move {home} away", home=home),
            )
        ]
    checks = []
    info = home.stat()
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        checks.append(
            Check(
                "home",
                "warn",
                N_("{home} belongs to uid {uid}, not you", home=home, uid=info.st_uid),
                N_("chown it"),
            )
        )
    if not os.access(home, os.W_OK | os.X_OK):
        checks.append(
            Check("home", "fail", N_("{home} is not writable", home=home), f"chmod u+rwx {home}")
        )
    mode = _mode(home)
    if mode & 0o022:
        checks.append(
            Check(
                "home",
                "warn",
                N_("{home} is writable by others (mode {mode})", home=home, mode=f"{mode:o}"),
                f"chmod 700 {home}",
            )
        )
    if not checks:
        checks.append(Check("home", "ok", N_("{home} (mode {mode})", home=home, mode=f"{mode:o}")))
    return checks


def check_config(ctx: Context) -> tuple[list[Check], Any]:
    """config.yaml parses and its memory/sessions keys have the right types."""
    from hermes_memory_core.config import ConfigError, load_config

    path = ctx.home / "config.yaml"
    try:
        config = load_config(ctx.home)
    except ConfigError as exc:
        return [
            Check(
                "config",
                "fail",
                str(exc),
                N_("fix {path} (a backup copy first is wise)", path=path),
            )
        ], None
    if not path.exists():
        return [Check("config", "ok", N_("{path} absent: defaults in use", path=path))], config
    return [Check("config", "ok", str(path))], config


def check_config_keys(ctx: Context, config: Any) -> list[Check]:
    """Keys in config.yaml that nothing reads (a typo), each with the closest known key."""
    from hermes_memory_cli._config_keys import known_keys, unknown_keys

    if config is None:
        return []
    checks = []
    for item in unknown_keys(config.raw, known_keys()):
        # the same words as item.describe(), translated when shown (--json stays English)
        if item.suggestion:
            detail = N_(
                "unknown key {key} (did you mean {other}?)", key=item.name, other=item.suggestion
            )
            fix = N_("rename it to {key}", key=item.suggestion)
        else:
            detail = N_("unknown key {key}", key=item.name)
            fix = N_("remove it (see 'hermes-memory config list')")
        checks.append(Check("config:keys", "warn", detail, fix))
    return checks


def check_memory(home: Path, config: Any) -> list[Check]:
    """MEMORY.md and USER.md are real files (no symlinks), readable, private, within budget
    and unflagged (entries a human approved are not reported)."""
    from hermes_memory_builtin import (
        TARGET_FILES,
        char_count,
        parse_entries,
        read_raw,
        write_threat,
    )
    from hermes_memory_cli._files import diagnose, symlink_reason, symlinked_paths

    checks = []
    links = symlinked_paths(home / "memories")
    for link, target in links:
        checks.append(
            Check(
                f"memory:{link.name}",
                "fail",
                N_(
                    "unsafe: {reason} (the builtin refuses it: UnsafeMemoryPath)",
                    reason=symlink_reason(link, target),
                ),
                N_("replace the link by a real copy, as said"),
            )
        )
    if links:
        return checks
    limits = {
        "memory": config.memory.memory_char_limit if config else 2200,
        "user": config.memory.user_char_limit if config else 1375,
    }
    for target, filename in TARGET_FILES.items():
        path = home / "memories" / filename
        name = f"memory:{filename}"
        raw = read_raw(path)
        if not raw.exists:
            checks.append(Check(name, "ok", N_("{path} absent (empty)", path=path)))
            continue
        if not raw.readable:
            reason, fix = diagnose(path, raw.error)
            checks.append(Check(name, "fail", reason, fix))
            continue
        entries = parse_entries(raw.text)
        used, limit = char_count(entries), limits[target]
        perm = _private_file(name, path)
        if perm.status != "ok":
            checks.append(perm)
        approved = _approved(path, entries)
        flagged = [i for i, e in enumerate(entries, 1) if e not in approved and write_threat(e)]
        if flagged:
            checks.append(
                Check(
                    name,
                    "warn",
                    N_(
                        "entries {numbers} match threat patterns and are hidden from the prompt",
                        numbers=flagged,
                    ),
                    f"hermes-memory memory edit --target {target}",
                )
            )
        if used > limit:
            checks.append(
                Check(
                    name,
                    "warn",
                    N_(
                        "{used}/{limit} chars: over budget, new writes are refused",
                        used=f"{used:,}",
                        limit=f"{limit:,}",
                    ),
                    f"hermes-memory memory edit --target {target}",
                )
            )
        if perm.status == "ok" and not flagged and used <= limit:
            checks.append(
                Check(
                    name,
                    "ok",
                    N_(
                        "{count} entries, {used}/{limit} chars",
                        count=len(entries),
                        used=f"{used:,}",
                        limit=f"{limit:,}",
                    ),
                )
            )
    return checks


def _approved(path: Path, entries: list[str]) -> set[str]:
    """Entries the sidecar records as approved by a human (none with an older builtin)."""
    try:
        from hermes_memory_builtin import approved_entries, load_sidecar
    except ImportError:
        return set()
    return approved_entries(entries, load_sidecar(path))


def check_archive(db_path: Path) -> list[Check]:
    """The session archive opens read-only and is private."""
    if not db_path.exists():
        return [
            Check("archive", "ok", N_("{path} absent (created on first session)", path=db_path))
        ]
    checks = []
    perm = _private_file("archive", db_path)
    if perm.status != "ok":
        checks.append(perm)
    from hermes_memory_sessions.storage import check_not_hermes, readonly

    try:
        check_not_hermes(db_path)  # sessions.db_path pointing at Hermes' own state.db
        with readonly(db_path) as conn:  # no -wal/-shm is ever left beside the file
            sessions = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
            messages = conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    except sqlite3.Error as exc:
        return [
            *checks,
            Check(
                "archive",
                "fail",
                N_("{path} cannot be read as a session archive: {error}", path=db_path, error=exc),
                N_(
                    "move it away; import it back with "
                    "'hermes-memory sessions import --from-hermes'"
                ),
            ),
        ]
    if perm.status == "ok":
        checks.append(
            Check(
                "archive",
                "ok",
                N_(
                    "{path}: {sessions} sessions, {messages} messages",
                    path=db_path,
                    sessions=f"{sessions:,}",
                    messages=f"{messages:,}",
                ),
            )
        )
    return checks


def check_vectors(db_path: Path, config: Any) -> list[Check]:
    """Hybrid recall: the configured embedder builds, and how much of the archive has vectors."""
    from hermes_memory_core.config import ConfigError
    from hermes_memory_sessions.vectors import (
        build_embedder,
        build_fast_embedder,
        configured_embedder_section,
        configured_fast_section,
        coverage_counts,
        index_model,
    )

    section = configured_embedder_section(config) if config is not None else None
    model: str | None = None
    fast_model: str | None = None
    checks: list[Check] = []
    if section is not None:
        fast_section = configured_fast_section(config)
        fast = build_fast_embedder(fast_section, section) if fast_section else None
        fast_model = index_model(str(fast.name)) if fast is not None else None
        try:
            embedder = build_embedder(section, strict=True)
        except ConfigError as exc:
            if fast_model is None:
                hint = N_("fix sessions.embedder* in config.yaml")
                return [Check("vectors", "fail", str(exc), hint)]
            # The quality model cannot run here; the fast tier answers alone (said plainly).
            checks.append(
                Check(
                    "vectors",
                    "warn",
                    N_(
                        "{error}; recall uses the fast model ({fast}) only",
                        error=exc,
                        fast=fast_model,
                    ),
                )
            )
            embedder, fast_model = fast, None
        model = index_model(str(embedder.name))
    if not db_path.exists() or (config is not None and config.sessions.backend != "sqlite"):
        if model:
            checks.append(Check("vectors", "ok", N_("embedder {model} ready", model=model)))
        return checks
    from hermes_memory_sessions.storage import readonly

    try:
        with readonly(db_path) as conn:
            cov = coverage_counts(conn, model)
    except sqlite3.Error as exc:
        return [Check("vectors", "warn", N_("cannot count vectors: {error}", error=exc))]
    embedded, total, other = cov["embedded"], cov["total"], cov["other_models"]
    fast_n = int(cov["by_model"].get(fast_model, 0)) if fast_model else 0
    other -= fast_n
    if model is None:
        if embedded:
            checks.append(
                Check(
                    "vectors",
                    "info",
                    N_(
                        "{n} stored vectors, no embedder configured: search is lexical",
                        n=f"{embedded:,}",
                    ),
                    N_(
                        "set sessions.embedder to use them, or drop them with"
                        " 'hermes-memory sessions embed --reset'"
                    ),
                )
            )
        return checks
    detail = N_(
        "{embedded} / {total} messages embedded by {model}",
        embedded=f"{embedded:,}",
        total=f"{total:,}",
        model=model,
    )
    if other:
        detail = N_(
            "{embedded} / {total} messages embedded by {model}; "
            "{other} vectors of other models are ignored",
            embedded=f"{embedded:,}",
            total=f"{total:,}",
            model=model,
            other=f"{other:,}",
        )
    if fast_model and embedded < total:
        detail = N_(
            "{embedded} / {total} messages embedded by {model}; the fast tier ({fast})"
            " covers {more} more",
            embedded=f"{embedded:,}",
            total=f"{total:,}",
            model=model,
            fast=fast_model,
            more=f"{fast_n:,}",
        )
    if embedded < total:
        checks.append(
            Check(
                "vectors",
                "warn",
                detail,
                N_(
                    "run 'hermes-memory sessions embed' (new messages are embedded in the"
                    " background; older ones need this backfill)"
                ),
            )
        )
    else:
        checks.append(Check("vectors", "ok", detail))
    return checks


def check_postgres(home: Path, config: Any) -> list[Check]:
    """``memory.backend`` / ``sessions.backend: postgres``: the server answers (DSN shown with
    its password masked), the schema version it holds, and turns waiting in the local spool."""
    from hermes_memory_core.config import ConfigError

    raw = config.raw if config is not None else {}
    if not any(
        isinstance(raw.get(t), dict) and raw[t].get("backend") == "postgres"
        for t in ("memory", "sessions")
    ):
        return []
    try:
        from hermes_memory_postgres import backend_status
    except ImportError:
        return [
            Check(
                "postgres",
                "fail",
                N_("a backend is 'postgres' but hermes-memory-postgres is not installed"),
                install_command("hermes-memory-postgres"),
            )
        ]
    try:
        state = backend_status(raw, home)
    except (ConfigError, ValueError) as exc:
        return [Check("postgres", "fail", str(exc), N_("fix the postgres: section of config.yaml"))]
    if state is None:
        return []
    where = N_("{dsn} (owner {owner!r})", dsn=state["dsn"] or N_("(no DSN)"), owner=state["owner"])
    checks: list[Check] = []
    if state["dsn"] is None or state["owner"] is None:
        checks.append(
            Check(
                "postgres",
                "fail",
                str(state["error"]),
                N_("set postgres.dsn and postgres.owner"),
            )
        )
    elif not state["reachable"]:
        checks.append(
            Check(
                "postgres",
                "fail",
                N_("{where} is unreachable: {error}", where=where, error=state["error"]),
                N_("start the server or fix postgres.dsn; turns are spooled locally meanwhile"),
            )
        )
    else:
        have, want = state["schema_version"], state["expected_schema_version"]
        if have == want:
            checks.append(
                Check(
                    "postgres", "ok", N_("{where}: schema version {have}", where=where, have=have)
                )
            )
        elif have > want:
            checks.append(
                Check(
                    "postgres",
                    "fail",
                    N_(
                        "{where}: schema version {have} was written by a newer release"
                        " (this one knows {want})",
                        where=where,
                        have=have,
                        want=want,
                    ),
                    N_("upgrade hermes-memory-postgres on this host"),
                )
            )
        else:
            checks.append(
                Check(
                    "postgres",
                    "warn",
                    N_(
                        "{where}: schema version {have}, this release writes {want}",
                        where=where,
                        have=have,
                        want=want,
                    ),
                    N_("it is migrated by the first use (or 'hermes-memory sessions stats')"),
                )
            )
    pending, others = state["spool_pending"], state["spool_other_owners"]
    if pending:
        checks.append(
            Check(
                "postgres:spool",
                "warn",
                N_(
                    "{n} turn write(s) wait in {path}",
                    n=f"{pending:,}",
                    path=state["spool_path"],
                ),
                N_("they are replayed in order by the next write once the server answers"),
            )
        )
    else:
        checks.append(Check("postgres:spool", "ok", N_("no turns waiting in the local spool")))
    if others:
        checks.append(
            Check(
                "postgres:spool",
                "warn",
                N_(
                    "{n} spooled write(s) under another owner key in {path}",
                    n=f"{others:,}",
                    path=home / "hermes-memory" / "pg-spool",
                ),
                N_("postgres.owner changed: set it back to replay them, or move the files away"),
            )
        )
    return checks


def check_hermes_state(home: Path) -> list[Check]:
    """Hermes' own ``<home>/state.db`` holds no archive objects of an earlier release."""
    from hermes_memory_sessions.storage import legacy_archive_notice

    notice = legacy_archive_notice(home)  # reads the schema read-only, leaves no sidecars
    if notice is None:
        return []
    state = home / "state.db"
    return [
        Check(
            "hermes state.db",
            "warn",
            N_("{path} still holds objects an earlier hermes-memory release added", path=state),
            f"hermes-memory sessions migrate-out --from-hermes {state}",
        )
    ]


def check_hermes_history(ctx: Context, config: Any, db_path: Path) -> list[Check]:
    """Hermes' ``<home>/state.db`` holds sessions the archive lacks (one history, not two)."""
    from hermes_memory_cli._hermes_history import import_command
    from hermes_memory_sessions.importers import hermes_state_path, pending_hermes_import
    from hermes_memory_sessions.storage import inspect_database

    state = hermes_state_path(ctx.home)
    if inspect_database(state).kind != "hermes":
        return []
    follow = bool(config is not None and config.sessions.follow_hermes)
    try:
        if config is not None and config.sessions.backend == "postgres":
            with ctx.session_store(create=False) as store:
                pending = pending_hermes_import(ctx.home, store)
        elif db_path.exists():
            from hermes_memory_sessions.storage import SessionStore

            # Opened as every read command opens it (only reads follow). A read-only SQLite
            # connection cannot remove the WAL files it creates, so it would leave two new
            # files behind; a writable one removes them when it closes.
            with SessionStore(db_path) as archive:
                pending = pending_hermes_import(ctx.home, archive)
        else:
            pending = pending_hermes_import(ctx.home, None)
    except Exception as exc:  # the archive checks report why it cannot be opened
        return [
            Check(
                "hermes history",
                "info",
                N_("{state}: not compared ({error})", state=state, error=exc),
            )
        ]
    if pending is None:
        return []
    if not pending.behind:
        return [
            Check(
                "hermes history",
                "ok",
                N_(
                    "{state}: all {count} sessions are in the archive{follow}",
                    state=state,
                    count=f"{pending.sessions_total:,}",
                    follow=" (sessions.follow_hermes)" if follow else "",
                ),
            )
        ]
    count = f"{pending.missing:,}" + ("" if pending.complete else "+")
    detail = (
        N_("{state} has {count} sessions that are not in the archive", state=state, count=count)
        if pending.missing
        else N_(
            "{state} has new messages in {count} imported sessions",
            state=state,
            count=f"{pending.updated:,}",
        )
    )
    if follow:
        detail = N_(
            "{detail}{note}",
            detail=detail,
            note=N_(" (sessions.follow_hermes is on: the next read command imports them)"),
        )
    return [Check("hermes history", "warn", detail, import_command(ctx))]


def check_sqlite() -> list[Check]:
    """FTS5 (required) and the trigram tokenizer (optional; CJK does not need it)."""
    checks = []
    conn = sqlite3.connect(":memory:")
    try:
        try:
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
            checks.append(
                Check(
                    "sqlite:fts5",
                    "ok",
                    N_("SQLite {version} has FTS5", version=sqlite3.sqlite_version),
                )
            )
        except sqlite3.OperationalError as exc:
            checks.append(
                Check(
                    "sqlite:fts5",
                    "fail",
                    N_(
                        "SQLite {version} lacks FTS5 ({error})",
                        version=sqlite3.sqlite_version,
                        error=exc,
                    ),
                    N_("use a Python whose sqlite3 has FTS5 (python.org, uv or distro builds do)"),
                )
            )
        try:
            conn.execute("CREATE VIRTUAL TABLE g USING fts5(x, tokenize='trigram')")
            checks.append(Check("sqlite:trigram", "ok", N_("trigram tokenizer available")))
        except sqlite3.OperationalError:
            checks.append(
                Check(
                    "sqlite:trigram",
                    "info",
                    N_(
                        "no trigram tokenizer in SQLite {version}; not needed "
                        "(CJK search uses its own index)",
                        version=sqlite3.sqlite_version,
                    ),
                )
            )
    finally:
        conn.close()
    return checks


def _lock_held(path: Path) -> bool | None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def check_locks(home: Path, db_path: Path) -> list[Check]:
    """Unusable lock files, locks held right now, and temp files left by interrupted writes."""
    checks: list[Check] = []
    memories = home / "memories"
    if memories.is_dir():
        for lock in sorted(memories.glob("*.lock")):
            if lock.is_symlink() or not lock.is_file():
                checks.append(
                    Check(
                        "locks",
                        "fail",
                        N_("{path} is not a regular file; memory writes are refused", path=lock),
                        f"rm {lock}",
                    )
                )
            elif _lock_held(lock):
                checks.append(
                    Check(
                        "locks",
                        "info",
                        N_("{name} is held right now by a running process", name=lock.name),
                    )
                )
        now = time.time()
        for pattern in (".mem_*", ".tmp_*", "*.edit-*"):
            for tmp in sorted(memories.glob(pattern)):
                try:
                    age = now - tmp.stat().st_mtime
                except OSError:
                    continue
                if age > _LEFTOVER_AGE_S:
                    checks.append(
                        Check(
                            "locks",
                            "warn",
                            N_("{path} was left by an interrupted write", path=tmp),
                            N_("when no agent is running: {command}", command=f"rm {tmp}"),
                        )
                    )
    journal = Path(f"{db_path}-journal")
    if journal.exists():
        checks.append(
            Check(
                "locks",
                "warn",
                N_("{path} exists: a write to the archive was interrupted", path=journal),
                N_("run 'hermes-memory sessions stats' once: opening the archive rolls it back"),
            )
        )
    if not checks:
        checks.append(Check("locks", "ok", N_("no stale lock or temp files")))
    return checks


def check_providers(ctx: Context, config: Any) -> list[Check]:
    """Plugins that failed to load, and the configured external provider."""
    from hermes_memory_core import BUILTIN_TIER_NAMES
    from hermes_memory_core.health import read_provider_status
    from hermes_memory_core.plugins import list_providers

    infos = list_providers(hermes_home=ctx.home, config=config.raw if config else {})
    by_name = {i.name: i for i in infos}
    checks = []
    for info in infos:
        if info.load_error:
            checks.append(
                Check(
                    f"plugin:{info.name}",
                    "warn",
                    N_(
                        "{name} failed to load: {error}",
                        name=info.distribution or info.plugin,
                        error=info.load_error,
                    ),
                    N_("reinstall or uninstall {name}", name=info.distribution or info.plugin),
                )
            )
    for tier in ("builtin", "sessions"):
        if tier not in by_name:
            checks.append(
                Check(
                    f"provider:{tier}",
                    "fail",
                    N_("the {tier} tier is not installed", tier=tier),
                    install_command(f"hermes-memory-{tier}"),
                )
            )
    name = config.memory.provider if config else ""
    if not name or name in BUILTIN_TIER_NAMES:
        checks.append(Check("provider", "ok", N_("no external provider configured")))
        return checks
    found = by_name.get(name)
    if found is None:
        checks.append(
            Check(
                "provider",
                "fail",
                N_("memory.provider is {name!r} but it is not installed", name=name),
                N_(
                    "{command}, or 'hermes-memory provider off'",
                    command=install_command(f"hermes-memory-{name}"),
                ),
            )
        )
    elif found.load_error:
        checks.append(Check("provider", "fail", f"{name}: {found.load_error}", N_("reinstall it")))
    elif not found.available:
        checks.append(
            Check(
                "provider",
                "fail",
                N_(
                    "{name} is not available: {reason}",
                    name=name,
                    reason=found.unavailable_reason,
                ),
                N_("see the reason; or 'hermes-memory provider off'"),
            )
        )
    else:
        checks.append(Check("provider", "ok", N_("{name} available", name=name)))
        health = read_provider_status(ctx.home, name)
        if health and health.get("state") not in (None, "ok"):
            checks.append(
                Check(
                    "provider:health",
                    "warn",
                    N_(
                        "{name} reported {state}: {detail}",
                        name=name,
                        state=health.get("state"),
                        detail=health.get("detail", ""),
                    ),
                    N_("check its credentials and network; 'hermes-memory provider status'"),
                )
            )
    return checks


def doctor(ctx: Context) -> int:
    """Run every check; print one line each; exit 1 if any failed."""
    home = ctx.home
    checks = check_home(home)
    config_checks, config = check_config(ctx)
    checks += config_checks
    checks += check_config_keys(ctx, config)
    checks += check_memory(home, config)
    db_path = config.sessions.db_path if config else sessions_db_path(home)
    checks += check_archive(db_path)
    checks += check_postgres(home, config)
    checks += check_vectors(db_path, config)
    checks += check_hermes_state(home)
    checks += check_hermes_history(ctx, config, db_path)
    checks += check_sqlite()
    checks += check_locks(home, db_path)
    checks += check_providers(ctx, config)
    failed = any(c.status == "fail" for c in checks)
    if ctx.json:
        ctx.emit_json({"ok": not failed, "home": str(home), "checks": [asdict(c) for c in checks]})
    else:
        for c in checks:
            fix = f"  → {shown(c.fix)}" if c.fix and c.status in ("warn", "fail") else ""
            ctx.say(f"[{_MARK[c.status]}] {c.check:<16} {shown(c.detail)}{fix}")
        problems = sum(c.status in ("warn", "fail") for c in checks)
        ctx.say(
            N_("All checks passed.").shown()
            if not problems
            else N_("{n} problem(s) found.", n=problems).shown()
        )
    return 1 if failed else 0
