"""Several real processes appending to one archive at once: nothing lost, never 'locked'."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hermes_memory_sessions.storage._store import SessionStore

WRITER = r"""
import sys
from hermes_memory_sessions.storage._store import SessionStore
path, worker, n, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
store = SessionStore(path, busy_timeout_ms=200, journal_mode=mode)
store.create_session(f"own-{worker}")
store.create_session("shared")
for i in range(n):
    store.append_message(f"own-{worker}", "user", f"worker {worker} message {i} 并发测试")
    store.append_messages("shared", [
        {"role": "user", "content": f"shared {worker} {i} question"},
        {"role": "assistant", "content": f"shared {worker} {i} answer 回答"},
    ])
    if i % 25 == 0:
        store.search_messages("并发")
store.close()
print("ok")
"""


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "n"), [("wal", 120), ("delete", 40)])
def test_processes_append_concurrently(tmp_path: Path, mode: str, n: int) -> None:
    path = tmp_path / "sessions.db"
    with SessionStore(path, journal_mode=mode) as first:
        assert first.journal_mode == mode
    workers = 4
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(w), str(n), mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(workers)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
        assert "locked" not in err.lower()
        assert out.strip() == "ok"
    with SessionStore(path) as store:
        for w in range(workers):
            msgs = store.get_messages(f"own-{w}")
            assert [m["content"] for m in msgs] == [
                f"worker {w} message {i} 并发测试" for i in range(n)
            ]
        shared = store.get_messages("shared")
        assert len(shared) == workers * n * 2
        assert store.get_session("shared")["message_count"] == workers * n * 2
        assert len(store.search_messages("并发", limit=1000)) == workers * n
        assert len(store.search_messages("question", limit=1000)) == workers * n
        ids = [m["id"] for m in shared]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
        for table in ("hm_fts_words", "hm_fts_cjk"):
            store.conn.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
