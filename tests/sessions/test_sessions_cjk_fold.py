"""The CJK index holds folded text; an archive indexed before (schema 3, unfolded
documents) is rebuilt on open by a versioned migration, without losing a message."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import hermes_memory_sessions.search._cjk as cjk
from hermes_memory_sessions.storage import _schema as schema
from hermes_memory_sessions.storage._store import SessionStore

TEXTS = ["資料庫備份失敗了", "错误码ＡＢＣ１２３", "plain English text", "数据库已经恢复"]


def _ids(store: SessionStore, query: str) -> list[int]:
    hits = store.find_hits(query)
    return [] if hits is None else [int(r["id"]) for r in hits.rows]


def _make_v3_archive(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """An archive as schema 3 left it: old triggers, unfolded CJK documents."""
    store = SessionStore(path)
    store.create_session("s", source="cli")
    ids = [store.append_message("s", "user", t) for t in TEXTS]
    store.close()
    conn = sqlite3.connect(path)
    with conn:
        for name in ("hm_fts_cjk_ai", "hm_fts_cjk_ad", "hm_fts_cjk_au"):
            conn.execute(f"DROP TRIGGER {name}")
        schema._run_script(conn, schema._FTS_DDL)  # recreates the schema-3 triggers
        conn.execute("INSERT INTO hm_fts_cjk(hm_fts_cjk) VALUES ('delete-all')")
        conn.execute("DELETE FROM hm_cjk_docs")
        with monkeypatch.context() as m:
            m.setattr(cjk, "fold", lambda text: text)  # the documents schema 3 wrote
            for mid, text in zip(ids, TEXTS, strict=True):
                if cjk._RUN_RE.search(text):
                    conn.execute(
                        "INSERT INTO hm_fts_cjk(rowid, grams) VALUES (?, ?)",
                        (mid, cjk.cjk_index_text(text)),
                    )
                    conn.execute("INSERT INTO hm_cjk_docs(id) VALUES (?)", (mid,))
        conn.execute("UPDATE state_meta SET value = '3' WHERE key = ?", (schema.META_SCHEMA_KEY,))
        conn.execute("DELETE FROM state_meta WHERE key = ?", (schema.META_CJK_FOLD_KEY,))
    conn.close()
    return ids


def test_schema_3_archive_is_reindexed_folded_on_open(tmp_path, monkeypatch):
    path = tmp_path / "a.db"
    ids = _make_v3_archive(path, monkeypatch)
    store = SessionStore(path)
    try:
        assert store.conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == len(TEXTS)
        meta = dict(store.conn.execute("SELECT key, value FROM state_meta").fetchall())
        assert meta[schema.META_SCHEMA_KEY] == str(schema.SCHEMA_VERSION)
        assert meta[schema.META_CJK_FOLD_KEY]
        assert _ids(store, "数据库备份") == [ids[0]]  # Simplified query, Traditional text
        assert _ids(store, "資料庫恢復") == [ids[3]]  # Traditional query, Simplified text
        assert _ids(store, "ABC123") == [ids[1]]  # ASCII query, full-width text
        # Removing documents made under the new rules leaves the index consistent.
        store.delete_session("s")
        assert _ids(store, "备份") == [] and _ids(store, "ABC123") == []
        store.conn.execute("INSERT INTO hm_fts_cjk(hm_fts_cjk) VALUES ('integrity-check')")
        left = store.conn.execute("SELECT COUNT(*) FROM hm_cjk_docs").fetchone()[0]
        assert left == 0
    finally:
        store.close()


def test_changed_fold_rules_rebuild_the_index(tmp_path):
    path = tmp_path / "b.db"
    store = SessionStore(path)
    store.create_session("s", source="cli")
    mid = store.append_message("s", "user", "資料庫備份失敗了")
    store.conn.execute(
        "UPDATE state_meta SET value = '0:older-rules' WHERE key = ?", (schema.META_CJK_FOLD_KEY,)
    )
    store.conn.commit()
    store.close()
    store = SessionStore(path)
    try:
        value = store.conn.execute(
            "SELECT value FROM state_meta WHERE key = ?", (schema.META_CJK_FOLD_KEY,)
        ).fetchone()[0]
        assert value != "0:older-rules"
        assert _ids(store, "数据库备份") == [mid]
        store.conn.execute("INSERT INTO hm_fts_cjk(hm_fts_cjk) VALUES ('integrity-check')")
    finally:
        store.close()
