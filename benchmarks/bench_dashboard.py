"""Benchmark of the web dashboard's pages (``hermes-memory dashboard``), in process.

Seeds a temporary home with ``--sessions`` sessions of ``--messages`` messages each (English
and Chinese text), then times each page through Starlette's test client — the whole request:
security checks, a fresh config read, the store calls and the template — and prints p50 and
p95 per page. No browser and no network.

    .venv/bin/python benchmarks/bench_dashboard.py [--sessions 2000] [--messages 20] [--runs 30]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from starlette.testclient import TestClient

from hermes_memory_builtin import MemoryStore
from hermes_memory_cli._context import Context
from hermes_memory_cli._dashboard._app import build_app
from hermes_memory_core.config import sessions_db_path
from hermes_memory_sessions.storage import SessionStore

TOKEN = "b" * 43
PORT = 9119


def seed(home: Path, sessions: int, messages: int) -> None:
    home.mkdir()
    store = MemoryStore(home / "memories")
    store.load_from_disk()
    for n in range(12):
        store.add("memory", f"Fact number {n}: the service listens on port {8000 + n}.")
    archive = SessionStore(sessions_db_path(home))
    now = time.time() - sessions * 60
    for s in range(sessions):
        sid = f"s{s:05d}"
        archive.create_session(sid, source="cli" if s % 3 else "telegram", started_at=now + s * 60)
        rows = []
        for m in range(messages):
            text = (
                f"数据库备份第 {m} 步：检查 pg_dump 的输出 {s}"
                if m % 4 == 0
                else f"Message {m} of session {s}: deploy the docker stack and check the logs"
            )
            rows.append({"role": "user" if m % 2 == 0 else "assistant", "content": text})
        archive.append_messages(sid, rows)
    archive.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        started = time.perf_counter()
        seed(home, args.sessions, args.messages)
        print(
            f"seeded {args.sessions:,} sessions x {args.messages} messages in "
            f"{time.perf_counter() - started:.1f} s"
        )
        ctx = Context(SimpleNamespace(home=str(home), profile=None))  # type: ignore[arg-type]
        app = build_app(ctx, token=TOKEN, host="127.0.0.1", port=PORT)
        with TestClient(app, base_url=f"http://127.0.0.1:{PORT}") as client:
            client.get(f"/memory?token={TOKEN}")  # log in (cookie)
            pages = [
                "/memory",
                "/pending",
                "/sessions",
                "/sessions?source=telegram&offset=500",
                "/sessions?q=docker%20logs",
                "/sessions?q=%E6%95%B0%E6%8D%AE%E5%BA%93",
                f"/sessions/s{args.sessions // 2:05d}",
                "/providers",
                "/archive",
                "/settings",
            ]
            print(f"{'page':<44} {'p50 ms':>8} {'p95 ms':>8}")
            for page in pages:
                assert client.get(page).status_code == 200, page  # warm up (and check)
                times = []
                for _ in range(args.runs):
                    t0 = time.perf_counter()
                    client.get(page)
                    times.append((time.perf_counter() - t0) * 1000)
                times.sort()
                p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
                print(f"{page:<44} {statistics.median(times):8.1f} {p95:8.1f}")


if __name__ == "__main__":
    main()
