"""``doctor`` and ``provider status`` show the PostgreSQL backend: connection (DSN masked),
schema version and the local spool backlog, through the installed console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from hermes_memory_postgres import PostgresSessionArchive
from hermes_memory_postgres._schema import SCHEMA_VERSION
from hermes_memory_postgres._spool import Spool

SCRIPT = shutil.which("hermes-memory", path=str(Path(sys.executable).parent))
SECRET = "s3cr3t-Pa55"


def make_home(path: Path, owner: str) -> Path:
    path.mkdir(parents=True, mode=0o700)
    (path / "config.yaml").write_text(
        "memory:\n  backend: postgres\nsessions:\n  backend: postgres\n"
        f"postgres:\n  owner: {json.dumps(owner)}\n",
        encoding="utf-8",
    )
    return path


def cli(home: Path, dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_HOME": str(home), "HERMES_MEMORY_PG_DSN": dsn}
    return subprocess.run(
        [SCRIPT, "--home", str(home), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def checks_of(out: str) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for c in json.loads(out)["checks"]:
        found.setdefault(c["check"], []).append(c)
    return found


def test_doctor_and_status_show_connection_schema_and_spool(pg_dsn, owner, tmp_path):
    home = make_home(tmp_path / "home", owner)
    PostgresSessionArchive(pg_dsn, owner=owner).close()  # the schema exists
    doc = cli(home, pg_dsn, "--json", "doctor")
    assert doc.returncode == 0, doc.stdout + doc.stderr
    checks = checks_of(doc.stdout)
    [pg] = checks["postgres"]
    assert pg["status"] == "ok" and f"schema version {SCHEMA_VERSION}" in pg["detail"]
    assert owner in pg["detail"] and ":***@" in pg["detail"]
    assert checks["postgres:spool"][0]["status"] == "ok"

    # Two turn writes wait in this home's spool (as after an outage); one under another key.
    spool_dir = home / "hermes-memory" / "pg-spool"
    mine = Spool(spool_dir, f"sessions-{owner}")
    mine.append("k1", "create", {"session_id": "s"})
    mine.append("k2", "end", {"session_id": "s"})
    Spool(spool_dir, "sessions-old-key").append("k3", "create", {"session_id": "t"})
    doc = cli(home, pg_dsn, "--json", "doctor")
    spool = checks_of(doc.stdout)["postgres:spool"]
    assert [c["status"] for c in spool] == ["warn", "warn"]
    assert "2 turn write(s) wait" in spool[0]["detail"]
    assert "1 spooled write(s) under another owner key" in spool[1]["detail"]

    status = cli(home, pg_dsn, "--json", "provider", "status")
    assert status.returncode == 0, status.stderr
    state = json.loads(status.stdout)["postgres"]
    assert state["tiers"] == ["memory", "sessions"] and state["owner"] == owner
    assert state["reachable"] is True
    assert state["schema_version"] == state["expected_schema_version"] == SCHEMA_VERSION
    assert state["spool_pending"] == 2 and state["spool_other_owners"] == 1
    human = cli(home, pg_dsn, "provider", "status")
    assert "postgres  memory, sessions on" in human.stdout
    assert "connected, schema version" in human.stdout and "2 turn write(s)" in human.stdout
    assert mine.pending() == 2  # neither command replayed or changed anything


def test_unreachable_server_fails_doctor_without_showing_the_password(owner, tmp_path):
    home = make_home(tmp_path / "home", owner)
    dsn = f"postgresql://someone:{SECRET}@127.0.0.1:1/nowhere"
    doc = cli(home, dsn, "--json", "doctor")
    assert doc.returncode == 1
    [pg] = checks_of(doc.stdout)["postgres"]
    assert pg["status"] == "fail" and "unreachable" in pg["detail"]
    assert "someone:***@127.0.0.1:1" in pg["detail"]
    status = cli(home, dsn, "provider", "status")
    assert status.returncode == 0 and "UNREACHABLE" in status.stdout
    bad = cli(home, f"host=x password={SECRET} junk", "doctor")
    assert "not a valid libpq connection string" in bad.stdout
    for out in (doc, status, bad):
        assert SECRET not in out.stdout + out.stderr
        assert "Traceback" not in out.stderr


def test_missing_owner_is_named(pg_dsn, tmp_path):
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.yaml").write_text("sessions:\n  backend: postgres\n", encoding="utf-8")
    doc = cli(home, pg_dsn, "--json", "doctor")
    assert doc.returncode == 1
    [conf] = checks_of(doc.stdout)["config"]  # config.yaml validation names the key
    assert conf["status"] == "fail" and "postgres.owner" in conf["detail"]
