"""The state of the PostgreSQL backend, for ``doctor`` and ``provider status``.

`backend_status` answers, without writing anything (no migration, no spool replay): which
tiers are on PostgreSQL, the DSN with its password masked, the owner key, whether the server
answers within a few seconds, the schema version it holds against the one this release
writes, and how many turns wait in this home's local spool (kept while the server was
unreachable, replayed in order by the next write that reaches it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["backend_status", "postgres_tiers", "spool_directory"]


def postgres_tiers(config: Mapping[str, Any] | None) -> list[str]:
    """The tiers a raw config puts on PostgreSQL: ``memory`` and/or ``sessions``."""
    tiers = []
    for tier in ("memory", "sessions"):
        section = (config or {}).get(tier)
        if isinstance(section, Mapping) and section.get("backend") == "postgres":
            tiers.append(tier)
    return tiers


def spool_directory(home: Path) -> Path:
    """The folder of a home's local spool (``<home>/hermes-memory/pg-spool``)."""
    return home / "hermes-memory" / "pg-spool"


def _spool_counts(home: Path, owner: str | None) -> tuple[int, int, str | None]:
    """``(pending for owner, pending for other owner keys, path of owner's spool)``."""
    from hermes_memory_postgres._spool import Spool

    directory = spool_directory(home)
    mine_path: Path | None = None
    mine = 0
    if owner is not None:
        spool = Spool(directory, f"sessions-{owner}")
        mine_path = spool.path
        mine = spool.pending()
    others = 0
    if directory.is_dir():
        for path in sorted(directory.glob("*.jsonl")):
            if path == mine_path or path.is_symlink() or not path.is_file():
                continue
            try:
                with path.open("rb") as fh:
                    others += sum(1 for line in fh if line.strip())
            except OSError:
                continue
    return mine, others, str(mine_path) if mine_path else None


def backend_status(
    config: Mapping[str, Any] | None, home: Path, *, timeout: float = 3.0
) -> dict[str, Any] | None:
    """The PostgreSQL backend's state as JSON-ready data (None when no tier uses it).

    Keys: ``tiers``, ``dsn`` (password masked; None when unset), ``owner``, ``reachable``,
    ``error`` (one line, never the password), ``schema_version`` (None when not read),
    ``expected_schema_version``, ``spool_pending`` (this owner's turns waiting locally),
    ``spool_other_owners`` (records under other owner keys, e.g. after the key changed) and
    ``spool_path``. Nothing is written: no migration runs and the spool is not replayed.
    """
    import psycopg

    from hermes_memory_postgres import _schema as schema
    from hermes_memory_postgres._connection import DSN_ENV, mask_dsn
    from hermes_memory_postgres._factory import postgres_settings

    tiers = postgres_tiers(config)
    if not tiers:
        return None
    report: dict[str, Any] = {
        "tiers": tiers,
        "dsn": None,
        "owner": None,
        "reachable": False,
        "error": None,
        "schema_version": None,
        "expected_schema_version": schema.SCHEMA_VERSION,
        "spool_pending": 0,
        "spool_other_owners": 0,
        "spool_path": None,
    }
    dsn: str | None = None
    try:
        dsn, owner = postgres_settings(config)
        report["owner"] = owner
    except ValueError as exc:
        section = (config or {}).get("postgres")
        raw = section.get("dsn") if isinstance(section, Mapping) else None
        raw = raw or os.environ.get(DSN_ENV, "").strip()
        report["dsn"] = mask_dsn(raw) if isinstance(raw, str) and raw else None
        report["error"] = str(exc)
    if dsn is not None:
        report["dsn"] = mask_dsn(dsn)
    mine, others, path = _spool_counts(home, report["owner"])
    report.update(spool_pending=mine, spool_other_owners=others, spool_path=path)
    if dsn is None:
        return report
    try:
        with psycopg.connect(
            dsn,
            connect_timeout=max(1, int(timeout)),
            application_name="hermes-memory-doctor",
            options=f"-c statement_timeout={int(timeout * 1000)}",
        ) as conn:
            report["reachable"] = True
            report["schema_version"] = schema.current_version(conn)
    except psycopg.ProgrammingError:
        # libpq's parse errors quote pieces of the string, which may be the password.
        report["error"] = (
            f"the DSN (postgres.dsn or {DSN_ENV}) is not a valid libpq connection string or URL"
        )
    except (psycopg.Error, OSError) as exc:
        text = " ".join(str(exc).split()) or type(exc).__name__
        report["error"] = text.replace(dsn, report["dsn"] or "")[:300]
    return report
