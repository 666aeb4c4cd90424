"""The write-behind queue survives a crash: a real process is SIGKILLed while RetainDB hangs
on its first write; a new process replays every journaled write, in order."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from retaindb_fake import KEY, FakeRetainDB

from hermes_memory_retaindb._journal import journal_files

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")

CHILD = textwrap.dedent(
    """
    import sys, time
    from hermes_memory_retaindb import RetainDBProvider

    home, url, mode, key = sys.argv[1:5]
    config = {"retaindb": {"api_key": key, "base_url": url, "project": "p",
                           "user_id": "alice", "timeout": 30, "recall_timeout": 30}}
    provider = RetainDBProvider(hermes_home=home, config=config, environ={})
    provider.initialize("crash-session", hermes_home=home)
    if mode == "write":
        for n in range(3):
            provider.sync_turn(f"第{n}轮: fact {n}", "ok")
        provider.on_memory_write("add", "user", "Prefers 中文")
        print("queued", flush=True)
        time.sleep(60)  # killed here, a write in flight
    else:
        provider.on_session_end([])
        provider.shutdown()
        print("replayed", flush=True)
    """
)


def run_child(home: Path, url: str, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(home), url, mode, KEY],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_sigkill_mid_write_then_a_new_process_replays(hermes_home: Path) -> None:
    with FakeRetainDB() as hung:
        hung.drop.set()  # every request is held: the first ingest stays in flight
        child = run_child(hermes_home, hung.url, "write")
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "queued", child.stderr.read()
        deadline = time.monotonic() + 10
        while not hung.calls("/v1/memory/ingest") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert hung.calls("/v1/memory/ingest"), "the first write never reached the server"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
        child.stdout.close()
        assert child.stderr is not None
        child.stderr.close()
    left = journal_files(hermes_home, "retaindb")
    assert len(left) == 4 and all(f.suffix == ".sending" for f in left)
    assert all(f.stat().st_mode & 0o777 == 0o600 for f in left)

    with FakeRetainDB() as up:
        replay = run_child(hermes_home, up.url, "replay")
        out, err = replay.communicate(timeout=30)
        assert replay.returncode == 0 and out.strip() == "replayed", err
        ingested = [r.body["messages"][0]["content"] for r in up.calls("/v1/memory/ingest")]
        assert ingested == ["第0轮: fact 0", "第1轮: fact 1", "第2轮: fact 2"]
        mirrored = [
            r.body["content"]
            for r in up.calls("/v1/memory")
            if r.method == "POST" and r.path == "/v1/memory"
        ]
        assert mirrored == ["Prefers 中文"]
        assert up.calls("/v1/memory/ingest")[0].body["session_id"] == "crash-session"
    assert journal_files(hermes_home, "retaindb") == []


def test_a_live_process_journal_is_not_taken_by_another_start(hermes_home: Path) -> None:
    """Two agents share a home: the second start must not steal the first one's writes."""
    with FakeRetainDB() as hung:
        hung.drop.set()
        child = run_child(hermes_home, hung.url, "write")
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "queued"
        try:
            with FakeRetainDB() as up:
                other = run_child(hermes_home, up.url, "replay")
                out, err = other.communicate(timeout=30)
                assert out.strip() == "replayed", err
                assert up.calls("/v1/memory/ingest") == []  # still the live process's writes
            assert len(journal_files(hermes_home, "retaindb")) == 4
        finally:
            child.kill()
            child.wait(10)
            child.stdout.close()
            assert child.stderr is not None
            child.stderr.close()
