"""The PostgreSQL ``cjk`` column follows the folding rules: rows indexed under older rules
(or before folding existed) are recomputed by `migrate`, and only that column changes."""

from __future__ import annotations

import psycopg
import pytest

from hermes_memory_postgres import PostgresSessionArchive
from hermes_memory_postgres import _schema as schema
from hermes_memory_postgres.archive._refold import CJK_FOLD_KEY


def _ids(store: PostgresSessionArchive, query: str) -> list[int]:
    hits = store.find_hits(query)
    return [] if hits is None else [int(r["id"]) for r in hits.rows]


# None: a release before folding (no version recorded); a string: older rules recorded.
@pytest.mark.parametrize("recorded", [None, "0:older-rules"])
def test_migrate_recomputes_cjk_documents_of_older_rules(schema_dsn, owner, recorded):
    store = PostgresSessionArchive(schema_dsn, owner=owner)
    try:
        store.create_session("s", source="cli")
        trad = store.append_message("s", "user", "資料庫備份失敗了")
        wide = store.append_message("s", "user", "错误码ＡＢＣ１２３")
        plain = store.append_message("s", "user", "plain English text")
        assert _ids(store, "数据库备份") == [trad]
        with psycopg.connect(schema_dsn, autocommit=True) as conn:
            # What an older release stored: no folding, no document for full-width text.
            conn.execute("UPDATE hm_messages SET cjk = NULL WHERE owner = %s", (owner,))
            conn.execute("DELETE FROM hm_index_meta WHERE key = %s", (CJK_FOLD_KEY,))
            if recorded is not None:
                conn.execute(
                    "INSERT INTO hm_index_meta(key, value) VALUES (%s, %s)",
                    (CJK_FOLD_KEY, recorded),
                )
        assert _ids(store, "数据库备份") == [] and _ids(store, "ABC123") == []
        with psycopg.connect(schema_dsn) as conn:
            schema.migrate(conn)
        assert _ids(store, "数据库备份") == [trad]
        assert _ids(store, "ABC123") == [wide]
        assert _ids(store, "plain English") == [plain]
        with psycopg.connect(schema_dsn) as conn:
            row = conn.execute(
                "SELECT value FROM hm_index_meta WHERE key = %s", (CJK_FOLD_KEY,)
            ).fetchone()
            assert row is not None and row[0]
            n = conn.execute(
                "SELECT COUNT(*) FROM hm_messages WHERE owner = %s", (owner,)
            ).fetchone()
            assert n is not None and n[0] == 3
    finally:
        store.close()
