"""Conversations and readers shared by the PostgreSQL hybrid-recall tests (SQLite and
PostgreSQL archives filled alike, rankings compared)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hermes_memory_postgres import PostgresSessionArchive
from hermes_memory_sessions import SessionStore

__all__ = ["CONVERSATIONS", "QUESTIONS", "close_both", "fill_both", "filled_pair", "ranked"]

CONVERSATIONS = [
    ("music", ["I practised the violin for two hours yesterday", "Your bow arm must be tired!"]),
    ("trip", ["We booked flights to Lisbon for the first week of May", "Pack light layers"]),
    ("pet", ["My cat Tom knocked a glass off the table again", "Cats love gravity tests"]),
    ("work", ["The database migration finished overnight without errors", "Great news"]),
    ("food", ["I baked sourdough bread with rye flour this morning", "How was the crust?"]),
    ("zh-deploy", ["新版本定在周四晚上发布到生产环境", "好的，我会提前准备回滚方案"]),
    ("zh-health", ["最近膝盖疼，医生让我少跑步多游泳", "那就每周去两次泳池吧"]),
    ("zh-family", ["我女儿下个月就要上小学了", "时间过得真快"]),
    ("zh-money", ["这个月的房租和水电费一共花了四千块", "开销不小啊"]),
    ("zh-study", ["我在准备日语能力考试，每天背五十个单词", "坚持下去一定能过"]),
]
QUESTIONS = [
    "which musical instrument does the user play?",
    "where are we travelling on holiday?",
    "what did the kitten break?",
    "database migration",
    "上线时间是哪天？",
    "医生给了什么运动建议？",
    "每月住房开支多少？",
    "备份",
]


def fill_both(store: Any) -> None:
    for i, (sid, (user, assistant)) in enumerate(CONVERSATIONS):
        store.create_session(sid, source="cli", started_at=1_700_000_000 + i * 3600)
        store.append_messages(
            sid,
            [
                {"role": "user", "content": user, "timestamp": 1_700_000_000 + i * 3600 + 1},
                {
                    "role": "assistant",
                    "content": assistant,
                    "timestamp": 1_700_000_000 + i * 3600 + 2,
                },
            ],
        )


def ranked(store: Any, query: str) -> list[tuple[str, str, str]]:
    rows = store.discover_messages(query, limit=10)
    return [(str(r["session_id"]), str(r["role"]), str(r["match"])) for r in rows]


def close_both(lite: Any, pg: Any) -> None:
    """Close the SQLite archive, delete the PostgreSQL owner's rows, close it."""
    lite.close()
    for table in ("hm_vectors", "hm_messages", "hm_sessions", "hm_term_df"):
        pg.db.run(lambda c, t=table: c.execute(f"DELETE FROM {t} WHERE owner = %s", (pg.owner,)))
    pg.close()


@contextlib.contextmanager
def filled_pair(
    path: Path, dsn: str, owner: str, fill: Callable[[Any], None]
) -> Iterator[tuple[SessionStore, PostgresSessionArchive]]:
    """A SQLite archive at ``path`` and a PostgreSQL one of ``owner``, both filled by
    ``fill``; closed (the owner's rows deleted) afterwards."""
    lite = SessionStore(path)
    pg = PostgresSessionArchive(dsn, owner=owner)
    try:
        fill(lite)
        fill(pg)
        yield lite, pg
    finally:
        close_both(lite, pg)
