"""The session archive beside Hermes' own: import, session_search shapes, Hermes reading ours.

Hermes writes the conversations (`scenario.py`) through ``hermes_state.SessionDB``; we import
them; both tools answer the same questions and the answers are compared. Deliberate
differences are named where they are allowed (see docs/explanation/differences-from-hermes.md).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hermes_agent import HermesAgent
from scenario import IDS, build_hermes_home

from hermes_memory_core.config import sessions_db_path
from hermes_memory_sessions import SessionStore, session_search
from hermes_memory_sessions.importers._hermes import import_hermes_db

SESSION_FIELDS = (
    "source",
    "title",
    "parent_session_id",
    "started_at",
    "ended_at",
    "end_reason",
    "model",
    "message_count",
    "tool_call_count",
)
MESSAGE_FIELDS = ("role", "content", "tool_name", "tool_call_id", "timestamp")
# Fields only we add to session_search answers, on purpose.
# data_note: ours says results are recorded data, never instructions (issue 21).
OUR_EXTRA_FIELDS = {"data_note", "fallback", "match"}
# Fields of Hermes' answers that depend on the store's ids or the host's clock, compared apart.
VOLATILE = {"id", "timestamp", "when", "started_at", "last_active", "match_message_id", "link"}


@pytest.fixture(scope="module")
def archives(
    hermes: HermesAgent, tmp_path_factory: pytest.TempPathFactory
) -> tuple[HermesAgent, Path, SessionStore]:
    """One Hermes home built by Hermes, and our archive imported from it."""
    root = tmp_path_factory.mktemp("compat")
    home = root / "hermes-home"
    build_hermes_home(hermes, home)
    store = SessionStore(root / "our-home" / "archive.db")
    import_hermes_db(home / "state.db", store)
    return hermes, home, store


def _hermes_search(hermes: HermesAgent, home: Path, **kwargs: Any) -> dict[str, Any]:
    return hermes.run(  # type: ignore[no-any-return]
        """
from hermes_state import SessionDB
from tools.session_search_tool import session_search
result = json.loads(session_search(db=SessionDB(), **kwargs))
""",
        home,
        kwargs=kwargs,
    )


def _ours(store: SessionStore, **kwargs: Any) -> dict[str, Any]:
    return json.loads(session_search(kwargs, store=store))  # type: ignore[no-any-return]


def _strip(value: Any) -> Any:
    """Drop volatile and our-only fields, recursively, for comparing shapes and content.

    Snippets are compared as text: ours mark CJK terms too (Hermes' CJK path has no
    markers) and carry no trailing padding (Hermes indexes ``content + ' ' + tool_name``).
    """
    if isinstance(value, dict):
        return {
            k: (_snippet_text(v) if k == "snippet" else _strip(v))
            for k, v in value.items()
            if k not in VOLATILE and k not in OUR_EXTRA_FIELDS
        }
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _snippet_text(snippet: Any) -> Any:
    if not isinstance(snippet, str):
        return snippet
    return snippet.replace(">>>", "").replace("<<<", "").strip()


def test_import_carries_every_session_field_with_hermes_meaning(
    archives: tuple[HermesAgent, Path, SessionStore],
) -> None:
    hermes, home, store = archives
    theirs = hermes.run(
        """
from hermes_state import SessionDB
db = SessionDB()
result = {}
for sid in ids:
    s = db.get_session(sid)
    msgs = db.get_messages(sid, include_inactive=True)
    result[sid] = {"session": {k: s[k] for k in fields},
                   "messages": [{k: m.get(k) for k in mfields} for m in msgs]}
