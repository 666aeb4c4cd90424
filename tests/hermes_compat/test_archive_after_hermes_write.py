"""The real Hermes Agent opens our archive read-write; ours still opens it, losing nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes_agent import HermesAgent

from hermes_memory_sessions import SessionStore
from hermes_memory_sessions.storage import inspect_database


def test_archive_opens_after_hermes_session_db_wrote_to_it(
    hermes: HermesAgent, tmp_path: Path
) -> None:
    path = tmp_path / "our-home" / "hermes-memory" / "sessions.db"
    with SessionStore(path) as store:
        store.create_session("s1", source="cli", title="backup plan")
        store.append_message("s1", "user", "How do I rotate the postgres backups on the NAS?")
        store.append_message("s1", "assistant", "Use pg_dump nightly.")
    (tmp_path / "hermes-home").mkdir()
    seen = hermes.run(
        """
from pathlib import Path
from hermes_state import SessionDB
db = SessionDB(Path(path))
result = {"messages": db.message_count(), "sessions": db.session_count()}
db.close()
""",
        tmp_path / "hermes-home",
        path=str(path),
    )
    assert seen == {"messages": 2, "sessions": 1}
    tables = {
        str(r[0])
        for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type='table'")
    }
    assert {"messages_fts", "session_model_usage"} <= tables  # Hermes did write its schema
    assert inspect_database(path).kind == "archive"
    with SessionStore(path) as store:
        assert [m["role"] for m in store.get_messages("s1")] == ["user", "assistant"]
        assert store.search_messages("postgres")
        store.append_message("s1", "user", "and the offsite copy?")
        assert store.search_messages("offsite")
    again = hermes.run(
        """
from pathlib import Path
from hermes_state import SessionDB
db = SessionDB(Path(path), read_only=True)
result = [m["content"] for m in db.get_messages("s1")]
""",
        tmp_path / "hermes-home",
        path=str(path),
    )
    assert again[-1] == "and the offsite copy?"
