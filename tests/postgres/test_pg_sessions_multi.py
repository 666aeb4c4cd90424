"""The PostgreSQL archive across owners, hosts and faults: tenancy (including through
session_search), two hosts sharing one database, concurrent writers, the spool, and a real
server restart in the middle of a run of turns."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import shlex
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from hermes_memory_postgres import ArchiveUnavailable, PostgresSessionArchive, mask_dsn
from hermes_memory_sessions.tool import session_search


def test_mask_dsn_never_shows_the_password():
    assert mask_dsn("postgresql://u:s3cret@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert "s3cret" not in mask_dsn("host=h user=u password=s3cret dbname=d")
    assert "s3cret" not in mask_dsn("postgresql://h/db?password=s3cret&x=1")
    assert "s3cret" not in repr(
        PostgresSessionArchive("postgresql://u:s3cret@127.0.0.1:1/d", owner="o")
    )


def test_tenancy_through_every_read(pg_dsn, owner):
    a = PostgresSessionArchive(pg_dsn, owner=owner + "-a")
    b = PostgresSessionArchive(pg_dsn, owner=owner + "-b")
    a.create_session("shared-id", title="Alpha plans")
    mid = a.append_message("shared-id", "user", "the launch code is zebra 北京")
    b.create_session("shared-id")  # the same id under another owner is another session
    b.append_message("shared-id", "user", "nothing to see")
    assert b.find_hits("zebra") is None and b.find_hits("北京") is None
    assert b.find_hits("zebra launch code", any_terms=True) is None
    assert b.message_session(mid) is None
    assert b.get_messages_around("shared-id", mid, 3)["window"] == []
    assert b.session_by_title("Alpha plans") is None
    assert [m["content"] for m in b.get_messages("shared-id")] == ["nothing to see"]
    assert b.stats()["messages"] == 1
    for args in (
        {"query": "zebra"},
        {"query": "北京"},
        {"query": "Alpha plans"},
        {"session_id": "shared-id", "around_message_id": mid},
        {},
    ):
        out = session_search(args, store=b)
        payload = json.loads(out)
        shown = json.dumps([payload.get("results"), payload.get("messages")], ensure_ascii=False)
        assert "launch" not in shown and "Alpha" not in shown and "北京" not in shown, out
    assert json.loads(session_search({"query": "zebra"}, store=a))["count"] == 1
    assert b.delete_session("shared-id") and a.get_session("shared-id") is not None
    a.close()
    b.close()


def test_spool_keeps_turns_while_unreachable_and_replays_in_order(pg_dsn, owner, tmp_path):
    spool = tmp_path / "spool"
    down = PostgresSessionArchive(
        "postgresql://nobody:x@127.0.0.1:1/none",
        owner=owner,
        spool_dir=spool,
        write_budget_s=0.3,
        read_budget_s=0.3,
    )
    down.create_session("s1", source="telegram")
    for i in range(5):
        assert down.append_messages("s1", [{"role": "user", "content": f"turn {i} 东京"}]) == []
    assert down.get_session("s1")["source"] == "telegram"  # known to this process
    down.end_session("s1", "session_end")
    assert down.spool_state()["pending"] == 7
    with pytest.raises(ArchiveUnavailable):
        down.list_sessions()
    down.close()

    up = PostgresSessionArchive(pg_dsn, owner=owner, spool_dir=spool)
    assert up.replay_spool() == 7
    assert up.replay_spool() == 0
    msgs = up.get_messages("s1")
    assert [m["content"] for m in msgs] == [f"turn {i} 东京" for i in range(5)]
    assert up.get_session("s1")["end_reason"] == "session_end"
    assert up.find_hits("东京") is not None
    up.close()


def test_replay_is_exactly_once_after_a_crash_mid_replay(pg_dsn, owner, tmp_path):
    from hermes_memory_postgres._spool import Spool

    arch = PostgresSessionArchive(pg_dsn, owner=owner, spool_dir=tmp_path)
    arch.create_session("s")
    sp: Spool = arch.spool
    sp.append(
        "k1",
        "append",
        {"session_id": "s", "messages": [{"role": "user", "content": "one", "timestamp": 1.0}]},
    )
    sp.append(
        "k2",
        "append",
        {"session_id": "s", "messages": [{"role": "user", "content": "two", "timestamp": 2.0}]},
    )
    # k1 was applied but the process died before the spool was truncated:
    arch._write(
        lambda conn: arch._apply(
            conn,
            "k1",
            "append",
            {"session_id": "s", "messages": [{"role": "user", "content": "one", "timestamp": 1.0}]},
        )
    )
    assert arch.replay_spool() == 2
    assert [m["content"] for m in arch.get_messages("s")] == ["one", "two"]
    arch.close()


HOST_SCRIPT = textwrap.dedent("""
    import json, sys
    from hermes_memory_core.config import load_config
    from hermes_memory_sessions.provider import SessionArchiveProvider
    from hermes_memory_builtin._provider import BuiltinMemoryProvider
    home, action = sys.argv[1], sys.argv[2]
    cfg = load_config(home)
    sessions = SessionArchiveProvider(hermes_home=home, config=cfg.raw)
    builtin = BuiltinMemoryProvider(hermes_home=home, config=cfg.raw)
    if action == "write":
        sessions.initialize("host-a-1", hermes_home=home, platform="gateway")
        builtin.initialize("host-a-1", hermes_home=home)
        sessions.sync_turn("Our staging database is called heron-7", "Noted: heron-7.")
        builtin.store.add("memory", "Staging database: heron-7")
        sessions.on_session_end([])
        print(json.dumps({"ok": True}))
    else:
        sessions.initialize("host-b-1", hermes_home=home, platform="gateway")
        builtin.initialize("host-b-1", hermes_home=home)
        found = json.loads(sessions.handle_tool_call("session_search", {"query": "heron-7"}))
        print(json.dumps({"found": [r["session_id"] for r in found.get("results", [])],
                          "prompt": builtin.system_prompt_block()}))