""",
        home,
        ids=list(IDS.values()),
        fields=list(SESSION_FIELDS),
        mfields=list(MESSAGE_FIELDS),
    )
    for sid, want in theirs.items():
        got = store.get_session(sid)
        assert got is not None, sid
        assert {k: got.get(k) for k in SESSION_FIELDS} == want["session"], sid
        messages = store.get_messages(sid)
        assert [{k: m.get(k) for k in MESSAGE_FIELDS} for m in messages] == want["messages"], sid


def test_discovery_matches_hermes(archives: tuple[HermesAgent, Path, SessionStore]) -> None:
    """Subagent sessions hidden, cron after the rest, one hit per lineage, same windows."""
    hermes, home, store = archives
    for query in ("postgres backups", "canary", "备份", "grafana p95"):
        theirs = _hermes_search(hermes, home, query=query, limit=10)
        ours = _ours(store, query=query, limit=10)
        assert [r["session_id"] for r in ours["results"]] == [
            r["session_id"] for r in theirs["results"]
        ], query
        assert _strip(ours) == _strip(theirs), query


def test_title_query_answers_with_the_titled_session_first(
    archives: tuple[HermesAgent, Path, SessionStore],
) -> None:
    hermes, home, store = archives
    theirs = _hermes_search(hermes, home, query="deploy notes", limit=3)
    ours = _ours(store, query="deploy notes", limit=3)
    first_theirs, first_ours = theirs["results"][0], ours["results"][0]
    assert first_ours["matched_role"] == first_theirs["matched_role"] == "session_title"
    assert first_ours["session_id"] == first_theirs["session_id"] == IDS["CHILD"]
    assert first_ours["snippet"] == first_theirs["snippet"]


def test_browse_matches_hermes(archives: tuple[HermesAgent, Path, SessionStore]) -> None:
    """Compressed conversations appear as their latest continuation; subagents never."""
    hermes, home, store = archives
    theirs = _hermes_search(hermes, home, limit=10)
    ours = _ours(store, limit=10)
    # One difference on purpose (differences-from-hermes.md): a continuation's preview is
    # its first real message, not the compression summary Hermes shows.
    summaries = 0
    for mine, hers in zip(ours["results"], theirs["results"], strict=True):
        if str(hers.get("preview", "")).startswith("[CONTEXT"):
            summaries += 1
            assert not str(mine["preview"]).startswith("[CONTEXT")
            del mine["preview"], hers["preview"]
    assert summaries, "the fixture has a compressed conversation"
    assert _strip(ours) == _strip(theirs)


def test_scroll_matches_hermes(archives: tuple[HermesAgent, Path, SessionStore]) -> None:
    hermes, home, store = archives
    sid = IDS["CLI"]
    our_ids = [m["id"] for m in store.get_messages(sid)]
    their_ids = hermes.run(
        "from hermes_state import SessionDB\n"
        "result = [m['id'] for m in SessionDB().get_messages(sid)]",
        home,
        sid=sid,
    )
    theirs = _hermes_search(hermes, home, session_id=sid, around_message_id=their_ids[2], window=2)
    ours = _ours(store, session_id=sid, around_message_id=our_ids[2], window=2)
    assert _strip(ours) == _strip(theirs)


@pytest.mark.parametrize("name", ["CLI", "COMPACTED"])
def test_read_matches_hermes(archives: tuple[HermesAgent, Path, SessionStore], name: str) -> None:
    """``session_id`` alone reads the session (live messages only, Hermes' read shape)."""
    hermes, home, store = archives
    theirs = _hermes_search(hermes, home, session_id=IDS[name])
    ours = _ours(store, session_id=IDS[name])
    assert ours["mode"] == "read"
    assert _strip(ours) == _strip(theirs)


def test_profile_argument_reads_another_profile(tmp_path: Path) -> None:
    """``profile=`` reads that profile's archive read-only, as Hermes reads its state.db."""
    root = tmp_path / "home"
    other_path = sessions_db_path(root / "profiles" / "work")
    other = SessionStore(other_path)
    other.create_session("20261201_080000_0f0f0f", source="cli", title="work profile chat")
    other.append_message("20261201_080000_0f0f0f", "user", "The quarterly report is due Friday.")
    other.close()
    before = other_path.read_bytes()
    mine = SessionStore(sessions_db_path(root))

    def ask(**args: Any) -> dict[str, Any]:
        return json.loads(session_search(args, store=mine, home=root))  # type: ignore[no-any-return]

    found = ask(query="quarterly report", profile="work")
    assert [r["session_id"] for r in found["results"]] == ["20261201_080000_0f0f0f"]
    assert ask(query="quarterly report")["results"] == []  # the default profile has none
    read = ask(session_id="work/20261201_080000_0f0f0f")
    assert read["mode"] == "read" and read["messages"][0]["content"].startswith("The quarterly")
    for bad in ("nope", "../work", "a/b"):
        answer = ask(query="x", profile=bad)
        assert answer["success"] is False and answer["error"]
    assert other_path.read_bytes() == before


def test_hermes_reads_our_archive_read_only(
    archives: tuple[HermesAgent, Path, SessionStore], tmp_path: Path
) -> None:
    """A user going back to Hermes can point its SessionDB at our archive, read-only."""
    hermes, home, store = archives
    path = Path(store.path)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    seen = hermes.run(
        """
from pathlib import Path
from hermes_state import SessionDB
from tools.session_search_tool import session_search
db = SessionDB(Path(path), read_only=True)
result = {
    "listed": sorted(r["id"] for r in db.list_sessions_rich(limit=50)),
    "count": db.session_count(),
    "messages": db.message_count(),
    "resume": [m["content"] for m in db.get_messages_as_conversation(cli)],
    "browse": json.loads(session_search(db=db, limit=10))["success"],
    "title": db.get_session(cli)["title"],
}
""",
        tmp_path,
        path=str(path),
        cli=IDS["CLI"],
    )
    own = hermes.run(
        "from hermes_state import SessionDB\n"
        "db = SessionDB()\n"
        "result = {'listed': sorted(r['id'] for r in db.list_sessions_rich(limit=50)),"
        " 'count': db.session_count(), 'messages': db.message_count()}",
        home,
    )
    # What Hermes shows of our archive is what it shows of its own database.
    assert seen["listed"] == own["listed"]
    assert seen["count"] == own["count"] == len(IDS)
    assert seen["messages"] == own["messages"]
    assert seen["resume"][0] == "How do I rotate the postgres backups on the NAS?"
    assert seen["browse"] is True
    assert seen["title"] == "backup plan"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
