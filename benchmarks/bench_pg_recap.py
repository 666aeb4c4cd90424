"""PostgreSQL: the one-time re-index of rows indexed before the per-message index cap.

Fills a fresh schema with ``--messages`` short messages and ``--long`` messages of 40,000
characters, gives the long ones the whole-text index a release without the cap wrote, then
times the re-index that runs when the archive opens (`hermes_memory_postgres.archive._recap`)
and the check every later open pays. Needs ``--dsn`` or HERMES_MEMORY_PG_DSN (or
HERMES_MEMORY_TEST_PG_DSN); the schema is dropped at the end. Synthetic text only.

    uv run --all-packages python benchmarks/bench_pg_recap.py --messages 20000 --long 200
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from urllib.parse import quote

import psycopg

from hermes_memory_postgres import PostgresSessionArchive
from hermes_memory_postgres._text import tsvector_literal, word_tokens
from hermes_memory_postgres.archive._recap import INDEX_CAP_KEY, needs_recap, recap_long_rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=20_000)
    ap.add_argument("--long", type=int, default=200)
    ap.add_argument("--dsn", default=None)
    args = ap.parse_args()
    base = (
        args.dsn
        or os.environ.get("HERMES_MEMORY_PG_DSN")
        or os.environ.get("HERMES_MEMORY_TEST_PG_DSN")
    )
    if not base:
        raise SystemExit("set --dsn or HERMES_MEMORY_PG_DSN")
    name = f"bench_recap_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"'.encode())
    sep = "&" if "?" in base else "?"
    dsn = f"{base}{sep}options={quote(f'-csearch_path={name}')}"
    try:
        run(dsn, args.messages, args.long)
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{name}" CASCADE'.encode())


def run(dsn: str, messages: int, long: int) -> None:
    long_text = " ".join(f"w{i}" for i in range(8000)) + " tail"  # ~40,000 characters
    archive = PostgresSessionArchive(dsn, owner="bench")
    try:
        for s in range(max(1, messages // 500)):
            archive.create_session(f"s{s}", source="cli")
            archive.append_messages(
                f"s{s}", [{"role": "user", "content": f"short note {i} deploy"} for i in range(500)]
            )
        archive.create_session("long", source="cli")
        archive.append_messages("long", [{"role": "user", "content": long_text}] * long)
    finally:
        archive.close()
    whole = tsvector_literal(word_tokens(long_text))
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "UPDATE hm_messages SET words = %s::tsvector WHERE session_id = 'long'", (whole,)
        )
        conn.execute("DELETE FROM hm_index_meta WHERE key = %s", (INDEX_CAP_KEY,))
    with psycopg.connect(dsn) as conn:
        started = time.perf_counter()
        rewritten = recap_long_rows(conn)
        elapsed = time.perf_counter() - started
        started = time.perf_counter()
        for _ in range(100):
            needs_recap(conn)
            conn.commit()
        check_ms = (time.perf_counter() - started) * 10
    total = (messages // 500) * 500 + long
    print(f"rows {total:,} (long {long:,}): re-indexed {rewritten:,} in {elapsed:.2f} s")
    print(f"  {total / elapsed:,.0f} rows walked/s, {rewritten / elapsed:,.0f} long rows/s")
    print(f"  check at every later open: {check_ms:.2f} ms")
    print(f"  load: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