""")


def _home(path: Path, dsn: str, owner: str) -> Path:
    path.mkdir(parents=True)
    (path / "config.yaml").write_text(
        "memory:\n  backend: postgres\nsessions:\n  backend: postgres\n"
        f"postgres:\n  owner: {json.dumps(owner)}\n",
        encoding="utf-8",
    )
    return path


def _run_host(home: Path, action: str, dsn: str) -> dict:
    env = {**os.environ, "HERMES_MEMORY_PG_DSN": dsn, "HERMES_HOME": str(home)}
    out = subprocess.run(
        [sys.executable, "-c", HOST_SCRIPT, str(home), action],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_two_hosts_one_database(pg_dsn, owner, tmp_path):
    host_a = _home(tmp_path / "host-a", pg_dsn, owner)
    host_b = _home(tmp_path / "host-b", pg_dsn, owner)
    other = _home(tmp_path / "other-tenant", pg_dsn, owner + "-other")
    assert _run_host(host_a, "write", pg_dsn) == {"ok": True}
    seen = _run_host(host_b, "read", pg_dsn)
    assert seen["found"] == ["host-a-1"]
    assert "heron-7" in seen["prompt"]
    stranger = _run_host(other, "read", pg_dsn)
    assert stranger["found"] == [] and "heron-7" not in (stranger["prompt"] or "")
    assert not (host_a / "memories").exists()  # nothing went to local files


def _writer(dsn: str, owner: str, worker: int, turns: int, out) -> None:
    arch = PostgresSessionArchive(dsn, owner=owner)
    sid = f"w{worker}"
    arch.create_session(sid)
    errors = 0
    for i in range(turns):
        try:
            arch.append_message(sid, "user", f"writer {worker} turn {i} 数据 token{i % 7}")
        except Exception:  # counted: the assertion below shows any error
            errors += 1
    arch.close()
    out.put(("w", errors))


def _reader(dsn: str, owner: str, stop, out) -> None:
    arch = PostgresSessionArchive(dsn, owner=owner)
    errors = searches = 0
    while not stop.is_set():
        for q in ("token3 writer", "数据", "which writer said token5", "turn"):
            try:
                arch.find_hits(q, any_terms=q.startswith("which"), limit=5)
                searches += 1
            except Exception:
                errors += 1
    arch.close()
    out.put(("r", errors, searches))


@pytest.mark.slow
def test_eight_writers_500_turns_while_readers_search(pg_dsn, owner):
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    stop = ctx.Event()
    readers = [ctx.Process(target=_reader, args=(pg_dsn, owner, stop, out)) for _ in range(2)]
    writers = [ctx.Process(target=_writer, args=(pg_dsn, owner, w, 500, out)) for w in range(8)]
    for p in readers + writers:
        p.start()
    for p in writers:
        p.join(300)
    stop.set()
    for p in readers:
        p.join(60)
    results = [out.get(timeout=10) for _ in readers + writers]
    assert all(p.exitcode == 0 for p in readers + writers)
    assert sum(r[1] for r in results if r[0] == "w") == 0
    assert sum(r[1] for r in results if r[0] == "r") == 0
    assert all(r[2] > 0 for r in results if r[0] == "r")
    arch = PostgresSessionArchive(pg_dsn, owner=owner)
    assert arch.stats()["messages"] == 4000
    for w in range(8):
        assert [m["content"] for m in arch.get_messages(f"w{w}")][-1].startswith(
            f"writer {w} turn 499"
        )
    arch.close()


@pytest.mark.slow
def test_server_restart_mid_run_loses_no_turn(pg_dsn, owner, tmp_path):
    restart = os.environ.get("HERMES_MEMORY_TEST_PG_RESTART")
    if not restart:
        pytest.skip("set HERMES_MEMORY_TEST_PG_RESTART to the command that restarts the server")
    from hermes_memory_sessions.provider import SessionArchiveProvider

    config = {"sessions": {"backend": "postgres"}, "postgres": {"dsn": pg_dsn, "owner": owner}}
    provider = SessionArchiveProvider(hermes_home=tmp_path, config=config)
    provider.initialize("restart-1", hermes_home=str(tmp_path))
    done = threading.Event()

    def started_at() -> object:
        import psycopg

        with psycopg.connect(pg_dsn) as conn:
            return conn.execute("SELECT pg_postmaster_start_time()").fetchone()[0]

    before = started_at()

    def bounce() -> None:
        subprocess.run(shlex.split(restart), check=True, capture_output=True, timeout=120)
        done.set()

    slowest = 0.0
    for i in range(60):
        if i == 10:
            threading.Thread(target=bounce, daemon=True).start()
        started = time.monotonic()
        provider.sync_turn(f"question {i}", f"answer {i}")
        slowest = max(slowest, time.monotonic() - started)
        time.sleep(0.05)
    assert done.wait(120)
    assert started_at() != before  # the server really restarted during the run
    provider.sync_turn("after the restart", "still here")
    archive = provider.store
    archive.replay_spool()
    contents = [m["content"] for m in archive.get_messages("restart-1")]
    expected = [x for i in range(60) for x in (f"question {i}", f"answer {i}")]
    assert contents == [*expected, "after the restart", "still here"]
    assert slowest < 30  # bounded: a turn never waits on the database indefinitely
    provider.shutdown()


def test_concurrent_continuations_get_distinct_numbers(pg_dsn, owner):
    """Hosts numbering continuations of one lineage at once never clash on a title."""
    import threading

    seed = PostgresSessionArchive(pg_dsn, owner=owner)
    seed.create_session("root", title="long talk")
    seed.end_session("root", "compression")
    errors: list[BaseException] = []

    def host(n: int) -> None:
        arch = PostgresSessionArchive(pg_dsn, owner=owner)
        try:
            for i in range(5):
                arch.create_session(f"h{n}-{i}", parent_session_id="root")
        except BaseException as exc:  # shown by the assertion below
            errors.append(exc)
        finally:
            arch.close()

    threads = [threading.Thread(target=host, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    titles = sorted(s["title"] for s in seed.list_sessions(limit=None) if s["id"] != "root")
    assert sorted(titles, key=lambda t: int(t.split("#")[1])) == [
        f"long talk #{n}" for n in range(2, 22)
    ]
    seed.close()
