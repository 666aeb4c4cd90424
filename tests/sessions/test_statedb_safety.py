"""Hermes' state.db is another program's file: read commands leave it byte-identical, the
archive lives elsewhere, and an archive an earlier release put inside it can be moved out."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hermes_statedb import Expected, build_l1, build_v23, populate

from hermes_memory_core.config import sessions_db_path
from hermes_memory_sessions.importers._hermes import import_hermes_db
from hermes_memory_sessions.importers._migrate_out import BACKUP_INFIX, MigrateOutError, migrate_out
from hermes_memory_sessions.storage import _schema as schema
from hermes_memory_sessions.storage._hermesdb import (
    HermesDatabaseError,
    inspect_database,
    legacy_archive_notice,
    our_objects,
)
from hermes_memory_sessions.storage._store import SessionStore

SCRIPT = shutil.which("hermes-memory", path=str(Path(sys.executable).parent))


def fingerprint(directory: Path) -> dict[str, tuple[int, str]]:
    """Every file under ``directory``: (mode, sha256) — names, bytes and permissions."""
    out = {}
    for p in sorted(directory.rglob("*")):
        if p.is_file():
            out[str(p.relative_to(directory))] = (
                p.stat().st_mode,
                hashlib.sha256(p.read_bytes()).hexdigest(),
            )
        else:
            out[str(p.relative_to(directory))] = (p.stat().st_mode, "dir")
    return out


def hermes_dump(path: Path) -> dict[str, Any]:
    """Hermes' own tables (every non-hm table) row by row, plus their DDL.

    Read from a private copy so the dump itself cannot touch the file.
    """
    copy = path.parent.parent / f"dump-{path.parent.name}.db"
    shutil.copyfile(path, copy)
    conn = sqlite3.connect(copy)
    try:
        tables = [
            (str(n), str(sql))
            for n, sql in conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'table'"
                " AND name NOT LIKE 'hm\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
                " ORDER BY name"
            )
        ]
        out: dict[str, Any] = {}
        for name, sql in tables:
            if sql.upper().startswith("CREATE VIRTUAL"):
                out[name] = sql
                continue
            rows = conn.execute(f'SELECT * FROM "{name}"').fetchall()
            if name == "state_meta":
                rows = [r for r in rows if r[0] != schema.META_SCHEMA_KEY]
            out[name] = (sql, sorted(rows, key=repr))
        out["#hermes-indexes-triggers"] = sorted(
            (str(t), str(n), str(s))
            for t, n, s in conn.execute(
                "SELECT type, name, sql FROM sqlite_master WHERE type IN ('index', 'trigger')"
                " AND name NOT LIKE 'hm\\_%' ESCAPE '\\' AND name <> 'idx_sessions_last_active'"
                " AND sql IS NOT NULL"
            )
        )
        return out
    finally:
        conn.close()
        copy.unlink()


def hermes_home(tmp_path: Path, *, v23: bool = True) -> tuple[Path, Expected]:
    """A realistic Hermes home: state.db (closed cleanly: no -wal/-shm), config, memories."""
    home = tmp_path / "hermes-home"
    (home / "memories").mkdir(parents=True)
    conn = (build_v23 if v23 else build_l1)(home / "state.db", wal=True)
    exp = populate(conn, v23=v23)
    conn.close()
    (home / "config.yaml").write_text("model:\n  default: x\nmemory:\n  memory_enabled: true\n")
    (home / "memories" / "MEMORY.md").write_text("Project uses Postgres 16.\n§\n部署在周五。\n")
    (home / "memories" / "USER.md").write_text("Prefers short answers.\n")
    assert not Path(f"{home / 'state.db'}-wal").exists()
    return home, exp


def contaminate(path: Path) -> None:
    """What release 0.1 did on opening <home>/state.db as their archive."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    schema._v1(conn)
    conn.execute("INSERT INTO state_meta(key, value) VALUES (?, '1')", (schema.META_SCHEMA_KEY,))
    conn.execute("COMMIT")
    conn.close()


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert SCRIPT is not None, "the hermes-memory script is not installed"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(HERMES_HOME=str(home), HERMES_MEMORY_NO_PROGRESS="1", PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [SCRIPT, *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


READ_COMMANDS = [
    ("sessions", "list"),
    ("sessions", "list", "--json"),
    ("sessions", "show", "20250305_09"),
    ("sessions", "search", "docker"),
    ("sessions", "search", "部署"),
    ("sessions", "stats"),
    ("sessions", "stats", "--json"),
    ("doctor",),
    ("memory", "show"),
]


# ----------------------------------------------------------------------------- paths


def test_default_archive_is_a_file_of_our_own(tmp_path: Path) -> None:
    assert sessions_db_path(tmp_path) == tmp_path / "hermes-memory" / "sessions.db"
    assert sessions_db_path(tmp_path, "x/a.db") == tmp_path / "x" / "a.db"


@pytest.mark.parametrize("v23", [True, False])
def test_configured_path_at_hermes_state_db_is_refused(tmp_path: Path, v23: bool) -> None:
    home, _ = hermes_home(tmp_path, v23=v23)
    (home / "config.yaml").write_text("sessions:\n  db_path: state.db\n")
    before = fingerprint(home)
    res = cli(home, "sessions", "list")
    assert res.returncode != 0
    assert "Traceback" not in res.stderr
    assert "Hermes Agent's own database" in res.stderr
    assert "sessions import --from-hermes" in res.stderr
    assert fingerprint(home) == before
    with pytest.raises(HermesDatabaseError):
        SessionStore(home / "state.db")


# ----------------------------------------------------------------------------- read commands


@pytest.mark.parametrize("legacy", [False, True], ids=["clean", "legacy-archive-inside"])
def test_read_commands_leave_the_hermes_home_byte_identical(tmp_path: Path, legacy: bool) -> None:
    home, exp = hermes_home(tmp_path)
    if legacy:
        contaminate(home / "state.db")
    # an archive of ours with the same sessions, so show/search have something to print
    with SessionStore(sessions_db_path(home)) as store:
        import_hermes_db(home / "state.db", store)
    before = fingerprint(home)
    for args in READ_COMMANDS:
        res = cli(home, *args)
        assert "Traceback" not in res.stderr, (args, res.stderr)
        assert "unexpected error" not in res.stderr, (args, res.stderr)
        if args[0] != "doctor":
            assert res.returncode == 0, (args, res.stdout, res.stderr)
        assert fingerprint(home) == before, args  # no -wal/-shm, no byte changed
        if args[0] == "sessions":
            assert ("migrate-out" in res.stderr) == legacy, (args, res.stderr)
    doctor = cli(home, "doctor")
    assert ("migrate-out --from-hermes" in doctor.stdout) == legacy, doctor.stdout
    listed = cli(home, "sessions", "list", "--json")
    assert {r["id"] for r in json.loads(listed.stdout)} == set(exp.sessions)


def test_read_commands_without_an_archive_say_so_and_create_nothing(tmp_path: Path) -> None:
    home, _ = hermes_home(tmp_path)
    before = fingerprint(home)
    for args in READ_COMMANDS:
        res = cli(home, *args)
        assert "Traceback" not in res.stderr, (args, res.stderr)
        assert fingerprint(home) == before, args
    assert not sessions_db_path(home).exists()


# ----------------------------------------------------------------------------- migrate-out


@pytest.mark.parametrize("v23", [True, False])
def test_migrate_out_moves_the_archive_and_restores_hermes_file(tmp_path: Path, v23: bool) -> None:
    home, exp = hermes_home(tmp_path, v23=v23)
    state = home / "state.db"
    pristine = hermes_dump(state)
    contaminate(state)
    info = inspect_database(state)
    assert info.kind == "legacy"
    names = {n for _t, n in info.objects}
    assert len([n for n in names if n.startswith("hm_")]) == 28
    assert "idx_sessions_last_active" in names
    assert legacy_archive_notice(home) is not None
    contaminated = hermes_dump(state)
    original_bytes = state.read_bytes()

    with SessionStore(sessions_db_path(home)) as store:
        report = migrate_out(state, store)
        assert report.imported is not None
        assert report.imported.sessions_imported == len(exp.sessions)
        assert report.imported.messages_imported == exp.message_total
        assert len(report.dropped) == len(names)
        for sid, msgs in exp.messages.items():
            assert [m["content"] for m in store.get_messages(sid)] == [m["content"] for m in msgs]
        assert store.search_messages("部署")

    assert our_objects(sqlite3.connect(f"file:{state}?mode=ro&immutable=1", uri=True)) == []
    assert inspect_database(state).kind == "hermes"
    assert legacy_archive_notice(home) is None
    after = hermes_dump(state)
    assert after == contaminated  # Hermes' rows and objects: identical
    if v23:
        assert after == pristine  # nothing of the earlier release is left at all
    else:  # the L1 file keeps the columns Hermes' own schema adds later; rows otherwise equal
        for table in ("sessions", "messages"):
            assert len(after[table][1]) == len(pristine[table][1])
    backup = Path(report.backup)
    assert backup.name.startswith("state.db" + BACKUP_INFIX)
    assert backup.stat().st_mode & 0o777 == 0o600
    assert inspect_database(backup).kind == "legacy"
    assert backup.read_bytes()[100:] != b""  # a real copy, not a stub
    del original_bytes
    assert not Path(f"{state}-wal").exists() and not Path(f"{state}-shm").exists()

    with pytest.raises(MigrateOutError, match="nothing to migrate"):
        with SessionStore(sessions_db_path(home)) as store:
            migrate_out(state, store)

    # Hermes carries on; the next import continues from what migrate-out copied
    conn = sqlite3.connect(state)
    conn.execute(
        "INSERT INTO messages(session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
        ("20250306_080000_0a0b0c0d", "新的消息 after the migration", 1_741_200_000.0),
    )
    conn.commit()
    conn.close()
    with SessionStore(sessions_db_path(home)) as store:
        again = import_hermes_db(state, store)
        assert again.messages_imported == 1 and again.sessions_imported == 0
        assert store.get_messages("20250306_080000_0a0b0c0d")[-1]["content"].startswith("新的")


def test_migrate_out_cli_asks_and_reports(tmp_path: Path) -> None:
    home, exp = hermes_home(tmp_path)
    contaminate(home / "state.db")
    refused = cli(home, "sessions", "migrate-out")
    assert refused.returncode != 0 and "--yes" in refused.stderr
    assert inspect_database(home / "state.db").kind == "legacy"
    res = cli(home, "sessions", "migrate-out", "--yes", "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["migrated"] is True and data["imported"]["sessions_imported"] == len(exp.sessions)
    assert inspect_database(home / "state.db").kind == "hermes"
    res = cli(home, "sessions", "migrate-out", "--yes")
    assert res.returncode == 0 and "Nothing to migrate" in res.stdout


def test_sessions_end_cli(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with SessionStore(sessions_db_path(home)) as store:
        store.create_session("crashed-1", started_at=time.time() - 3 * 86400)
        store.create_session("crashed-2", started_at=time.time() - 3 * 86400)
        store.create_session("live", started_at=time.time())
    res = cli(home, "sessions", "end", "--stale", "24", "--json")
    assert res.returncode == 0, res.stderr
    assert sorted(json.loads(res.stdout)["ended"]) == ["crashed-1", "crashed-2"]
    res = cli(home, "sessions", "end", "live")
    assert res.returncode == 0 and "Ended session live" in res.stdout, res.stderr
    res = cli(home, "sessions", "end", "live")
    assert res.returncode == 0 and "already ended" in res.stdout
    res = cli(home, "sessions", "end", "li\x01ve")
    assert res.returncode != 0 and "control character" in res.stderr
    assert "Traceback" not in res.stderr
    res = cli(home, "sessions", "prune", "--older-than", "1", "--yes")
    assert res.returncode == 0 and "Pruned 2" in res.stdout, (res.stdout, res.stderr)
