"""``hermes-memory sessions search`` without an embedder (or with ``--lexical``) answers a
question typed the natural way as ``session_search`` does: when no message holds every word,
the messages holding some of its content words, and the heading says so. Through the
installed console script, on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from hermes_memory_core.config import sessions_db_path

SCRIPT = shutil.which("hermes-memory", path=str(Path(sys.executable).parent))

MESSAGES = [
    ("monitor", "user", "我們的監控系統每五分鐘檢查一次磁碟空間。"),
    ("monitor", "assistant", "收到，監控頻率是五分鐘。"),
    ("proxy", "user", "Last night the nginx reverse proxy returned 502 for an hour."),
    ("garden", "user", "番茄每天要浇两次水。"),
]


def _home(tmp_path: Path, backend: str, request) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "MEM0_"))}
    env.update(HERMES_HOME=str(home), HERMES_MEMORY_NO_PROGRESS="1", PYTHONIOENCODING="utf-8")
    if backend == "sqlite":
        from hermes_memory_sessions.storage import SessionStore

        store = SessionStore(sessions_db_path(home))
    else:
        from hermes_memory_postgres import PostgresSessionArchive

        dsn, owner = request.getfixturevalue("pg_dsn"), request.getfixturevalue("owner")
        (home / "config.yaml").write_text(
            f"sessions:\n  backend: postgres\npostgres:\n  owner: {json.dumps(owner)}\n"
        )
        env["HERMES_MEMORY_PG_DSN"] = dsn
        store = PostgresSessionArchive(dsn, owner=owner)
    try:
        for n, (sid, role, text) in enumerate(MESSAGES):
            if store.get_session(sid) is None:
                store.create_session(sid, source="cli", started_at=1_760_000_000 + n)
            store.append_message(sid, role, text, timestamp=1_760_000_000 + n)
    finally:
        store.close()
    return home, env


def _search(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    assert SCRIPT is not None
    return subprocess.run(
        [SCRIPT, "sessions", "search", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_question_falls_back_to_some_of_its_words(tmp_path, backend, request):
    _, env = _home(tmp_path, backend, request)
    # 多久 is in no message: before, the implicit AND found nothing at all.
    out = _search(env, "--json", "监控系统多久检查一次")
    assert out.returncode == 0, out.stderr
    hits = json.loads(out.stdout)
    assert [h["session_id"] for h in hits][:1] == ["monitor"]
    assert {h["match"] for h in hits} == {"any_terms"}
    # The Traditional text is marked where the Simplified words occur.
    assert ">>>監控<<<>>>系統<<<" in hits[0]["snippet"]
    human = _search(env, "--lexical", "why did nginx fail yesterday")
    assert human.returncode == 0 and "Traceback" not in human.stderr
    assert "No message holds every word" in human.stdout and "proxy" in human.stdout


def test_exact_matches_and_search_syntax_stay_exact(tmp_path, backend, request):
    _, env = _home(tmp_path, backend, request)
    hits = json.loads(_search(env, "--json", "监控系统检查").stdout)
    assert [h["session_id"] for h in hits] == ["monitor"] and "match" not in hits[0]
    # Operators, quotes and one content word: no fallback, nothing found.
    for query in ("监控 AND 多久", '"监控多久"', "多久"):
        out = _search(env, "--json", query)
        assert out.returncode == 0 and json.loads(out.stdout) == [], query
    plain = _search(env, "监控 AND 多久")
    assert "No messages match" in plain.stdout
