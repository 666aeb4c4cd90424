"""Two deployments in one database, each in its own schema: an archive's catalog lookups
(the GIN pending lists a bulk import merges, the index sizes `stats` reports) resolve its
own indexes through its search path, never a same-named index of the other schema."""

from __future__ import annotations

from typing import Any

from hermes_memory_postgres import PostgresSessionArchive


def _pending_pages(archive: PostgresSessionArchive) -> int:
    """Pages of ``hm_messages_words``' pending list in the archive's schema (merged now)."""
    row: Any = archive.db.run(
        lambda c: c.execute(
            "SELECT gin_clean_pending_list(to_regclass('hm_messages_words')) AS n"
        ).fetchone()
    )
    return int(row["n"])


def test_a_bulk_import_leaves_another_schemas_indexes_alone(
    schema_dsn: str, other_schema_dsn: str, owner: str
) -> None:
    other = PostgresSessionArchive(other_schema_dsn, owner=owner)
    mine = PostgresSessionArchive(schema_dsn, owner=owner)
    try:
        other.create_session("o")
        for i in range(40):  # entries waiting in the other schema's pending list
            other.append_message("o", "user", f"pending words number {i} of the other one")
        batch = [({"id": "b"}, [{"role": "user", "content": "mine", "timestamp": 1.0}])]
        assert mine.bulk_import(batch) == 1
        # Before the fix the import merged the other schema's list too (and failed when
        # that index was another role's, or was being dropped by a test's teardown).
        assert _pending_pages(other) > 0
    finally:
        other.close()
        mine.close()


def test_index_sizes_are_this_schemas(schema_dsn: str, other_schema_dsn: str, owner: str) -> None:
    other = PostgresSessionArchive(other_schema_dsn, owner=owner)
    mine = PostgresSessionArchive(schema_dsn, owner=owner)
    try:
        other.create_session("o")
        other.append_messages(
            "o", [{"role": "user", "content": f"word{i} grows the index"} for i in range(2000)]
        )
        mine.create_session("m")
        mine.append_message("m", "user", "small")

        def own(archive: PostgresSessionArchive) -> dict[str, int]:
            rows: Any = archive.db.run(
                lambda c: c.execute(
                    "SELECT pg_relation_size(to_regclass('hm_messages_words')) AS w,"
                    " pg_relation_size(to_regclass('hm_messages_tools')) AS t,"
                    " pg_relation_size(to_regclass('hm_messages_cjk')) AS c"
                ).fetchone()
            )
            return {"words": int(rows["w"]), "tools": int(rows["t"]), "cjk": int(rows["c"])}

        assert own(other)["words"] != own(mine)["words"]
        assert mine.index_sizes() == own(mine)
        assert other.index_sizes() == own(other)
    finally:
        other.close()
        mine.close()
