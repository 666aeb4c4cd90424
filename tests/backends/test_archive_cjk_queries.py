"""Chinese (and Japanese, Korean) questions typed the natural way, on every backend.

A run of Chinese characters without spaces is split into words, question words and
particles do not count as content, Traditional and Simplified Chinese find each other and
full-width letters and digits find their ASCII forms (and the other way round).
"""

from __future__ import annotations

import json

import pytest

from hermes_memory_sessions.tool import session_search

MESSAGES = [
    ("backup", "昨晚数据库备份失败了，磁盘满了"),
    ("slow", "这周慢查询太多，接口的延迟一直很高"),
    ("trad", "資料庫備份已經恢復，記得檢查軟體版本"),
    ("code", "报错码是ＡＢＣ１２３，重启后消失"),
    ("ascii", "the release tag is XYZ789 for this build"),
    ("cat", "我家的猫昨天把杯子打碎了"),
    ("ja", "東京の会議は来週の火曜日に変更されました"),
    ("ko", "데이터베이스 백업이 실패했어요"),
]


@pytest.fixture
def seeded(archive):
    ids = {}
    for n, (sid, text) in enumerate(MESSAGES):
        archive.create_session(sid, source="cli", started_at=1_700_000_000 + n)
        ids[sid] = archive.append_message(sid, "user", text, timestamp=1_700_000_000 + n)
    return archive, ids


def _sessions(archive, query: str) -> list[str]:
    """Sessions `session_search` discovery returns for ``query``, best first."""
    out = json.loads(session_search({"query": query, "limit": 5}, store=archive))
    assert out["success"], out
    return [r["session_id"] for r in out["results"]]


@pytest.mark.parametrize(
    ("query", "session"),
    [
        ("数据库备份失败", "backup"),
        ("备份失败", "backup"),
        ("怎么恢复数据库备份", "backup"),
        ("数据库备份为什么失败了？", "backup"),
        ("慢查询延迟", "slow"),
        ("接口延迟高吗", "slow"),
        ("猫打碎了什么", "cat"),
    ],
)
def test_chinese_question_without_spaces_finds_its_message(seeded, query, session):
    archive, _ = seeded
    assert session in _sessions(archive, query)


def test_implicit_and_over_words_not_one_substring(seeded):
    archive, ids = seeded
    # Neither query is a substring of the message; every word of it is.
    hits = archive.find_hits("数据库失败")
    assert hits is not None and [r["id"] for r in hits.rows] == [ids["backup"]]
    hits = archive.find_hits("慢查询延迟")
    assert hits is not None and [r["id"] for r in hits.rows] == [ids["slow"]]
    # A quoted run must still occur verbatim.
    assert archive.find_hits('"数据库失败"') is None
    assert archive.find_hits('"数据库备份失败"') is not None


def test_question_words_do_not_count_as_content(seeded):
    archive, _ = seeded
    # Only particles and question words: nothing to look for, no fallback over everything.
    assert _sessions(archive, "怎么了吗") == [] or "backup" not in _sessions(archive, "怎么了吗")
    # "怎么" is not required by the AND: the content words alone match.
    hits = archive.find_hits("怎么数据库备份")
    assert hits is not None


def test_traditional_and_simplified_find_each_other(seeded):
    archive, ids = seeded
    assert "backup" in _sessions(archive, "資料庫備份")  # Traditional query, Simplified text
    hits = archive.find_hits("数据库备份恢复")  # Simplified query, Traditional text
    assert hits is not None and ids["trad"] in [r["id"] for r in hits.rows]
    hits = archive.find_hits("软件版本")  # 軟體 is Taiwan's 软件
    assert hits is not None and [r["id"] for r in hits.rows] == [ids["trad"]]


def test_full_width_and_ascii_find_each_other(seeded):
    archive, ids = seeded
    hits = archive.find_hits("ＸＹＺ７８９")  # full-width query, ASCII text
    assert hits is not None and [r["id"] for r in hits.rows] == [ids["ascii"]]
    hits = archive.find_hits("ABC123")  # ASCII query, full-width text
    assert hits is not None and [r["id"] for r in hits.rows] == [ids["code"]]
    hits = archive.find_hits("ＡＢＣ１２３")
    assert hits is not None and [r["id"] for r in hits.rows] == [ids["code"]]


def test_japanese_and_korean(seeded):
    archive, _ = seeded
    assert "ja" in _sessions(archive, "東京の会議はいつですか")
    assert "ko" in _sessions(archive, "백업이 언제 실패했어요")


def test_deleting_folded_messages_keeps_the_index_exact(seeded):
    archive, ids = seeded
    archive.delete_session("trad")
    archive.delete_session("code")
    assert archive.find_hits("资料库") is None and archive.find_hits("软件版本") is None
    assert archive.find_hits("ABC123") is None
    hits = archive.find_hits("备份")
    assert hits is not None and [r["id"] for r in hits.rows] == [ids["backup"]]


def test_snippets_mark_the_words_in_their_own_script(seeded):
    archive, ids = seeded
    rows = archive.search_messages("数据库备份恢复", limit=5)
    trad = [r for r in rows if r["id"] == ids["trad"]]
    assert trad and ">>>資料庫<<<" in trad[0]["snippet"] and ">>>備份<<<" in trad[0]["snippet"]
    rows = archive.search_messages("ABC123", limit=5)
    assert rows and ">>>ＡＢＣ１２３<<<" in rows[0]["snippet"]
