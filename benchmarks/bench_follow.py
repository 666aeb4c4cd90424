"""What noticing / following Hermes' state.db costs a CLI read command (issue 23).

Builds a Hermes-shaped ``state.db`` (sessions, messages, and the ``messages_fts`` table that
marks the file as Hermes') with N sessions of M messages, then measures on one machine:

* ``pending_hermes_import`` (the one-line notice of every read command) against an empty
  archive and against an archive that already has everything;
* ``follow_hermes`` when there is nothing new (what ``sessions.follow_hermes: true`` adds to
  every read after the first import), and the first, complete import.

    uv run --all-packages python benchmarks/bench_follow.py [--sessions 2000] [--messages 20]

Prints figures; asserts nothing. Reads nothing outside a temporary directory.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hermes_memory_sessions.importers._follow import follow_hermes, pending_hermes_import
from hermes_memory_sessions.storage._store import SessionStore


def build_state(path: Path, sessions: int, messages: int) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT,
            parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
            message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0, title TEXT);
        CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
            role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT,
            tool_name TEXT, timestamp REAL NOT NULL);
        CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
        CREATE VIRTUAL TABLE messages_fts USING fts5(content);
        """
    )
    t0 = 1_740_000_000.0
    for s in range(sessions):
        sid = f"20250301_{s:06d}_abcdef"
        conn.execute(
            "INSERT INTO sessions (id, source, started_at, message_count) VALUES (?, 'cli', ?, ?)",
            (sid, t0 + s * 60, messages),
        )
        conn.executemany(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
            [
                (sid, "user" if m % 2 == 0 else "assistant", f"message {m} of {sid}", t0 + m)
                for m in range(messages)
            ],
        )
    conn.commit()
    conn.close()


def timed(fn: Callable[[], object], runs: int = 5) -> str:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return f"median {statistics.median(samples):8.1f} ms  (min {min(samples):.1f}, n={runs})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        build_state(home / "state.db", args.sessions, args.messages)
        size = (home / "state.db").stat().st_size / 1e6
        print(f"state.db: {args.sessions:,} sessions x {args.messages} messages, {size:.1f} MB")
        print(
            f"pending check, no archive yet      {timed(lambda: pending_hermes_import(home, None))}"
        )
        with SessionStore(home / "hermes-memory" / "sessions.db") as store:
            empty = timed(lambda: pending_hermes_import(home, store))
            print(f"pending check, empty archive       {empty}")
            start = time.perf_counter()
            report = follow_hermes(home, store, time_budget_s=3600)
            first = time.perf_counter() - start
            assert report is not None
            print(
                f"first import (follow_hermes)       {first * 1000:8.1f} ms  "
                f"({report.sessions_imported:,} sessions, {report.messages_imported:,} messages)"
            )
            print(
                f"pending check, all imported        {timed(lambda: pending_hermes_import(home, store))}"
            )
            print(f"follow_hermes, nothing new         {timed(lambda: follow_hermes(home, store))}")


if __name__ == "__main__":
    main()
