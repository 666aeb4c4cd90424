"""Through the session provider, a session that starts while PostgreSQL is down keeps its
turns: they are spooled under ``<home>/hermes-memory/pg-spool`` (private directories) and
replayed when the server is back (issue 21)."""

from __future__ import annotations

import stat
from pathlib import Path

from hermes_memory_postgres import PostgresSessionArchive
from hermes_memory_sessions import SessionArchiveProvider

DOWN = "postgresql://nobody:x@127.0.0.1:1/none"


def test_a_session_the_server_never_saw_is_spooled_and_replayed(
    pg_dsn: str, owner: str, tmp_path: Path
) -> None:
    from hermes_memory_postgres import _factory as factory

    home = tmp_path / "home"
    config = {"sessions": {"backend": "postgres"}, "postgres": {"dsn": DOWN, "owner": owner}}
    provider = SessionArchiveProvider(hermes_home=home, config=config)
    try:
        provider.initialize("never-seen", hermes_home=str(home), platform="cli")
        provider.sync_turn("deploy on friday 周五", "noted")
        provider.sync_turn("and the backup on monday", "noted too")
    finally:
        provider.shutdown()
        pool = factory._POOLS.pop(DOWN, None)
        if pool is not None:
            pool.close()
    spool = home / "hermes-memory" / "pg-spool"
    for directory in (home / "hermes-memory", spool):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
    up = PostgresSessionArchive(pg_dsn, owner=owner, spool_dir=spool)
    try:
        assert up.replay_spool() == 3  # the session, then one append per turn
        contents = [m["content"] for m in up.get_messages("never-seen")]
        assert contents == [
            "deploy on friday 周五",
            "noted",
            "and the backup on monday",
            "noted too",
        ]
        assert up.spool_state()["pending"] == 0
    finally:
        up.close()


def test_a_switch_and_an_end_while_the_server_is_down_are_spooled(
    pg_dsn: str, owner: str, tmp_path: Path
) -> None:
    """The old session of a switch and the session that ends were never read by this
    process: their ends and the new session's parent are kept for the replay."""
    from hermes_memory_postgres import _factory as factory

    home = tmp_path / "home"
    spool = home / "hermes-memory" / "pg-spool"
    before = PostgresSessionArchive(pg_dsn, owner=owner)
    try:
        before.create_session("earlier", source="cli")
        before.append_message("earlier", "user", "recorded while the server was up")
    finally:
        before.close()
    config = {"sessions": {"backend": "postgres"}, "postgres": {"dsn": DOWN, "owner": owner}}
    provider = SessionArchiveProvider(hermes_home=home, config=config)
    try:
        provider.initialize("earlier", hermes_home=str(home), platform="cli")
        provider.on_session_switch("next", parent_session_id="earlier")
        provider.sync_turn("continued after compression", "ok")
        provider.on_session_end([])
    finally:
        provider.shutdown()
        pool = factory._POOLS.pop(DOWN, None)
        if pool is not None:
            pool.close()
    up = PostgresSessionArchive(pg_dsn, owner=owner, spool_dir=spool)
    try:
        up.replay_spool()
        earlier, following = up.get_session("earlier"), up.get_session("next")
        assert earlier is not None and earlier["end_reason"] == "compression"
        assert following is not None and following["parent_session_id"] == "earlier"
        assert following["end_reason"] == "session_end"
        contents = [m["content"] for m in up.get_messages("next")]
        assert contents == ["continued after compression", "ok"]
    finally:
        up.close()
